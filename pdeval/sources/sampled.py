"""Read the judgments of sampled evaluations: ``sample_eval.pl`` qrels and statAP prels.

Two 5-column formats hold a sample of the pool rather than full judgments:

``sample_eval`` (NIST's ``sample_eval.pl``; TREC CDS, PM, TRECVID, ...)::

    topic  iteration  docno  stratum  relevance        (relevance -1: in the stratum, not sampled)

``prels`` (``statAP_MQ_eval``; TREC Million Query 2007–2009, Web 2009)::

    topic  docno  relevance  method  inclusion-probability

Both become qrels frames: ``query_id, doc_id, stratum, relevance`` and ``query_id, doc_id,
relevance, inclusion_prob``. ``stratum`` and ``inclusion_prob`` are sampling information,
not variant keys. :func:`pdeval.read_qrels` detects the format from the file (or takes
``format=``); :func:`prels_qrels` applies statAP_MQ_eval's reading rules to a frame that
already holds prels rows (e.g. ir_datasets' ``TrecPrel`` records: ``query_id, doc_id,
relevance, method, iprob``).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

import pyarrow.compute as pc

from pdeval.common.contract import Boolean, Choice, Text, contract
from pdeval.errors import ParseError, PdevalWarning, SchemaError
from pdeval.frames.canonical import DuplicatePolicy, as_qrels, canonicalize
from pdeval.frames.domains import DUPLICATES, Frame
from pdeval.sources.blocks import read_bytes
from pdeval.sources.checks import validate_with_path
from pdeval.sources.tokens import fast_tokens, first_lines, python_lines, string_series

__all__ = ["detect_format", "parse_sample_eval", "parse_prels", "read_prels", "prels_qrels"]

QrelsFormat = Literal["auto", "trec", "sample_eval", "prels"]

_INT = re.compile(r"^[+-]?\d+$")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
#: statAP_MQ_eval's relevance of a document that was not sampled (the line is skipped)
NOT_SAMPLED = -999
#: prels methods: 0 = judged for UMass's MTC only, 1 = NEU's statAP sample, 2 = both, 4 = NEU
UMASS_METHODS = (0, 2)
NEU_METHODS = (1, 2, 4)


def _lines(data: bytes, path: str) -> tuple[list[int], list[list[str]]]:
    lines, _ = python_lines(data, path)
    numbers, fields = [], []
    for number, _raw, parts in lines:
        numbers.append(number)
        fields.append(parts)
    return numbers, fields


#: data lines read to tell the formats apart
DETECT_LINES = 20


def _first_rows(data: bytes) -> list[tuple[int, list[str]]]:
    """(line number, fields) of the first :data:`DETECT_LINES` data lines (comments, blank
    lines and lines that are not UTF-8 left out: the parser names the latter)."""
    rows = []
    for number, raw in enumerate(first_lines(data, 4 * DETECT_LINES), start=1):
        parts = raw.split()
        if not parts or parts[0].startswith(b"#"):
            continue
        try:
            rows.append((number, [part.decode("utf-8") for part in parts]))
        except UnicodeDecodeError:
            continue
        if len(rows) == DETECT_LINES:
            break
    return rows


def _is_probability(text: str) -> bool:
    return text == "NA" or (bool(_NUMBER.match(text)) and 0 <= float(text) <= 1)


def _fits_sample_eval(fields: list[str]) -> bool:
    return len(fields) == 5 and bool(_INT.match(fields[4]))


def _fits_prels(fields: list[str]) -> bool:
    return len(fields) == 5 and bool(_INT.match(fields[2])) and bool(_INT.match(fields[3])) and _is_probability(fields[4])


def detect_format(data: bytes, path: str = "<qrels>") -> str:
    """``"trec"``, ``"sample_eval"`` or ``"prels"`` from the first data lines of a qrels file.

    The first :data:`DETECT_LINES` data lines decide, by majority, so that one bad line does
    not change the format (the parser of the format chosen then names that line). Most of
    them with five fields make a sampled format, else the file is TREC qrels (whose reader
    names the first line that does not fit, and says when a file looks like a run). A
    five-field line fits ``sample_eval`` (``topic iteration docno stratum relevance``) when its
    fifth field is an integer, and ``prels`` (``topic docno relevance method probability``)
    when its third and fourth are integers and its fifth a probability (a number in [0, 1] or
    ``NA``); the format more lines fit wins. Where every line fits both (numeric doc ids,
    relevance 0 or 1), the second field decides: one value on every line is sample_eval's
    iteration (``0``, ``Q0``), values that vary are prels' doc ids. A single line that fits
    both needs ``format=``. Where no line fits either, the file is read as TREC qrels.
    """
    rows = _first_rows(data)
    five = [fields for _, fields in rows if len(fields) == 5]
    if 2 * len(five) <= len(rows):
        return "trec"
    sample_eval = sum(_fits_sample_eval(fields) for fields in five)
    prels = sum(_fits_prels(fields) for fields in five)
    if sample_eval == prels == 0:  # no line fits a sampled format: TREC's reader names the first
        return "trec"
    if sample_eval != prels:
        return "sample_eval" if sample_eval > prels else "prels"
    if len(five) > 1:
        return "sample_eval" if len({fields[1] for fields in five}) == 1 else "prels"
    if five[0][1] in ("0", "Q0", "q0"):
        return "sample_eval"
    raise ParseError(
        "cannot tell whether these 5-column qrels are sample_eval qrels (topic iteration docno stratum rel) "
        "or statAP prels (topic docno rel method prob); pass format='sample_eval' or format='prels'",
        path,
        rows[0][0],
    )


def _columns(data: bytes, path: str, layout: str, errors: list) -> tuple[np.ndarray, list[pd.Series]]:
    """Line numbers and the five fields of every data line as string Series (pyarrow's
    tokenizer when it is there and every line has five fields; else line by line). A line
    without five fields is left out and its error added to ``errors``, so that the error
    raised (:func:`_raise_first`) is the first bad line's, whatever its fault."""
    got = fast_tokens(data)
    if got is not None:
        tokens, numbers, _, _ = got
        lengths = pc.list_value_length(tokens)
        if len(tokens) and pc.min(lengths).as_py() == 5 and pc.max(lengths).as_py() == 5:
            return numbers, [string_series(pc.list_element(tokens, i)) for i in range(5)]
    numbers, fields = _lines(data, path)
    short = next(((n, len(parts)) for n, parts in zip(numbers, fields) if len(parts) != 5), None)
    if short is not None:
        errors.append(ParseError(f"expected 5 whitespace-separated fields ({layout}), found {short[1]}", path, short[0]))
        kept = [(n, parts) for n, parts in zip(numbers, fields) if len(parts) == 5]
        numbers, fields = [n for n, _ in kept], [parts for _, parts in kept]
    if not fields:
        raise errors[0] if errors else ParseError(f"the file holds no judgment line; expected lines of {layout}", path)
    columns = list(zip(*fields))
    return np.asarray(numbers), [pd.Series(column, dtype="str") for column in columns]


