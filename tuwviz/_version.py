"""tuwviz's version: one place, read by the package, pyproject.toml and every result row."""
__version__ = "0.1.0"
