"""Canonical frame columns, alias renaming, validation and frame-kind detection.

pdeval works on three kinds of long-format frames (see the docs, guide/frames.md):

======  ==========================================  ============================================
kind    required columns                            optional columns
======  ==========================================  ============================================
run     ``query_id`` (str), ``doc_id`` (str),       ``run`` (system name, default ``"run"``),
        ``score`` (float)                           ``rank`` (ignored), extra keys (``by=``)
qrels   ``query_id``, ``doc_id``, ``relevance``     variant keys (``level``, ``sample``, ``depth``
        (int; ``-1`` pooled but unjudged)           and ``variants=``), information columns
                                                    (:data:`QRELS_RESERVED`)
result  ``measure``, ``value`` and key columns      ``level``, ``sample``, ``by`` keys
======  ==========================================  ============================================

Aliases used by PyTerrier, ir_measures, ranx and trec tools are renamed once, here, at the
boundary, by the precedence of :data:`PRECEDENCE` (never by column order); inside the package
only the canonical names exist. Ids are normalised or refused here (:func:`_as_id`), values
checked, and extra qrels columns given their one meaning (:func:`as_qrels`).
"""

from __future__ import annotations

import numbers
from typing import Iterable, Literal, Optional, Sequence

import numpy as np
import pandas as pd

from pdeval.errors import ColumnWarning, DuplicateError, IdWarning, PdevalWarning, SchemaError, warn
from pdeval.common.arrow import arrow_chunks, is_string_chunk, string_buffers, take_sorted
from pdeval.frames.systems import several_systems, unknown_run_columns

RUN_REQUIRED = ("query_id", "doc_id", "score")
QRELS_REQUIRED = ("query_id", "doc_id", "relevance")
RESULT_REQUIRED = ("measure", "value")

#: canonical column -> the names accepted for it, highest precedence first. When a frame has
#: several of them the first present wins (never the column order) and the others are dropped:
#: a PyTerrier frame (``qid, docid, docno, ...``) is evaluated on ``docno``, not on Terrier's
#: integer ``docid``. ``q_id`` is ranx's name. PyTerrier's ``query`` text is an extra column.
PRECEDENCE = {
    "query_id": ("query_id", "qid", "q_id", "topic"),
    "doc_id": ("doc_id", "docno", "docid"),
    "relevance": ("relevance", "rel", "label"),
    "run": ("run", "system", "tag", "run_id"),
    "inclusion_prob": ("inclusion_prob", "iprob"),  # ir_datasets' TrecPrel field
}

#: alias -> canonical column name
ALIASES = {alias: canonical for canonical, names in PRECEDENCE.items() for alias in names[1:]}

#: qrels columns that are information, never a variant: the TREC iteration column (and
#: ir_measures' name for it), sampling information and label provenance
QRELS_RESERVED = ("iteration", "iter", "Q0", "stratum", "inclusion_prob", "source")

#: qrels variant keys that pdeval itself produces (reduce: level, sample; pool / mixed_pool:
#: depth, sample); other variant keys must be named with ``variants=[...]``
PRODUCED_VARIANTS = ("level", "sample", "depth", "label_set", "strategy", "budget")

#: variant keys that come first in results, in this order (the others follow in column order)
VARIANT_ORDER = ("level", "sample")

DuplicatePolicy = Literal["error", "first", "max"]

#: the value pdeval uses inside arrays for a document absent from the qrels
ABSENT = -2
#: the value pdeval uses inside arrays for a document in the pool but not judged
POOLED = -1

#: the whitespace stripped from ids (trec_eval splits its input lines on it)
WHITESPACE = " \t\n\r\v\f"


def canonicalize(frame: pd.DataFrame) -> pd.DataFrame:
    """Return ``frame`` with its columns renamed to the canonical names by :data:`PRECEDENCE`.

    Of the names accepted for one canonical column, the one of highest precedence present is
    renamed and the others are dropped. A name that appears twice among the columns cannot be
    settled by precedence and raises :class:`SchemaError`.
    """
    if not isinstance(frame, pd.DataFrame):  # Polars, Arrow, ranx, ir_datasets records
        from pdeval.frames.foreign import to_frame

        frame = to_frame(frame)
    rename, drop = canonical_names(frame.columns)
    if drop:
        frame = frame.drop(columns=drop)
    return frame.rename(columns=rename) if rename else frame


