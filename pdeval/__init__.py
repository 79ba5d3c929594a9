"""pdeval: IR evaluation with incomplete relevance judgments as a pandas workflow."""

from . import accessor, errors, frames
from .evaluation import evaluate, summarize
from .io import read_qrels, read_run, write_qrels, write_run
from .measures import available as available_measures
from .measures import parse as parse_measure

__version__ = "0.1.0"