def _integers(values: pd.Series, numbers: np.ndarray, path: str, what: str, errors: list) -> np.ndarray:
    """The integers of ``values``; the first that is none is added to ``errors`` (read as 0)."""
    converted = pd.to_numeric(values, errors="coerce")
    bad = converted.isna().to_numpy() | ~values.str.match(_INT.pattern).to_numpy(dtype=bool)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        errors.append(ParseError(f"the {what} {values.iloc[first]!r} is not an integer", path, int(numbers[first])))
        converted = converted.where(~bad, 0)
    return converted.to_numpy(dtype=np.int64)


def _raise_first(errors: list) -> None:
    """Raise the error of the earliest line among those found field by field."""
    if errors:
        raise min(errors, key=lambda error: error.line)


def parse_sample_eval(data: bytes, path: str, duplicates: DuplicatePolicy = "error") -> pd.DataFrame:
    """Parse ``sample_eval.pl`` qrels: ``topic iteration docno stratum relevance``.

    Returns ``query_id, doc_id, stratum, relevance`` (str, str, str, int64); relevance ``-1``
    (any negative value) is a pooled document of the stratum that was not sampled. A repeated
    (topic, docno) is a :class:`~pdeval.errors.DuplicateError` by default: the script would
    count it twice in its stratum but keep only its last judgment.
    """
    errors: list = []
    numbers, columns = _columns(data, path, "topic iteration docno stratum relevance", errors)
    relevance = _integers(columns[4], numbers, path, "relevance (field 5)", errors)
    _raise_first(errors)
    frame = pd.DataFrame({"query_id": columns[0], "doc_id": columns[2], "stratum": columns[3], "relevance": relevance})
    return validate_with_path(frame, ["query_id", "doc_id"], numbers, duplicates, path, "qrels").reset_index(drop=True)