def canonical_names(columns: Iterable) -> tuple[dict, list]:
    """The renaming and the dropped columns that :func:`canonicalize` applies to ``columns``."""
    columns = list(columns)
    relevant = {name for names in PRECEDENCE.values() for name in names}
    repeated = sorted({c for c in columns if c in relevant and columns.count(c) > 1}, key=str)
    if repeated:
        raise SchemaError(
            f"the frame has several columns named {repeated}; pdeval cannot tell which one to use. "
            "Rename or drop the extra column(s)."
        )
    rename, drop = {}, []
    for canonical, names in PRECEDENCE.items():
        present = [name for name in names if name in columns]
        if present:
            if present[0] != canonical:
                rename[present[0]] = canonical
            drop.extend(present[1:])
    return rename, drop


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


def require_kind(frame: pd.DataFrame, kind: str, by: Sequence[str] = ()) -> None:
    """A :class:`SchemaError` unless the canonical columns of ``frame`` make a ``kind`` frame
    (``'run'``, ``'qrels'`` or ``'result'``); it names the missing columns, and a qrels frame
    given as the run (or a run as the qrels) as such."""
    columns = frame.columns if not canonical_names(frame.columns)[0] else canonicalize(frame).columns
    if kind == "run" and "score" not in columns and "relevance" in columns:
        raise SchemaError(
            f"the run frame has a relevance column but no score column (it has {list(frame.columns)}): is it "
            "the qrels, given as the run? The run comes first: evaluate(run, qrels, ...) (pdeval eval takes the "
            "qrels file first, then the runs)."
        )
    if kind == "qrels" and "relevance" not in columns and "score" in columns:
        raise SchemaError(
            f"the qrels frame has a score column but no relevance column (it has {list(frame.columns)}): "
            "is it a run? ranx's qrels frames call the relevance 'score': rename it to 'relevance'."
        )
    required = {"run": RUN_REQUIRED, "qrels": QRELS_REQUIRED, "result": RESULT_REQUIRED}[kind]
    _require(pd.DataFrame(columns=columns), list(required) + list(by), kind)


def _rows(frame: pd.DataFrame, mask: np.ndarray, n: int = 5) -> str:
    """The index labels of the first ``n`` rows of ``mask``, and how many there are."""
    labels = frame.index[np.asarray(mask, dtype=bool)]
    shown = ", ".join(repr(label) for label in labels[:n])
    return f"{len(labels)} row(s), index {shown}" + (", ..." if len(labels) > n else "")


def _number_text(value: object) -> object:
    """An id that is a number as trec_eval would read it: ``10.0`` and ``10`` both ``"10"``."""
    if isinstance(value, (float, np.floating)) and np.isfinite(value) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, (bool, np.bool_)):
        return value
    return str(value) if isinstance(value, (numbers.Number, np.number)) else value


def _id_text(series: pd.Series) -> pd.Series:
    """The column's values as id strings; integral floats print as integers."""
    if pd.api.types.is_float_dtype(series.dtype):
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        integral = np.isfinite(values) & (values == np.round(values)) & (np.abs(values) < 2.0**63)
        text = series.astype(object).astype(str)
        if integral.any():
            text = text.where(~integral, pd.Series(values[integral].astype(np.int64), index=series.index[integral]).astype(str))
        return text.astype(str)
    if series.dtype == object and pd.api.types.infer_dtype(series, skipna=True) not in ("string", "empty"):
        return pd.Series([_number_text(v) for v in series.to_numpy()], index=series.index, dtype=object).astype(str)
    return series.astype(str)


