"""ir_datasets (and ir_measures) records as pdeval frames.

``dataset.qrels_iter()``, ``dataset.scoreddocs_iter()`` and ir_measures' readers yield
named tuples; :func:`records_to_frame` turns any iterable of them into a frame whose
columns are the records' fields, so ``pdeval.evaluate(dataset.scoreddocs_iter(),
dataset.qrels_iter(), ...)`` and ``pdeval.read_qrels(dataset.qrels_iter())`` need no
conversion by hand.

Field names become pdeval's columns: ``query_id``, ``doc_id``, ``relevance``, ``score``
are pdeval's own names; ``iteration`` is ignored as in a qrels file; ``TrecPrel``'s
inclusion probability ``iprob`` becomes ``inclusion_prob`` (the column pdeval's sampling
estimators read) and its ``method`` (which of the track's two selection methods chose the
document) is dropped.
"""

from __future__ import annotations

import itertools
from typing import Any, Iterable

import pandas as pd

from ..errors import SchemaError

#: record field -> pdeval column; None drops the field
FIELDS = {"iprob": "inclusion_prob", "method": None}


def records_to_frame(records: Iterable[Any]) -> pd.DataFrame:
    """A frame with one row per record and one column per field of the (named tuple) records.

    Raises :class:`~pdeval.errors.SchemaError` for an empty iterable or items that are not
    named tuples.
    """
    iterator = iter(records)
    try:
        first = next(iterator)
    except StopIteration:
        raise SchemaError("the iterable of records is empty: no run or qrels rows") from None
    fields = getattr(type(first), "_fields", None)
    if not fields:
        raise SchemaError(
            f"expected records with named fields (ir_datasets' TrecQrel, TrecPrel, GenericScoredDoc, "
            f"ir_measures' Qrel/ScoredDoc ...), got {type(first).__name__}"
        )
    frame = pd.DataFrame.from_records(list(itertools.chain([first], iterator)), columns=list(fields))
    keep = [f for f in fields if FIELDS.get(f, f) is not None]
    return frame[keep].rename(columns={f: FIELDS[f] for f in keep if f in FIELDS})


__all__ = ["records_to_frame"]