def read_prels(
    path,
    *,
    mixed: bool = True,
    topics: Literal["all", "neu", "mixed"] = "all",
    valid_only: bool = True,
    duplicates: DuplicatePolicy = "error",
) -> "pd.DataFrame":
    """Read a statAP prels file with the options of ``statAP_MQ_eval``: ``mixed=False`` is its
    ``-f``, ``topics="neu"`` its ``-n``, ``topics="mixed"`` its ``-m`` (see :func:`prels_qrels`).
    ``pdeval.read_qrels(path, format="prels")`` reads with the defaults."""
    file = Path(path)
    return parse_prels(
        read_bytes(file), str(file), mixed=mixed, topics=topics, valid_only=valid_only, duplicates=duplicates
    )


def parse_prels(
    data: bytes,
    path: str,
    *,
    mixed: bool = True,
    topics: Literal["all", "neu", "mixed"] = "all",
    valid_only: bool = True,
    duplicates: DuplicatePolicy = "error",
) -> pd.DataFrame:
    """Parse statAP prels (``topic docno relevance method inclusion-probability``) and apply
    ``statAP_MQ_eval``'s reading rules (:func:`prels_qrels`). A probability that is neither a
    number in [0, 1] nor ``NA`` is a :class:`~pdeval.errors.ParseError` naming its line (the
    script would skip it silently; no published prels file holds one)."""
    errors: list = []
    numbers, columns = _columns(data, path, "topic docno relevance method inclusion-probability", errors)
    relevance = _integers(columns[2], numbers, path, "relevance (field 3)", errors)
    method = _integers(columns[3], numbers, path, "method (field 4)", errors)
    prob_text = columns[4]
    number = prob_text.str.match(_NUMBER.pattern).to_numpy(dtype=bool)
    bad = ~number & (prob_text != "NA").to_numpy()
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        errors.append(ParseError(
            f"the inclusion probability {prob_text.iloc[first]!r} is neither a number nor NA", path, int(numbers[first])
        ))
    prob = np.full(len(prob_text), np.nan)
    prob[number] = pd.to_numeric(prob_text[number]).to_numpy(dtype=np.float64)
    outside = (prob < 0) | (prob > 1)  # (NaN, for NA, is neither)
    if outside.any():
        first = int(np.flatnonzero(outside)[0])
        errors.append(ParseError(
            f"the inclusion probability {prob_text.iloc[first]!r} (field 5) is outside [0, 1] ({int(outside.sum())} "
            "line(s) in all): not a probability. Fix the file, or read it as a frame and apply prels_qrels, which "
            "skips such rows as statAP_MQ_eval does", path, int(numbers[first])))
    _raise_first(errors)
    frame = pd.DataFrame(
        {"query_id": columns[0], "doc_id": columns[1], "relevance": relevance, "method": method, "inclusion_prob": prob}
    )
    negative = (frame["relevance"] < 0) & (frame["relevance"] != NOT_SAMPLED)
    if negative.any():
        first = int(np.flatnonzero(negative.to_numpy())[0])
        raise ParseError(
            f"prels relevance {frame['relevance'].iloc[first]} is negative but not {NOT_SAMPLED} (not sampled)",
            path,
            int(numbers[first]),
        )
    return prels_qrels(frame, mixed=mixed, topics=topics, valid_only=valid_only, duplicates=duplicates, source=path)