def _padding(series: pd.Series) -> Optional[np.ndarray]:
    """Rows of a string column whose id starts or ends with whitespace, or is empty (None
    when there is none).

    Arrow-backed strings are checked on their buffers: every whitespace byte is <= 32, so one
    scan of the bytes clears the common column; else the first and last byte of each id.
    """
    chunks = arrow_chunks(series) if len(series) else None
    if chunks is None or not all(is_string_chunk(chunk) for chunk in chunks):
        values = series.astype(object)
        mask = (values.str.strip(WHITESPACE) != values).to_numpy(dtype=bool, na_value=False) | (
            values.str.len() == 0
        ).to_numpy(dtype=bool, na_value=False)
        return mask if mask.any() else None
    space = np.zeros(256, dtype=bool)
    space[[ord(c) for c in WHITESPACE]] = True
    masks, found = [], False
    for chunk in chunks:
        offsets, data = string_buffers(chunk)
        starts, ends = offsets[:-1], offsets[1:]
        if len(data) == 0:
            masks.append(np.ones(len(chunk), dtype=bool))
            found = found or len(chunk) > 0
            continue
        used = data[offsets[0] : offsets[-1]]
        if (len(used) == 0 or used.min() > 32) and not (starts == ends).any():
            masks.append(len(chunk))  # no whitespace byte at all: one scan
            continue
        first = data[np.minimum(starts, len(data) - 1)]
        last = data[np.maximum(ends - 1, 0)]
        mask = (first <= 32) | (last <= 32) | (starts == ends)
        rows = np.flatnonzero(mask)
        mask[rows] = (starts[rows] == ends[rows]) | space[first[rows]] | space[last[rows]]
        masks.append(mask)
        found = found or bool(mask.any())
    if not found:
        return None
    return np.concatenate([np.zeros(m, dtype=bool) if isinstance(m, int) else m for m in masks])


def _as_id(frame: pd.DataFrame, column: str, kind: str) -> pd.Series:
    """The ids of ``frame[column]`` as strings, validated.

    Numbers print as trec_eval reads them (``10.0`` -> ``"10"``, so a column that pandas made
    float by a missing value still matches); missing and empty ids raise :class:`SchemaError`
    naming the rows; whitespace around an id is stripped (trec_eval splits lines on it) with a
    counted :class:`IdWarning`. Categorical string ids stay categorical (they are faster).
    ``"051"`` and ``"51"`` stay different ids (evaluation diagnoses a mismatch).
    """
    series = frame[column]
    missing = series.isna().to_numpy(dtype=bool)
    if missing.any():
        raise SchemaError(
            f"the {kind} frame has missing {column} values in {_rows(frame, missing)}; "
            f"every row needs a {column} (drop those rows or fill them in)."
        )
    if isinstance(series.dtype, pd.CategoricalDtype):
        categories = series.cat.categories
        if not (pd.api.types.is_string_dtype(categories.dtype) or categories.dtype == object) or (
            categories.dtype == object and pd.api.types.infer_dtype(categories) != "string"
        ):
            text = _id_text(pd.Series(categories))
            if text.is_unique:
                series = series.cat.rename_categories(pd.Index(text))
            else:
                series = _id_text(series.astype(object))
        if isinstance(series.dtype, pd.CategoricalDtype):
            padded = _padding(pd.Series(series.cat.categories))
            padded = None if padded is None else padded[series.cat.codes.to_numpy()]
        else:
            padded = _padding(series)
    else:
        if not (pd.api.types.is_string_dtype(series.dtype) and series.dtype != object):
            series = _id_text(series)
        padded = _padding(series)
    if padded is not None:
        stripped = series.astype(str).str.strip(WHITESPACE)
        empty = (stripped.str.len() == 0).to_numpy(dtype=bool)
        if empty.any():
            raise SchemaError(
                f"the {kind} frame has empty {column} values in {_rows(frame, empty)}; "
                f"every row needs a {column} (drop those rows or fill them in)."
            )
        warn(
            f"the {kind} frame's {column} ids have whitespace around them in {_rows(frame, padded)}; stripped "
            "(trec_eval splits its input on whitespace, so such ids cannot come from a file)",
            IdWarning,
        )
        series = stripped
    return series


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


