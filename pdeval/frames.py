"""Canonical frame columns, alias renaming, validation and frame-kind detection.

pdeval works on three kinds of long-format frames (see the README, "Frames"):

======  ==========================================  ============================================
kind    required columns                            optional columns
======  ==========================================  ============================================
run     ``query_id`` (str), ``doc_id`` (str),       ``run`` (system name, default ``"run"``),
        ``score`` (float)                           ``rank`` (ignored), extra keys (``by=``)
qrels   ``query_id``, ``doc_id``, ``relevance``     variant keys such as ``level``, ``sample``
        (int; ``-1`` pooled but unjudged)
result  ``measure``, ``value`` and key columns      ``level``, ``sample``, ``by`` keys
======  ==========================================  ============================================

Aliases used by PyTerrier, ir_measures, ranx and trec tools are renamed once, here, at the
boundary; inside the package only the canonical names exist.
"""

from __future__ import annotations

import warnings
from typing import Iterable, Literal, Optional, Sequence

import numpy as np
import pandas as pd

from .errors import DuplicateError, PdevalWarning, SchemaError

RUN_REQUIRED = ("query_id", "doc_id", "score")
QRELS_REQUIRED = ("query_id", "doc_id", "relevance")
RESULT_REQUIRED = ("measure", "value")

#: alias -> canonical column name
ALIASES = {
    "qid": "query_id",
    "topic": "query_id",
    "query": None,  # PyTerrier's query text: never an id (ignored, listed to be explicit)
    "docno": "doc_id",
    "docid": "doc_id",
    "rel": "relevance",
    "label": "relevance",
    "system": "run",
    "tag": "run",
    "run_id": "run",
    "iprob": "inclusion_prob",  # ir_datasets' TrecPrel field
}

#: qrels columns that never name a variant (the TREC "iteration" column, ir_measures' name for it)
QRELS_IGNORED = ("iteration", "iter", "Q0")

#: qrels columns that describe how a document was sampled for judging (information, not variant keys):
#: the stratum of ``sample_eval.pl`` qrels and the inclusion probability of statAP prels
QRELS_SAMPLING = ("stratum", "inclusion_prob")

#: qrels columns that are variant keys of a reduction experiment, in this order
VARIANT_ORDER = ("level", "sample")

DuplicatePolicy = Literal["error", "first", "max"]

#: the value pdeval uses inside arrays for a document absent from the qrels
ABSENT = -2
#: the value pdeval uses inside arrays for a document in the pool but not judged
POOLED = -1


def canonicalize(frame: pd.DataFrame) -> pd.DataFrame:
    """Return ``frame`` with alias columns renamed to their canonical names.

    An alias is renamed only when the canonical column is not already present, so a
    PyTerrier frame with both ``qid`` and ``query`` keeps ``query`` as text.
    """
    if not isinstance(frame, pd.DataFrame):
        raise SchemaError(f"expected a pandas DataFrame, got {type(frame).__name__}")
    rename = {}
    present = set(frame.columns)
    for column in frame.columns:
        target = ALIASES.get(column) if isinstance(column, str) else None
        if target is not None and target not in present and target not in rename.values():
            rename[column] = target
    return frame.rename(columns=rename) if rename else frame


def frame_kind(frame: pd.DataFrame) -> Optional[str]:
    """Tell what a frame is: ``"result"``, ``"run"``, ``"qrels"`` or ``None``."""
    columns = set(canonicalize(frame).columns)
    if set(RESULT_REQUIRED) <= columns:
        return "result"
    if set(RUN_REQUIRED) <= columns:
        return "run"
    if set(QRELS_REQUIRED) <= columns:
        return "qrels"
    return None


def _require(frame: pd.DataFrame, required: Sequence[str], kind: str) -> None:
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise SchemaError(
            f"the {kind} frame lacks column(s) {missing}; it has {list(frame.columns)}. "
            f"A {kind} frame needs {list(required)} (aliases such as qid, docno, rel are accepted)."
        )


