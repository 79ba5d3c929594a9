"""Which files a source names, and what their runs are called.

A source is a path, a directory, a glob pattern or a list of them (:func:`resolve_sources`);
each run file is named after its file (:func:`run_name`), or by the names given
(:func:`resolve_names`). A directory or a glob pattern leaves out, with a warning naming
them, hidden files and files that cannot be runs (:func:`could_be_run`: ``README.md``,
``*.json``, ``*.py``, ...).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
from glob import glob
from pathlib import Path
from typing import Iterable, Sequence, Union

from pdeval.errors import MissingFileError, PdevalWarning, SchemaError, warn
from pdeval.sources.tables import IPC_SUFFIXES, PARQUET_SUFFIXES

__all__ = [
    "COMPRESSION_SUFFIXES",
    "NOT_RUN_SUFFIXES",
    "RUN_EXTENSIONS",
    "PathLike",
    "RunSource",
    "could_be_run",
    "has_glob_magic",
    "is_hidden",
    "resolve_names",
    "resolve_sources",
    "run_name",
]

PathLike = Union[str, "os.PathLike[str]"]
RunSource = Union[PathLike, Iterable[PathLike]]

#: compression suffixes read (and written) transparently
COMPRESSION_SUFFIXES = {".gz": gzip, ".bz2": bz2, ".xz": lzma}

#: file extensions that only say "a text file of results" and are dropped from run names
RUN_EXTENSIONS = (".txt", ".tsv", ".res", ".result", ".results", ".run", ".runs", ".out", ".trec", ".dat")

#: suffixes of files that cannot be runs: a directory or a glob pattern leaves them out
NOT_RUN_SUFFIXES = (
    ".md", ".rst", ".html", ".htm", ".pdf", ".json", ".jsonl", ".yaml", ".yml", ".toml", ".xml", ".ini", ".cfg",
    ".py", ".ipynb", ".sh", ".r", ".java", ".c", ".h", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".zip", ".tar",
    ".tgz", ".7z", ".doc", ".docx", ".xls", ".xlsx", ".log", ".pkl", ".pickle", ".npy", ".npz",
)

#: file names (before any suffix) of files that cannot be runs
NOT_RUN_NAMES = ("readme", "license", "licence", "copying", "changelog", "makefile", "notice", "authors")

#: table-file suffixes dropped from run names (the suffix names the format, not the run)
_TABLE_SUFFIXES = PARQUET_SUFFIXES + IPC_SUFFIXES


def run_name(path: PathLike) -> str:
    """The run name pdeval gives the run file at ``path``.

    The rule: take the file name, drop one compression suffix (``.gz``, ``.bz2``, ``.xz``),
    then drop one extension if it is in :data:`RUN_EXTENSIONS` (``.txt``, ``.tsv``,
    ``.res``, ``.result``, ``.results``, ``.run``, ``.runs``, ``.out``, ``.trec``, ``.dat``)
    or names a table format (``.parquet``, ``.pq``, ``.arrow``, ``.feather``, ``.ipc``).
    Other extensions are part of the name, because real run files use them as numbers:
    ``CUNI_en.run1.gz`` -> ``CUNI_en.run1``, ``CUNI_EN_Run.2.dat.gz`` -> ``CUNI_EN_Run.2``,
    ``results.test`` -> ``results.test``, ``IELAB_01.txt.gz`` -> ``IELAB_01``,
    ``bm25.parquet`` -> ``bm25``.
    """
    name = Path(path).name
    lower = name.lower()
    for suffix in COMPRESSION_SUFFIXES:
        if lower.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
            lower = name.lower()
            break
    for ext in RUN_EXTENSIONS + _TABLE_SUFFIXES:
        if lower.endswith(ext) and len(name) > len(ext):
            return name[: -len(ext)]
    return name


def is_hidden(path: Path) -> bool:
    """Whether the file's name starts with a dot (left out of directories and patterns)."""
    return path.name.startswith(".")


def could_be_run(path: Path) -> bool:
    """Whether a file found in a directory or by a pattern may be a run file: not one whose
    suffix (before a compression suffix) is in :data:`NOT_RUN_SUFFIXES` (documents, code,
    configuration, images, archives), and not a ``README``, ``LICENSE``, ``Makefile``...
    A file given by its own path is always read."""
    name = path.name.lower()
    for suffix in COMPRESSION_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    if name.split(".")[0] in NOT_RUN_NAMES:
        return False
    return not name.endswith(NOT_RUN_SUFFIXES)