def take_rows(frame: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
    """``frame.iloc[rows]`` with a fresh index; Arrow columns of many chunks (a file read in
    blocks) are taken from chunk by chunk (:func:`pdeval.common.arrow.take_sorted`), not joined first."""
    rows = np.asarray(rows, dtype=np.int64)
    columns = {}
    for name in frame.columns:
        chunks = arrow_chunks(frame[name]) if len(rows) else None
        if chunks is None or len(chunks) == 1:
            columns[name] = frame[name].iloc[rows].reset_index(drop=True)
            continue
        import pyarrow as pa

        order = np.argsort(rows, kind="stable")
        taken = take_sorted(chunks, rows[order]).take(pa.array(np.argsort(order)))
        columns[name] = pd.Series(pd.arrays.ArrowStringArray(taken), name=name)
    return pd.DataFrame(columns, copy=False)


def _repeated_keys(frame: pd.DataFrame, keys: Sequence[str]) -> Optional[np.ndarray]:
    """The rows whose ``keys`` repeat those of an earlier row (``frame.duplicated(keys)``), or
    None when no row does.

    Each key column is hashed once into integer codes (missing values equal, as pandas has
    them), the codes are combined into one integer per row, and a sort of those tells whether
    any repeats; only then are the repeated rows marked. On a run of millions of rows this
    takes less than half the time of ``DataFrame.duplicated``, which hashes the combined
    codes once more.
    """
    codes, size = np.zeros(len(frame), dtype=np.int64), 1
    for key in keys:
        column, uniques = pd.factorize(frame[key], use_na_sentinel=False)
        width = max(len(uniques), 1)
        if size * width >= 2**63:  # the combined codes would overflow: number them afresh
            codes = pd.factorize(codes)[0]
            size = int(codes.max()) + 1
        codes = codes * width + column
        size *= width
    ordered = np.sort(codes)
    if not (ordered[1:] == ordered[:-1]).any():
        return None
    return pd.Series(codes).duplicated(keep="first").to_numpy()


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
    repeated = _repeated_keys(frame, keys)
    if repeated is None:
        return frame
    count = int(repeated.sum())
    systems = several_systems(frame, keys, value) if kind == "run" else None
    if systems:  # no policy merges different systems into one run
        raise DuplicateError(
            f"the run has {count} repeated row(s) for the same ({', '.join(keys)}), first: "
            f"{_first_rows(frame, repeated, keys)}; they look like several systems taken for one run: {systems}. "
            "Name each system's rows in the 'run' column (e.g. frame.rename(columns={'name': 'run'})), or read run "
            "files with run_from='file'; dropping rows (duplicates='first' or 'max') would merge different systems."
        )
    if policy == "error":
        shown = _first_rows(frame, repeated, keys)
        hint = "duplicate documents"
        if kind == "qrels":  # the same judgment twice is a duplicate; different ones conflict
            conflicting = frame.drop_duplicates([*keys, value]).duplicated(list(keys)).any()
            hint = "conflicting judgments" if conflicting else "duplicate judgments with the same relevance"
        raise DuplicateError(
            f"the {kind} has {count} repeated row(s) for the same ({', '.join(keys)}) ({hint}), "
            f"first: {shown}. Pass duplicates='first' or 'max' to keep one row per key."
        )
    if policy == "max":
        order = frame[value].to_numpy().argsort(kind="stable")[::-1]
        kept = frame.iloc[order].drop_duplicates(list(keys), keep="first").sort_index()
    else:
        kept = frame.loc[~repeated]
    warn(
        f"{count} duplicate {kind} row(s) dropped (policy {policy!r}, keys {list(keys)})",
        PdevalWarning,
    )
    return kept


def require_rows(frame: pd.DataFrame, kind: str) -> None:
    """Refuse an empty frame, naming it (evaluating nothing is never what a caller meant)."""
    if len(frame) == 0:
        raise SchemaError(
            f"the {kind} frame is empty (no rows; columns {list(frame.columns)}): there is nothing to "
            "evaluate. Check the filter or the file that produced it."
        )


def _finite(
    frame: pd.DataFrame, values: np.ndarray, column: str, kind: str, keys: Sequence[str], infinite: bool = False
) -> None:
    """Refuse NaN values (and infinite ones unless ``infinite``), naming the rows."""
    bad = np.isnan(values) if infinite else ~np.isfinite(values)
    if bad.any():
        what = "NaN" if infinite else "NaN or infinite"
        raise SchemaError(
            f"the {kind} frame has {int(bad.sum())} {what} {column} value(s), first: "
            f"{_first_rows(frame, bad, [*keys, column])} ({_rows(frame, bad)}); give numbers."
        )


def as_run(
    frame: pd.DataFrame,
    *,
    by: Iterable[str] = (),
    duplicates: Optional[DuplicatePolicy] = "error",
) -> pd.DataFrame:
    """Validate a run frame and return it with canonical columns.

    Adds ``run="run"`` when there is no run column; ``by`` names extra key columns (a swept
    parameter) that must be present. Raises :class:`SchemaError` for missing columns, missing
    or empty ids, non-numeric or NaN scores, and (by default) duplicate documents (``±inf``
    scores are kept: trec_eval reads and orders them). ``duplicates=None`` skips the duplicate check, for callers that check
    it faster on integer codes. Ids are normalised as :func:`_as_id` says.
    """
    frame = canonicalize(frame)
    by = list(by)
    require_kind(frame, "run", by)
    columns = {}
    if "run" not in frame.columns:
        columns["run"] = pd.Series("run", index=frame.index, dtype=object)
        unknown = unknown_run_columns(frame, RUN_REQUIRED, by)
        if unknown:
            warn(f"the run frame has no 'run' column, so its rows are one run named 'run'; the column(s) {unknown} "
                 f"are ignored. If {unknown[0]!r} names the systems, rename it: frame.rename(columns="
                 f"{{{unknown[0]!r}: 'run'}}); drop the column(s) to silence this warning.", ColumnWarning)
    columns["query_id"] = _as_id(frame, "query_id", "run")
    columns["doc_id"] = _as_id(frame, "doc_id", "run")
    if "run" in frame.columns:
        columns["run"] = _as_id(frame, "run", "run")
    keys = ["run", "query_id", "doc_id"] if "run" in frame else ["query_id", "doc_id"]
    score = frame["score"]
    if not pd.api.types.is_float_dtype(score.dtype) or score.dtype != np.float64:
        score = _numeric(frame, "score", "run", keys).astype(np.float64)
    _finite(frame, score.to_numpy(dtype=np.float64, na_value=np.nan), "score", "run", keys, infinite=True)
    columns["score"] = score
    out = frame.assign(**columns)
    if duplicates is None:
        return out
    return drop_duplicates(out, ["run", *by, "query_id", "doc_id"], duplicates, kind="run", value="score")


def variant_keys(qrels: pd.DataFrame) -> list[str]:
    """The columns of a qrels frame validated by :func:`as_qrels` that name a qrels variant.

    Every column other than ``query_id``, ``doc_id``, ``relevance`` and the reserved
    information columns (:data:`QRELS_RESERVED`) is a variant key (:func:`as_qrels` has dropped
    the columns that are neither); ``level`` and ``sample`` come first.
    """
    extra = [c for c in qrels.columns if c not in QRELS_REQUIRED and c not in QRELS_RESERVED]
    ordered = [c for c in VARIANT_ORDER if c in extra]
    return ordered + [c for c in extra if c not in ordered]


def _variant_columns(frame: pd.DataFrame, variants: Optional[Iterable[str]]) -> pd.DataFrame:
    """Keep the qrels columns with a meaning (:func:`as_qrels`); warn about and drop the rest."""
    named = [variants] if isinstance(variants, str) else list(variants or ())
    for name in named:
        if name in QRELS_REQUIRED or name in QRELS_RESERVED:
            raise SchemaError(
                f"variants={named!r}: {name!r} cannot be a variant key (it is "
                f"{'a required column' if name in QRELS_REQUIRED else 'a reserved information column'})"
            )
    absent = [name for name in named if name not in frame.columns]
    if absent:
        raise SchemaError(
            f"variants={named!r} names column(s) {absent} that the qrels frame lacks; it has {list(frame.columns)}"
        )
    keep = set(QRELS_REQUIRED) | set(QRELS_RESERVED) | set(PRODUCED_VARIANTS) | set(named)
    unknown = [c for c in frame.columns if c not in keep]
    if not unknown:
        return frame
    if "method" in unknown and "inclusion_prob" in frame.columns:  # ignoring it would give other numbers
        raise SchemaError(
            "these qrels look like raw statAP prels (a 'method' column beside the inclusion "
            "probabilities, e.g. ir_datasets' TrecPrel records): apply statAP_MQ_eval's reading rules "
            "with pdeval.prels_qrels(frame) first"
        )
    warn(
        f"the qrels column(s) {unknown} are ignored: a qrels column is a variant key only when pdeval "
        f"produces it ({', '.join(PRODUCED_VARIANTS)}) or it is named with variants=[...]; "
        f"{', '.join(QRELS_RESERVED)} are information. Pass variants={unknown!r} to evaluate each value "
        "as a qrels variant, or drop the column(s) to silence this warning.",
        ColumnWarning,
    )
    return frame.drop(columns=unknown)


def as_qrels(
    frame: pd.DataFrame,
    *,
    duplicates: Optional[DuplicatePolicy] = "error",
    variants: Optional[Iterable[str]] = None,
) -> pd.DataFrame:
    """Validate a qrels frame and return it with canonical columns.

    Relevance must be integral (``-1`` or any negative value: pooled but not judged) and fit a
    64-bit integer. Extra columns have one meaning each: variant keys that pdeval produces
    (:data:`PRODUCED_VARIANTS`) or that ``variants`` names, reserved information columns
    (:data:`QRELS_RESERVED`, kept); any other column is dropped with a :class:`ColumnWarning`
    naming it. A repeated (variant keys, query_id, doc_id) raises :class:`DuplicateError`
    unless a policy is chosen; ``duplicates=None`` skips the check (for callers that check
    integer codes).
    """
    frame = canonicalize(frame)
    require_kind(frame, "qrels")
    frame = _variant_columns(frame, variants)
    relevance = frame["relevance"]
    keys = ["query_id", "doc_id"]
    if pd.api.types.is_integer_dtype(relevance.dtype) and not pd.api.types.is_unsigned_integer_dtype(relevance.dtype):
        relevance = relevance.astype(np.int64)
    else:
        numeric = _numeric(frame, "relevance", "qrels", keys)
        if pd.api.types.is_unsigned_integer_dtype(numeric.dtype):
            numeric = numeric.astype(np.float64)  # a uint64 beyond int64 must not wrap
        values = numeric.to_numpy(dtype=np.float64, na_value=np.nan)
        _finite(frame, values, "relevance", "qrels", keys)
        bad = (values != np.round(values)) | (np.abs(values) >= 2.0**53)
        if bad.any():
            raise SchemaError(
                f"the qrels have {int(bad.sum())} relevance value(s) that are not integers below 2**53 "
                f"in magnitude, first: {_first_rows(frame, bad, [*keys, 'relevance'])}"
            )
        relevance = pd.Series(values.astype(np.int64), index=frame.index)
    out = frame.assign(
        query_id=_as_id(frame, "query_id", "qrels"),
        doc_id=_as_id(frame, "doc_id", "qrels"),
        relevance=relevance,
    )
    if duplicates is None:
        return out
    keys = [*variant_keys(out), "query_id", "doc_id"]
    return drop_duplicates(out, keys, duplicates, kind="qrels", value="relevance")


#: value columns of the frames of ``bounds`` and ``estimate``: never keys of a result frame
INTERVAL_COLUMNS = ("if_nonrelevant", "if_relevant", "residual", "estimate", "low", "high")


def as_result(frame: pd.DataFrame) -> pd.DataFrame:
    """Validate a result frame (``measure``, ``value`` and key columns).

    A frame of ``bounds`` or ``estimate`` is refused: its interval columns
    (:data:`INTERVAL_COLUMNS`) hold a value per row, and taken as keys they would split every
    ranking into one-row groups.
    """
    frame = canonicalize(frame)
    _require(frame, RESULT_REQUIRED, "result")
    interval = [c for c in INTERVAL_COLUMNS if c in frame.columns]
    if interval:
        raise SchemaError(
            f"the result frame holds the columns {interval} of a pdeval.bounds or pdeval.estimate frame: they are "
            "values, not keys. Analyse one value column as 'value', e.g. frame.drop(columns=[...]) for today's "
            "values or frame.assign(value=frame['estimate']).drop(columns=[...]) for the estimates"
            + ("; for run means with intervals computed jointly over the topics (the mean of per-topic intervals "
               "is not one), call pdeval.estimate(..., per='run')" if "estimate" in interval else "")
        )
    return frame


def result_keys(result: pd.DataFrame) -> list[str]:
    """The key columns of a result frame: everything but ``measure`` and ``value``."""
    return [c for c in result.columns if c not in RESULT_REQUIRED]


__all__ = [
    "ABSENT",
    "ALIASES",
    "DuplicatePolicy",
    "INTERVAL_COLUMNS",
    "POOLED",
    "PRECEDENCE",
    "PRODUCED_VARIANTS",
    "QRELS_REQUIRED",
    "QRELS_RESERVED",
    "RESULT_REQUIRED",
    "RUN_REQUIRED",
    "VARIANT_ORDER",
    "WHITESPACE",
    "as_qrels",
    "as_result",
    "as_run",
    "canonical_names",
    "canonicalize",
    "drop_duplicates",
    "frame_kind",
    "require_kind",
    "require_rows",
    "result_keys",
    "take_rows",
    "variant_keys",
]
