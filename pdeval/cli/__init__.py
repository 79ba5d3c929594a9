"""The ``pdeval`` command."""

from pdeval.cli.commands import main

__all__ = ["main"]