def has_glob_magic(text: str) -> bool:
    """Whether ``text`` holds a glob character (``*``, ``?``, ``[``)."""
    return any(ch in text for ch in "*?[")


def _found_files(candidates: Iterable[Path], where: str, what: str) -> list[Path]:
    """The files among ``candidates`` that may be runs, sorted; warns naming the files left
    out (hidden files and those :func:`could_be_run` refuses)."""
    files = sorted(p for p in candidates if p.is_file())
    kept = [p for p in files if not is_hidden(p) and could_be_run(p)]
    skipped = [p.name for p in files if is_hidden(p) or not could_be_run(p)]
    if not kept:
        left = f" (left out as hidden or not runs: {', '.join(skipped[:10])})" if skipped else ""
        raise MissingFileError(f"{what} holds no (non-hidden) file that can be a run{left}", where)
    if skipped:
        warn(f"{where}: skipped {len(skipped)} hidden file(s) or file(s) that cannot be runs: "
             f"{', '.join(skipped[:10])}{', ...' if len(skipped) > 10 else ''} "
             "(give a file's own path to read it anyway)", PdevalWarning)
    return kept


def resolve_sources(source: RunSource) -> list[Path]:
    """Expand a path, directory, glob pattern or list of them into a list of files.

    A directory gives its regular, non-hidden files sorted by name, a pattern the files it
    matches; both leave out hidden files and files that cannot be runs (:func:`could_be_run`)
    with a :class:`~pdeval.errors.PdevalWarning` naming them. A path is kept as given.

    Raises
    ------
    MissingFileError
        A file, directory or pattern names nothing, or the list is empty.
    SchemaError
        ``source`` is neither a path nor a list of paths.
    """
    if isinstance(source, (str, os.PathLike)):
        items: list = [source]
    else:
        try:
            items = list(source)
        except TypeError:
            raise SchemaError(
                f"source must be a path, a directory, a glob pattern or a list of them, "
                f"not {type(source).__name__}"
            ) from None
        if not items:
            raise MissingFileError("no run file given (the list of sources is empty)")
    files: list[Path] = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise SchemaError(f"a run source must be a path or a glob pattern, not {type(item).__name__}: {item!r}")
        path = Path(item)
        if path.is_dir():
            files.extend(_found_files(path.iterdir(), str(path), f"directory {str(path)!r}"))
        elif path.exists():
            files.append(path)
        elif isinstance(item, str) and has_glob_magic(item):
            matches = [Path(p) for p in glob(item)]
            if not any(p.is_file() and not is_hidden(p) for p in matches):
                raise MissingFileError(f"no file matches the pattern {item!r}", item)
            files.extend(_found_files(matches, item, f"the pattern {item!r}"))
        else:
            raise MissingFileError(f"file not found: {str(path)!r}", str(path))
    return files


def resolve_names(files: Sequence[Path], name) -> list[str]:
    """The run name of each file: ``name`` (one string for one file, or one per file), by
    default :func:`run_name` of each. Two files with one name raise
    :class:`~pdeval.errors.SchemaError`."""
    if name is None:
        names = [run_name(path) for path in files]
    elif isinstance(name, str):
        if len(files) != 1:
            raise SchemaError(
                f"name={name!r} names one run but the source holds {len(files)} files; "
                f"pass a list of {len(files)} names (in the order {[p.name for p in files][:5]}...)"
            )
        names = [name]
    else:
        names = list(name)
        if len(names) != len(files):
            raise SchemaError(f"name= holds {len(names)} name(s) for {len(files)} file(s): {[str(p) for p in files]}")
    for path, each in zip(files, names):
        if not isinstance(each, str) or not each:
            raise SchemaError(f"the run name for {str(path)!r} must be a non-empty string, not {each!r}")
    seen: dict[str, Path] = {}
    for path, each in zip(files, names):
        if each in seen:
            raise SchemaError(
                f"two files get the run name {each!r}: {str(seen[each])!r} and {str(path)!r}. "
                f"Run names come from file names (see pdeval.sources.paths.run_name); pass name=[...] to choose them."
            )
        seen[each] = path
    return names
