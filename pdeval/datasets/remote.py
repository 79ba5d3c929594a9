"""Full public test collections, downloaded on first use, verified and cached.

The bundled ``clef2018`` sample is small on purpose; the reproductions at full scale need the
complete collections. :func:`fetch` downloads every file a data set names in its manifest
(``manifests/<name>.tsv`` beside this file: role, cache path, public source
``owner/repo@commit:path``, git blob SHA-1 and size of the original), checks each file's
git blob SHA-1 (``sha1(b"blob <size>\\0" + content)``, the identifier the source repository
itself gives the file, so a download is verified byte for byte against the exact commit), and
keeps it in the cache. A file in the cache was verified when it was written (files are written
to a temporary name and renamed only after the check), so later loads read it as it is.

Where the files come from, in this order:

1. ``mirror=`` or the environment variable ``PDEVAL_DATA_MIRROR``: a directory, or a
   ``http(s)://`` / ``file://`` URL, laid out as ``<folder>/<path>`` like the manifest's
   ``local_path`` (the layout of the evaluation data kept beside pdeval's repository). Files
   whose path ends in ``.gz`` may be stored compressed there (``gzip -9n`` of the original):
   the check is on the decompressed bytes.
2. Otherwise the public source repository at the pinned commit, over HTTPS from GitHub's raw
   file host.

The cache is ``cache_dir=``, else ``PDEVAL_CACHE``, else ``~/.cache/pdeval``.
"""

from __future__ import annotations

import csv
import gzip
import zlib
import hashlib
import os
import shutil
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Optional, Union

from pdeval.common.progress import check_progress, tqdm_options
from pdeval.errors import PdevalError

__all__ = ["ManifestEntry", "cache_root", "download_size", "fetch", "git_blob_sha1", "manifest", "names", "remove"]

MIRROR_VARIABLE = "PDEVAL_DATA_MIRROR"
CACHE_VARIABLE = "PDEVAL_CACHE"
SOURCE_URL = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"
GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class ManifestEntry:
    """One file of a downloadable data set."""

    #: ``runs``, ``qrels``, ``partial_qrels`` or ``extra``
    role: str
    #: where the file is kept in the cache and in a mirror (``<folder>/<path>``)
    local_path: str
    #: ``owner/repo@commit:path`` of the original
    source: str
    #: git blob SHA-1 of the original (uncompressed) bytes
    git_blob_sha1: str
    #: size of the original in bytes
    size: int

    def source_url(self) -> str:
        """The HTTPS address of the original at its pinned commit."""
        repo, rest = self.source.split("@", 1)
        commit, path = rest.split(":", 1)
        return SOURCE_URL.format(repo=repo, commit=commit, path=urllib.parse.quote(path))


def names() -> list[str]:
    """The data sets :func:`fetch` can download."""
    folder = resources.files(__package__).joinpath("manifests")
    return sorted(p.name[: -len(".tsv")] for p in folder.iterdir() if p.name.endswith(".tsv"))


def manifest(name: str) -> list[ManifestEntry]:
    """Every file of the data set ``name``, from its shipped manifest.

    Raises :class:`~pdeval.errors.PdevalError` for a name that is not a downloadable data set
    (giving the known names) and for a manifest line without a byte count (naming the line).
    """
    known = names()
    if not isinstance(name, str) or name not in known:
        raise PdevalError(f"unknown downloadable data set {name!r}; known: {known}")
    text = resources.files(__package__).joinpath("manifests", f"{name}.tsv").read_text()
    entries = []
    for line, r in enumerate(csv.DictReader(text.splitlines(), delimiter="\t"), start=2):
        try:
            size = int(r["bytes"])
        except (TypeError, ValueError, KeyError):
            raise PdevalError(
                f"manifests/{name}.tsv line {line}: the byte count {r.get('bytes')!r} is not an integer; "
                "the shipped manifest is damaged (reinstall pdeval)"
            ) from None
        entries.append(ManifestEntry(r["role"], r["local_path"], r["source"], r["git_blob_sha1"], size))
    return entries


def download_size(name: str) -> int:
    """Bytes :func:`fetch` downloads for the data set ``name`` (every file of its manifest, as
    the source repositories serve them), e.g. 208,960,238 for ``trec-dl21``."""
    return sum(entry.size for entry in manifest(name))


def cache_root(cache_dir: Union[str, os.PathLike, None] = None) -> Path:
    """The cache folder: ``cache_dir``, else ``$PDEVAL_CACHE``, else ``~/.cache/pdeval``."""
    if cache_dir is not None:
        return Path(cache_dir)
    if os.environ.get(CACHE_VARIABLE):
        return Path(os.environ[CACHE_VARIABLE])
    return Path.home() / ".cache" / "pdeval"


