"""``python -m tuwviz.cli``: the ``tuwviz`` command."""
import sys

from .entry import main

sys.exit(main())
