"""``python -m tuwviz.kernels`` (``make kernels``): build the C kernels, print the library."""
import sys

from .build import build
from ..errors import TuwvizError


def main() -> int:
    """Build the library and print its path."""
    try:
        print(build())
    except TuwvizError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


sys.exit(main())