def git_blob_sha1(content: bytes) -> str:
    """The identifier git gives a file's content: SHA-1 of ``b"blob <size>\\0" + content``."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def _mirror_location(mirror: str, entry: ManifestEntry) -> str:
    if "://" in mirror:
        return mirror.rstrip("/") + "/" + urllib.parse.quote(entry.local_path)
    return str(Path(mirror) / entry.local_path)


def _download(location: str) -> bytes:
    """The bytes at a URL or a local path; a :class:`PdevalError` naming it if unreachable."""
    try:
        if "://" not in location:
            return Path(location).read_bytes()
        with urllib.request.urlopen(location, timeout=60) as response:  # noqa: S310 (http, https, file)
            return response.read()
    except (OSError, urllib.error.URLError, ValueError) as error:
        raise PdevalError(
            f"could not download {location}: {error}. Check the network connection, or point "
            f"{MIRROR_VARIABLE} (or mirror=) at a copy of the files"
        ) from None


def _verified(content: bytes, entry: ManifestEntry, location: str) -> bytes:
    """The original bytes of a downloaded file (decompressed if the copy was gzipped), checked."""
    try:
        original = gzip.decompress(content) if content[:2] == GZIP_MAGIC else content
    except (EOFError, OSError, zlib.error) as error:  # a truncated or damaged gzip copy
        raise PdevalError(
            f"{location} is a truncated or damaged gzip file ({type(error).__name__}: {error}; {len(content)} bytes "
            f"downloaded) of {entry.source}; nothing was cached. Download it again (load() retries), or replace it "
            "in the mirror"
        ) from None
    found = git_blob_sha1(original)
    if len(original) != entry.size or found != entry.git_blob_sha1:
        raise PdevalError(
            f"{location} is not the file the manifest names ({entry.source}): git blob SHA-1 "
            f"{found} ({len(original)} bytes), expected {entry.git_blob_sha1} ({entry.size} bytes). "
            "The copy is damaged or another version; nothing was cached. Remove it from the "
            "mirror or download it again"
        )
    return original


def _make_folder(folder: Path) -> None:
    """Create a cache folder, or say which one cannot be made and what to do."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise PdevalError(
            f"cannot write to the cache folder {folder} ({error.strerror or error}); pass "
            f"cache_dir= (or set {CACHE_VARIABLE}) to a folder you can write to"
        ) from None


def _store(original: bytes, target: Path) -> None:
    """Write atomically: a file in the cache is always a verified one."""
    _make_folder(target.parent)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".partial-")
    data = gzip.compress(original, compresslevel=6, mtime=0) if target.suffix == ".gz" else original
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def fetch(
    name: str,
    *,
    cache_dir: Union[str, os.PathLike, None] = None,
    mirror: Optional[str] = None,
    progress: Optional[bool] = None,
) -> dict[str, list[Path]]:
    """Download (once) and verify the files of data set ``name``; their cached paths by role.

    Returns ``{"runs": [...], "qrels": [path], ...}``. Files already in the cache are not
    downloaded again. ``progress``: a download bar, True, False or None (only for long
    downloads on a terminal or in a notebook; :mod:`pdeval.common.progress`). Raises :class:`~pdeval.errors.PdevalError` for an unknown name, an
    unreachable source (naming it) or a file whose checksum differs from the manifest.
    """
    check_progress(progress)
    entries = manifest(name)  # raises for an unknown name
    root = cache_root(cache_dir)
    mirror = mirror if mirror is not None else os.environ.get(MIRROR_VARIABLE) or None
    missing = [e for e in entries if not (root / e.local_path).exists()]
    if missing:
        _make_folder(root)  # before any download
        from pdeval.common.progress import bar_class

        tqdm = bar_class()

        with tqdm(total=sum(e.size for e in missing), unit="B", unit_scale=True,
                  desc=f"downloading {name}", leave=False, **tqdm_options(progress)) as bar:
            for entry in missing:
                location = _mirror_location(mirror, entry) if mirror else entry.source_url()
                _store(_verified(_download(location), entry, location), root / entry.local_path)
                bar.update(entry.size)
    paths: dict[str, list[Path]] = {}
    for entry in entries:
        paths.setdefault(entry.role, []).append(root / entry.local_path)
    return paths


def remove(name: str, *, cache_dir: Union[str, os.PathLike, None] = None) -> None:
    """Delete the cached files of data set ``name`` (the next :func:`fetch` downloads again)."""
    folders = {e.local_path.split("/", 1)[0] for e in manifest(name)}
    for folder in folders:
        shutil.rmtree(cache_root(cache_dir) / folder, ignore_errors=True)