def _shown(value) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _grades(frame: pd.DataFrame, column: str, source: str) -> np.ndarray:
    """The integer values of a prels column; NaN, missing, text or fractional values are
    refused naming the rows (a cast would read NaN as -2**63 and 1.5 as 1)."""
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(values)
    bad[~bad] = values[~bad] != np.round(values[~bad])
    if bad.any():
        rows = np.flatnonzero(bad)
        shown = ", ".join(f"row {int(r)} ({_shown(frame[column].iloc[r])})" for r in rows[:5])
        raise SchemaError(
            f"{source}: the prels column {column!r} must hold integers; {len(rows)} row(s) hold NaN, missing, "
            f"text or fractional values: {shown}{', ...' if len(rows) > 5 else ''}. Fix or drop those rows"
        )
    return values.astype(np.int64)


@contract(prels=Frame("any"), mixed=Boolean(), topics=Choice("all", "neu", "mixed"), valid_only=Boolean(),
          duplicates=DUPLICATES, source=Text())
def prels_qrels(
    prels: pd.DataFrame,
    *,
    mixed: bool = True,
    topics: Literal["all", "neu", "mixed"] = "all",
    valid_only: bool = True,
    duplicates: DuplicatePolicy = "error",
    source: str = "prels",
) -> pd.DataFrame:
    """A qrels frame with ``inclusion_prob`` from prels rows, by ``statAP_MQ_eval_v3.pl``'s rules.

    ``prels`` has ``query_id, doc_id, relevance, method`` and ``inclusion_prob`` (or
    ir_datasets' ``iprob``). The script's rules, in its order:

    1. rows with relevance -999 (not sampled) are skipped;
    2. rows whose probability is ``NA``/missing or outside [0, 1] are skipped (a probability
       of 0 left after rule 4 is kept by the script, which then divides by zero; here it is
       skipped with the others);
    3. a topic counts as UMass-judged if a row has method 0 or 2, NEU-judged if method 1, 2 or 4;
    4. ``mixed=True`` (the default): rows judged by UMass's method (0 or 2) get probability 1;
       ``mixed=False`` (the script's ``-f``): rows of method 0 are dropped;
    5. topics without a NEU-judged row are never evaluated: they are dropped. ``topics="neu"``
       (the script's ``-n``) keeps only topics without UMass rows, ``"mixed"`` (``-m``) only
       topics with both;
    6. ``valid_only=True`` (the default) drops the topics left without a sampled relevant
       document (R̂ = 0): the script prints no value for them and leaves them out of its means,
       so the means of pdeval (and of ``pdeval eval``) are the script's. With ``False`` they
       stay, and the statAP measures are undefined on them.

    Dropped rows and topics are reported in one :class:`~pdeval.errors.PdevalWarning`.
    Returns ``query_id, doc_id, relevance, inclusion_prob``.

    Parameters
    ----------
    prels : DataFrame
        A frame of statAP prels (``query_id, doc_id, relevance, method, inclusion_prob``).
    mixed : bool, default True
        Rule 4: UMass-judged rows get probability 1 (``False``, the script's ``-f``: rows of
        method 0 are dropped).
    topics : {'all', 'neu', 'mixed'}, default 'all'
        Rule 5: which topics to keep (the script's ``-n`` and ``-m``).
    valid_only : bool, default True
        Rule 6: drop the topics left without a sampled relevant document.
    duplicates : {'error', 'first', 'max'}, default 'error'
        Policy for a repeated (query_id, doc_id).
    source : str, default 'prels'
        Named in the warnings.

    Returns
    -------
    DataFrame
        ``query_id, doc_id, relevance, inclusion_prob``.

    See Also
    --------
    read_qrels : Reads prels files (``format='prels'``) by these rules.
    write_qrels : Writes them back (an ``inclusion_prob`` column writes prels).

    Examples
    --------
    >>> prels = pd.DataFrame({"query_id": ["1", "1", "1"], "doc_id": ["d1", "d2", "d3"],
    ...                       "relevance": [1, 0, -999], "method": [1, 1, 1],
    ...                       "inclusion_prob": [0.5, 0.25, 0.1]})
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     print(pdeval.prels_qrels(prels))
      query_id doc_id  relevance  inclusion_prob
    0        1     d1          1            0.50
    1        1     d2          0            0.25
    """
    if topics not in ("all", "neu", "mixed"):
        raise SchemaError(f"topics must be 'all', 'neu' or 'mixed', not {topics!r}")
    frame = canonicalize(prels)
    missing = [c for c in ("query_id", "doc_id", "relevance", "method", "inclusion_prob") if c not in frame.columns]
    if missing:
        raise SchemaError(
            f"prels need the columns query_id, doc_id, relevance, method, inclusion_prob (or iprob); missing {missing}"
        )
    relevance = _grades(frame, "relevance", source)
    method = _grades(frame, "method", source)
    prob = pd.to_numeric(frame["inclusion_prob"], errors="coerce").to_numpy(dtype=np.float64)
    not_sampled = relevance == NOT_SAMPLED
    unusable = ~not_sampled & ~((prob >= 0) & (prob <= 1))  # NaN fails both comparisons
    keep = ~not_sampled & ~unusable
    topic = frame["query_id"].astype(str).to_numpy()
    umass = pd.Series(keep & np.isin(method, UMASS_METHODS)).groupby(topic).any()
    neu = pd.Series(keep & np.isin(method, NEU_METHODS)).groupby(topic).any()
    valid = neu.copy()
    if topics == "neu":
        valid &= ~umass
    elif topics == "mixed":
        valid &= umass
    prob = np.where(np.isin(method, UMASS_METHODS), 1.0, prob) if mixed else prob
    dropped_method = keep & (method == 0) if not mixed else np.zeros(len(keep), dtype=bool)
    in_valid = valid.reindex(topic).fillna(False).to_numpy(dtype=bool)
    zero = keep & ~dropped_method & (prob == 0)
    final = keep & ~dropped_method & ~zero & in_valid
    no_relevant = []
    if valid_only:
        has_relevant = pd.Series(final & (relevance > 0)).groupby(topic).any()
        no_relevant = sorted(set(topic[final]) - set(has_relevant.index[has_relevant]))
        final &= has_relevant.reindex(topic).fillna(False).to_numpy(dtype=bool)
    out = pd.DataFrame(
        {
            "query_id": topic[final],
            "doc_id": frame["doc_id"].astype(str).to_numpy()[final],
            "relevance": relevance[final].astype(np.int64),
            "inclusion_prob": prob[final],
        }
    )
    skipped_topics = sorted(set(topic[keep]) - set(valid.index[valid]))
    notes = []
    if not_sampled.any():
        notes.append(f"{int(not_sampled.sum())} row(s) with relevance {NOT_SAMPLED} (not sampled)")
    if unusable.any():
        notes.append(f"{int(unusable.sum())} row(s) with an inclusion probability outside (0, 1] or NA")
    if zero.any():
        notes.append(f"{int(zero.sum())} row(s) with inclusion probability 0 (the script would divide by zero)")
    if dropped_method.any():
        notes.append(f"{int(dropped_method.sum())} row(s) judged by method 0 only (mixed=False)")
    if skipped_topics:
        rule = {"all": "no NEU-judged row", "neu": "UMass rows or no NEU row", "mixed": "not judged by both methods"}[topics]
        notes.append(f"{len(skipped_topics)} topic(s) with {rule}, e.g. {skipped_topics[:3]}")
    if no_relevant:
        notes.append(f"{len(no_relevant)} topic(s) without a sampled relevant document, e.g. {no_relevant[:3]}")
    if notes:
        warnings.warn(f"{source}: skipped as statAP_MQ_eval does: " + "; ".join(notes), PdevalWarning, stacklevel=3)
    return as_qrels(out, duplicates=duplicates).reset_index(drop=True)


def read_sampled(path: Path, data: bytes, format: str, duplicates: DuplicatePolicy) -> pd.DataFrame:
    """Dispatch of :func:`pdeval.read_qrels` for the two sampled formats."""
    if format == "sample_eval":
        return parse_sample_eval(data, str(path), duplicates)
    return parse_prels(data, str(path), duplicates=duplicates)
