"""Read and write TREC run and qrels files: the public entry points and the rules they follow.

:func:`read_run`, :func:`read_qrels`, :func:`write_run` and :func:`write_qrels` are defined by
the modules of :mod:`pdeval.sources`, one concern each: :mod:`~pdeval.sources.paths` (paths,
directories, patterns, run names), :mod:`~pdeval.sources.blocks` (decompression into blocks of
lines), :mod:`~pdeval.sources.tokens` (fields of lines, fast and Python paths),
:mod:`~pdeval.sources.runparse` and :mod:`~pdeval.sources.runs` (run files),
:mod:`~pdeval.sources.qrels` and :mod:`~pdeval.sources.sampled` (qrels, sample_eval qrels,
prels), :mod:`~pdeval.sources.writers`; this module gathers them and documents the rules.

Formats
-------
A **run** file holds one line per retrieved document::

    query_id  Q0  doc_id  rank  score  tag  [anything else ...]

A **qrels** file holds one line per judgment::

    query_id  iteration  doc_id  relevance

Fields are separated by any run of ASCII whitespace (spaces, tabs, ``\\r``, ``\\v``, ``\\f``),
as trec_eval's parser (C ``isspace``) does; lines end with ``\\n``.

How each quirk of real files is handled (trec_eval's behaviour in brackets, from its
``get_trec_results.c`` / ``get_qrels.c``):

==========================  =====================================================================
quirk                       pdeval
==========================  =====================================================================
column 2 of a run           ignored, any token (``Q0``, ``q0``, ``0``...) [same]
tabs, repeated spaces,      any run of whitespace separates fields [same]
leading/trailing blanks
rank column                 kept as the ``rank`` column (int64) but never used for ordering;
                            it may start at 0. It must be an integer (an integral float such as
                            ``1.0`` is accepted) [trec_eval ignores it entirely], so a shifted
                            column is caught
fields after the 6th        ignored (``results.trunc``) [same]
fewer than 6 run fields     :class:`ParseError` with file and line [trec_eval: "Malformed line"];
                            a line that looks like a qrels line (and a qrels line that looks
                            like a run line) says so: the files were probably swapped
the tag (6th field)         required but dropped: runs are named by file (see :func:`run_name`),
                            or by tag with ``run_from="tag"`` [trec_eval keeps the last line's tag]
score                       a decimal number (``1``, ``-2.5``, ``.5``, ``3e-4``) or ``inf``;
                            anything else or NaN is a :class:`ParseError` [trec_eval reads it
                            with ``atof``: ``abc`` silently becomes 0]
``#`` inside a doc id       kept: only a line whose first non-blank character is ``#`` can be a
                            comment [same]
``#`` lines in a run        a line starting with ``#`` that is a well-formed run line is read as
                            data (its query id starts with ``#``), as trec_eval 9 does [trec_eval
                            10 skips it]; any other ``#`` line is a comment, skipped with a
                            :class:`PdevalWarning` naming the file, the count and the first line
blank lines                 skipped (run and qrels) [runs: skipped; qrels: "Malformed line"]
comment lines in qrels      skipped and counted in an INFO log message of the ``pdeval.sources``
                            logger [only ``#`` in column 1]
line endings                ``\n`` and ``\r\n``; a lone ``\r`` (old Mac files, or a file
                            mixing conventions) also ends a line [trec_eval: whitespace, so a
                            CR-only file is one line]
qrels fields                exactly 4, else :class:`ParseError` [same]
relevance                   an integer; an integral float such as ``1.0`` is accepted, ``1.5``,
                            ``0x37``, ``1e+8`` raise :class:`ParseError` [trec_eval reads it
                            with ``atol``: ``1.5`` -> 1, ``1e+8`` -> 1, ``0x37`` -> 0]
negative relevance          kept (pooled but unjudged) [same]
duplicate doc in a topic    :class:`DuplicateError` naming file, lines and keys, unless
                            ``duplicates="first"|"max"`` (then a :class:`PdevalWarning` per file
                            with the count) [trec_eval refuses the run]
empty file                  :class:`ParseError` naming the file [trec_eval: cannot read]
directories and patterns    regular, non-hidden files sorted by name; files that cannot be runs
                            (``README.md``, ``*.json``, ``*.py``...) skipped with a warning naming them
Parquet / Arrow IPC files   read as tables (by suffix), also among text files in a directory
                            or list; a file that is not what its suffix says is a :class:`ParseError`
missing file                :class:`MissingFileError` (a :class:`PdevalError` and a
                            :class:`FileNotFoundError`)
compression                 ``.gz``, ``.bz2`` and ``.xz`` are decompressed transparently; a
                            damaged or truncated file is a :class:`ParseError` saying so
encoding                    UTF-8; an invalid byte sequence is a :class:`ParseError`; a UTF-8
                            byte-order mark at the start is dropped [trec_eval: part of the qid]
NUL bytes                   :class:`ParseError` [trec_eval: "File may contain no NULL characters"]
==========================  =====================================================================

Speed
-----
A run file is decompressed and parsed in blocks of whole lines (32 MiB), so that its text is
never held whole (a gzip file's compressed bytes are), also on the way to an error. Each
block goes to the first parser that accepts it: Arrow's CSV reader when the lines are plainly separated by single spaces or
single tabs (the common case; what it returns is checked against the rules above), else
Arrow's string kernels (split lines, split on whitespace, validate numbers with a regular
expression, cast), else a plain-Python parser that applies the same rules line by line and
raises the error with the exact line number. All of them build the same frame (this is
tested on every quirk). The duplicate check runs on integer keys of the ids
(:mod:`pdeval.engine.ids`); only a file that may repeat a document is checked on the frame.
"""


from __future__ import annotations

from pdeval.errors import MissingFileError
from pdeval.sources.paths import RUN_EXTENSIONS, PathLike, RunSource, run_name
from pdeval.sources.qrels import read_qrels
from pdeval.sources.runs import read_run
from pdeval.sources.writers import write_qrels, write_run

__all__ = [
    "MissingFileError",
    "PathLike",
    "RUN_EXTENSIONS",
    "RunSource",
    "read_run",
    "read_qrels",
    "write_run",
    "write_qrels",
    "run_name",
]
