"""The ``tuwviz`` command line: one module per subcommand.

=====================  ==============================================================
module                 what it holds
=====================  ==============================================================
``entry``              :func:`main`, the top-level parser, errors and signals
``options``            what the subcommands share: argument types, common options
``main_<command>``     one subcommand: ``configure_parser(sub)`` and ``execute(args)``
=====================  ==============================================================

A new subcommand is one ``main_<command>.py`` and one entry of
:data:`tuwviz.cli.entry.COMMANDS`.
"""
from .entry import COMMANDS, build_parser, main

__all__ = ["COMMANDS", "build_parser", "main"]