def _as_id(series: pd.Series) -> pd.Series:
    """Ids are strings; categorical string ids are kept categorical (they are faster)."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        categories = series.cat.categories
        if not (pd.api.types.is_string_dtype(categories.dtype) or categories.dtype == object):
            series = series.cat.rename_categories(categories.astype(str))
        return series
    if pd.api.types.is_string_dtype(series.dtype) and series.dtype != object:
        return series
    if series.isna().any():
        bad = int(series.isna().sum())
        raise SchemaError(f"column {series.name!r} has {bad} missing id(s)")
    return series.astype(str)


def _first_rows(frame: pd.DataFrame, mask: np.ndarray, columns: Sequence[str], n: int = 3) -> str:
    rows = frame.loc[mask, list(columns)].head(n)
    return "; ".join(
        ", ".join(f"{c}={v!r}" for c, v in zip(columns, values)) for values in rows.itertuples(index=False)
    )


def _numeric(frame: pd.DataFrame, column: str, kind: str, keys: Sequence[str]) -> pd.Series:
    series = frame[column]
    converted = pd.to_numeric(series, errors="coerce")
    bad = converted.isna().to_numpy() & ~series.isna().to_numpy()
    if bad.any():
        raise SchemaError(
            f"the {kind} frame has {int(bad.sum())} non-numeric value(s) in {column!r}, first: "
            f"{_first_rows(frame.assign(**{column: series}), bad, list(keys) + [column])}"
        )
    return converted


def drop_duplicates(
    frame: pd.DataFrame,
    keys: Sequence[str],
    policy: DuplicatePolicy,
    *,
    kind: str,
    value: str,
) -> pd.DataFrame:
    """Apply the duplicate policy of MEASURES.md ("Duplicates") to ``frame``.

    ``"error"`` raises :class:`DuplicateError` naming the first repeated keys and how many
    rows repeat; ``"first"`` keeps the first row of each key and ``"max"`` the row with the
    highest ``value``; both warn with the number of rows dropped.
    """
    if policy not in ("error", "first", "max"):
        raise SchemaError(f"duplicates must be 'error', 'first' or 'max', not {policy!r}")
    repeated = frame.duplicated(list(keys), keep="first").to_numpy()
    count = int(repeated.sum())
    if count == 0:
        return frame
    if policy == "error":
        shown = _first_rows(frame, repeated, keys)
        hint = "conflicting judgments" if kind == "qrels" else "duplicate documents"
        raise DuplicateError(
            f"the {kind} has {count} repeated row(s) for the same ({', '.join(keys)}) ({hint}), "
            f"first: {shown}. Pass duplicates='first' or 'max' to keep one row per key."
        )
    if policy == "max":
        order = frame[value].to_numpy().argsort(kind="stable")[::-1]
        kept = frame.iloc[order].drop_duplicates(list(keys), keep="first").sort_index()
    else:
        kept = frame.loc[~repeated]
    warnings.warn(
        f"{count} duplicate {kind} row(s) dropped (policy {policy!r}, keys {list(keys)})",
        PdevalWarning,
        stacklevel=3,
    )
    return kept


def as_run(
    frame: pd.DataFrame,
    *,
    by: Iterable[str] = (),
    duplicates: Optional[DuplicatePolicy] = "error",
) -> pd.DataFrame:
    """Validate a run frame and return it with canonical columns.

    Adds ``run="run"`` when there is no run column; ``by`` names extra key columns (a swept
    parameter) that must be present. Raises :class:`SchemaError` for missing columns,
    non-numeric or NaN scores, and (by default) duplicate documents. ``duplicates=None``
    skips the duplicate check, for callers that check it faster on integer codes.
    """
    frame = canonicalize(frame)
    by = list(by)
    _require(frame, list(RUN_REQUIRED) + by, "run")
    columns = {}
    if "run" not in frame.columns:
        columns["run"] = pd.Series("run", index=frame.index, dtype=object)
    columns["query_id"] = _as_id(frame["query_id"])
    columns["doc_id"] = _as_id(frame["doc_id"])
    if "run" in frame.columns:
        columns["run"] = _as_id(frame["run"])
    score = frame["score"]
    if not pd.api.types.is_float_dtype(score.dtype) or score.dtype != np.float64:
        score = _numeric(frame, "score", "run", ["run", "query_id", "doc_id"] if "run" in frame else ["query_id", "doc_id"]).astype(np.float64)
    columns["score"] = score
    out = frame.assign(**columns)
    nan = out["score"].isna().to_numpy()
    if nan.any():
        raise SchemaError(
            f"the run has {int(nan.sum())} NaN score(s), first: "
            f"{_first_rows(out, nan, ['run', 'query_id', 'doc_id'])}"
        )
    if duplicates is None:
        return out
    return drop_duplicates(out, ["run", *by, "query_id", "doc_id"], duplicates, kind="run", value="score")


def variant_keys(qrels: pd.DataFrame) -> list[str]:
    """The columns of a (canonical) qrels frame that name a qrels variant.

    Every column other than ``query_id``, ``doc_id``, ``relevance``, the TREC iteration
    column and the sampling columns (``stratum``, ``inclusion_prob``) is a variant key;
    ``level`` and ``sample`` come first.
    """
    extra = [c for c in qrels.columns if c not in QRELS_REQUIRED + QRELS_IGNORED + QRELS_SAMPLING]
    ordered = [c for c in VARIANT_ORDER if c in extra]
    return ordered + [c for c in extra if c not in ordered]


def as_qrels(frame: pd.DataFrame, *, duplicates: Optional[DuplicatePolicy] = "error") -> pd.DataFrame:
    """Validate a qrels frame and return it with canonical columns.

    Relevance must be integral (``-1`` or any negative value: pooled but not judged). A
    repeated (variant keys, query_id, doc_id) raises :class:`DuplicateError` unless a policy
    is chosen; ``duplicates=None`` skips the check (for callers that check integer codes).
    """
    frame = canonicalize(frame)
    _require(frame, QRELS_REQUIRED, "qrels")
    relevance = frame["relevance"]
    if not pd.api.types.is_integer_dtype(relevance.dtype):
        numeric = _numeric(frame, "relevance", "qrels", ["query_id", "doc_id"])
        values = numeric.to_numpy(dtype=np.float64, na_value=np.nan)
        bad = np.isnan(values) | (values != np.round(values))
        if bad.any():
            raise SchemaError(
                f"the qrels have {int(bad.sum())} relevance value(s) that are not integers, first: "
                f"{_first_rows(frame, bad, ['query_id', 'doc_id', 'relevance'])}"
            )
        relevance = numeric.astype(np.int64)
    out = frame.assign(
        query_id=_as_id(frame["query_id"]),
        doc_id=_as_id(frame["doc_id"]),
        relevance=relevance.astype(np.int64),
    )
    if duplicates is None:
        return out
    keys = [*variant_keys(out), "query_id", "doc_id"]
    return drop_duplicates(out, keys, duplicates, kind="qrels", value="relevance")


def as_result(frame: pd.DataFrame) -> pd.DataFrame:
    """Validate a result frame (``measure``, ``value`` and key columns)."""
    frame = canonicalize(frame)
    _require(frame, RESULT_REQUIRED, "result")
    return frame


def result_keys(result: pd.DataFrame) -> list[str]:
    """The key columns of a result frame: everything but ``measure`` and ``value``."""
    return [c for c in result.columns if c not in RESULT_REQUIRED]
