"""Write run and qrels frames as TREC files: :func:`write_run`, :func:`write_qrels`.

Ids are checked to be writable (no whitespace, not empty, a query id not starting with
``#``), scores written with the shortest text that reads back as the same float64, and a
``.gz``/``.bz2``/``.xz`` suffix compresses (gzip without a name or time stamp, so that the
same frame gives the same bytes).
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pdeval.common.contract import Boolean, FilePath, Nullable, Text, contract
from pdeval.engine.ranking import rank_run
from pdeval.errors import ColumnWarning, MissingFileError, SchemaError, warn
from pdeval.frames.canonical import as_qrels, as_run, variant_keys
from pdeval.frames.domains import Frame
from pdeval.sources.paths import COMPRESSION_SUFFIXES, RUN_EXTENSIONS, PathLike, run_name

__all__ = ["write_qrels", "write_run"]

#: characters an id cannot hold in a TREC file: the field separators (C ``isspace``) and NUL
_UNWRITABLE = r"[ \t\n\r\x0b\x0c\x00]"


def _check_tokens(series: pd.Series, what: str, *, leading: bool = False) -> None:
    """Ids written into a whitespace-separated file may not be empty or hold whitespace.

    The first field of a line (``leading``) may not start with ``#`` either: the line would
    read back as a comment.
    """
    text = series.astype(str)
    bad = (text.str.len() == 0) | text.str.contains(_UNWRITABLE, regex=True)
    if leading:
        bad |= text.str.startswith("#")
    if bool(bad.any()):
        first = text[bad.to_numpy()].iloc[0]
        rule = "empty, holding ASCII whitespace or NUL" + (", or starting with '#'" if leading else "")
        raise SchemaError(
            f"{int(bad.sum())} {what} value(s) cannot be written to a TREC file ({rule}), first: {first!r}"
        )


def _format_floats(values: np.ndarray) -> list[str]:
    """Shortest strings that read back as exactly the same float64."""
    return pc.cast(pa.array(values, type=pa.float64()), pa.string()).to_pylist()


def _open_for_writing(path: Path):
    if path.suffix.lower() == ".gz":
        handle = open(path, "wb")
        # level 6 as the gzip command (9 is 3x slower for ~3% less); no name or time stamp
        return gzip.GzipFile(filename="", mode="wb", fileobj=handle, mtime=0, compresslevel=6), handle
    module = COMPRESSION_SUFFIXES.get(path.suffix.lower())
    if module is not None:
        return module.open(path, "wb"), None
    return open(path, "wb"), None


def _write_text(path: Path, lines: list[str]) -> None:
    stream, handle = _open_for_writing(path)
    try:
        stream.write(("\n".join(lines) + "\n").encode("utf-8") if lines else b"")
    finally:
        stream.close()
        if handle is not None:
            handle.close()


def _run_lines(ranked: pd.DataFrame) -> list[str]:
    qid = ranked["query_id"].astype(str).tolist()
    doc = ranked["doc_id"].astype(str).tolist()
    tag = ranked["run"].astype(str).tolist()
    rank = ranked["rank"].to_numpy().tolist()
    score = _format_floats(ranked["score"].to_numpy(dtype=np.float64))
    return [f"{q} Q0 {d} {r} {s} {t}" for q, d, r, s, t in zip(qid, doc, rank, score, tag)]


def _is_directory_target(path: Path, raw: PathLike, per_run: Optional[bool]) -> bool:
    if per_run is not None:
        if not per_run and path.is_dir():
            raise SchemaError(f"{str(path)!r} is a directory; per_run=False writes one file")
        return bool(per_run)
    return path.is_dir() or (isinstance(raw, str) and raw.endswith(("/", os.sep)))


@contract(run=Frame("run"), path=FilePath(), per_run=Nullable(Boolean()), suffix=Text("a file suffix such as '.txt'"))
def write_run(
    run: pd.DataFrame, path: PathLike, *, per_run: Optional[bool] = None, suffix: str = ".txt"
) -> list[Path]:
    """Write a run frame as TREC run files; return the paths written.

    Each line is ``query_id Q0 doc_id rank score tag`` with the tag set to the run name, the
    rank recomputed in trec_eval order (score descending, doc id descending;
    :func:`pdeval.engine.ranking.rank_run`), lines grouped by run and topic in that order, and the
    score written with the shortest text that reads back as the same float64.

    ``per_run`` decides the layout (by default from ``path``):

    * ``per_run=True``, or ``path`` is an existing directory or a string ending with ``/``:
      ``path`` is a directory (created if needed) with one file per run, ``<run><suffix>``
      (``suffix=".txt.gz"`` compresses). :func:`read_run` on the directory gives the same run
      names back. Run names must then be usable as file names.
    * otherwise: one file holding every run (tags tell them apart; read it back with
      ``read_run(path, run_from="tag")``). A ``.gz``/``.bz2``/``.xz`` suffix compresses.

    The frame is validated by :func:`pdeval.frames.canonical.as_run` (duplicates are an error); ids and
    run names must be non-empty and free of whitespace.

    Parameters
    ----------
    run : DataFrame
        A run frame.
    path : str or path
        A file, or a directory (one file per run).
    per_run : bool, optional
        One file per run (default: when ``path`` is a directory).
    suffix : str, default '.txt'
        The suffix of the files written per run.

    Returns
    -------
    list of Path
        The files written.

    See Also
    --------
    read_run : Read the files back.
    write_qrels : Write a qrels frame.
    write_table : Write any frame as Parquet or Arrow IPC.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["bm25", "bm25", "dfr"], "query_id": ["1", "1", "1"],
    ...                     "doc_id": ["d1", "d2", "d1"], "score": [2.0, 1.0, 0.5]})
    >>> [p.name for p in pdeval.write_run(run, "runs/")]
    ['bm25.txt', 'dfr.txt']
    >>> print(open("runs/bm25.txt").read(), end="")
    1 Q0 d1 1 2 bm25
    1 Q0 d2 2 1 bm25
    """
    frame = as_run(run)
    for column in ("run", "query_id", "doc_id"):
        _check_tokens(frame[column], column, leading=column == "query_id")
    ranked = rank_run(frame)
    target = Path(path)
    if _is_directory_target(target, path, per_run):
        if run_name("x" + suffix) != "x":
            raise SchemaError(
                f"suffix={suffix!r} would not give the run name back on reading; use one of "
                f"{list(RUN_EXTENSIONS)} optionally followed by .gz, e.g. '.txt' or '.txt.gz'"
            )
        target.mkdir(parents=True, exist_ok=True)
        written = []
        for name, group in ranked.groupby("run", sort=True, observed=True):
            name = str(name)
            if name in (".", "..") or name.startswith(".") or "/" in name or os.sep in name or "\x00" in name:
                raise SchemaError(f"the run name {name!r} cannot be used as a file name")
            file = target / f"{name}{suffix}"
            _write_text(file, _run_lines(group))
            written.append(file)
        return written
    if target.parent and not target.parent.exists():
        raise MissingFileError(f"the directory of {str(target)!r} does not exist", str(target.parent))
    _write_text(target, _run_lines(ranked))
    return [target]


@contract(qrels=Frame("qrels", variants=False), path=FilePath())
def write_qrels(qrels: pd.DataFrame, path: PathLike) -> Path:
    """Write a qrels frame as a TREC qrels file ``query_id 0 doc_id relevance``; return the path.

    Rows are written in frame order with iteration ``0``. A frame with variant keys (e.g.
    ``level``, ``sample``) is refused: select one variant first. A ``.gz``/``.bz2``/``.xz``
    suffix compresses. Sampled qrels keep their sampling column: a ``stratum`` column writes
    ``sample_eval.pl`` qrels (``query_id 0 doc_id stratum relevance``), an ``inclusion_prob``
    column statAP prels (``query_id doc_id relevance 1 probability``, method 1: sampled).

    Parameters
    ----------
    qrels : DataFrame
        A qrels frame (one variant).
    path : str or path
        The file to write (``.gz``, ``.bz2``, ``.xz`` compress).

    Returns
    -------
    Path
        The qrels file written.

    See Also
    --------
    read_qrels : Read the file back.
    write_run : Write a run frame.

    Examples
    --------
    >>> qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["d1", "d2"], "relevance": [1, 0]})
    >>> pdeval.write_qrels(qrels, "qrels.txt").name
    'qrels.txt'
    >>> print(open("qrels.txt").read(), end="")
    1 0 d1 1
    1 0 d2 0
    """
    frame = as_qrels(qrels)
    keys = variant_keys(frame)
    if keys:
        raise SchemaError(
            f"the qrels frame has variant key column(s) {keys}; a TREC qrels file holds one "
            f"variant, so select one first (e.g. qrels[qrels.level == ...])"
        )
    for column in ("query_id", "doc_id"):
        _check_tokens(frame[column], column, leading=column == "query_id")
    target = Path(path)
    if target.parent and not target.parent.exists():
        raise MissingFileError(f"the directory of {str(target)!r} does not exist", str(target.parent))
    if "source" in frame.columns:  # TREC qrels have no field for it: say so rather than drop it silently
        sources = frame["source"].astype(str).value_counts()
        warn(f"{target}: the label provenance column 'source' is not written (a TREC qrels file has no "
             f"field for it): {', '.join(f'{n} {s!r}' for s, n in sources.items())} labels. Write one file "
             "per source to keep it", ColumnWarning)
    qid = frame["query_id"].astype(str).tolist()
    doc = frame["doc_id"].astype(str).tolist()
    rel = frame["relevance"].to_numpy().tolist()
    if "stratum" in frame.columns:
        _check_tokens(frame["stratum"].astype(str), "stratum")
        stratum = frame["stratum"].astype(str).tolist()
        lines = [f"{q} 0 {d} {c} {r}" for q, d, c, r in zip(qid, doc, stratum, rel)]
    elif "inclusion_prob" in frame.columns:
        prob = _format_floats(frame["inclusion_prob"].to_numpy(dtype=np.float64))
        lines = [f"{q} {d} {r} 1 {p}" for q, d, r, p in zip(qid, doc, rel, prob)]
    else:
        lines = [f"{q} 0 {d} {r}" for q, d, r in zip(qid, doc, rel)]
    _write_text(target, lines)
    return target
