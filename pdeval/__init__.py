"""pdeval: IR evaluation with incomplete relevance judgments as a pandas workflow."""

from . import errors, frames

__version__ = "0.1.0"
