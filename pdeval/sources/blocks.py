"""The decompressed bytes of a text file, a block of whole lines at a time.

:func:`blocks` decompresses a file by its suffix (``.gz`` through ISA-L's zlib when it is
installed, ``.bz2``, ``.xz``) and yields blocks of whole lines of about :data:`BLOCK_BYTES`,
so that no file is ever held whole; a byte-order mark at the start is dropped and a lone CR
(:func:`has_lone_return`) ends a line like a LF. :func:`read_bytes` joins the blocks, for
small files. A file that cannot be opened or decompressed is a :class:`~pdeval.errors.ParseError`
(or :class:`~pdeval.errors.MissingFileError`) naming it and the remedy.
"""

from __future__ import annotations

import codecs
import gzip
import lzma
import os
import zlib
from pathlib import Path
from typing import Optional

import numpy as np

try:  # Intel's ISA-L inflates gzip about twice as fast as zlib, with zlib's interface
    from isal import isal_zlib as _inflate
except ImportError:  # pragma: no cover - platforms without an isal wheel
    _inflate = zlib

from pdeval.errors import MissingFileError, ParseError
from pdeval.sources.paths import COMPRESSION_SUFFIXES

__all__ = ["BLOCK_BYTES", "blocks", "has_lone_return", "line_blocks", "read_bytes", "show", "tail_bytes"]

#: decompressed bytes parsed at a time: a file of any size is never held whole
BLOCK_BYTES = 1 << 25

#: what to do about a file that cannot be decompressed
_DAMAGED = ("the file is damaged or cut short (an interrupted download?): download or copy it again "
            "(gzip -t / bzip2 -t / xz -t checks a file)")


def read_bytes(path: Path) -> bytes:
    """The whole content of ``path``, decompressed according to its suffix, without a leading
    byte-order mark and with every lone CR line end made a LF (CRLF stays: every parser takes
    it; the block reader's pieces, joined, or for a file that is not compressed, read at once)."""
    if path.suffix.lower() in COMPRESSION_SUFFIXES:
        return b"".join(line_blocks(path, BLOCK_BYTES))
    return _text(*_read_plain(path))


def tail_bytes(path: Path, size: int = 1 << 16):
    """The whole lines of about the last ``size`` bytes of ``path`` (as :func:`read_bytes`
    gives them) and whether they are the whole file; ``(None, False)`` for a compressed file
    (its end is reached only by decompressing all of it)."""
    if path.suffix.lower() in COMPRESSION_SUFFIXES:
        return None, False
    data, start = _read_plain(path, size)
    if start > 0:  # the first line may be cut: from the first line end on (a CR may be half of a CRLF)
        end = min((i for i in (data.find(b"\n"), data.find(b"\r")) if i >= 0), default=len(data))
        data = data[end + 1 :]
    return _text(data, start), start == 0


def _read_plain(path: Path, tail: Optional[int] = None) -> tuple[bytes, int]:
    """The bytes of a file that is not compressed (its last ``tail`` bytes only, if given) and
    the offset they start at."""
    with _open(path) as handle:
        try:
            start = max(0, handle.seek(0, 2) - tail) if tail is not None else 0
            handle.seek(start)
            return handle.read(), start
        except OSError as exc:
            raise ParseError(f"cannot read the file ({exc.strerror or exc})", str(path)) from exc


def _text(data: bytes, start: int) -> bytes:
    """``data`` read from offset ``start`` without the byte-order mark that may open the file,
    lone CR line ends made LF."""
    if start == 0 and data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    if has_lone_return(data):
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return data


def blocks(path: Path):
    """The content of ``path``, decompressed according to its suffix, as blocks of whole
    lines of about :data:`BLOCK_BYTES`: yields ``(block, number of its first line)``."""
    line, pending = 1, None
    for block in line_blocks(path, BLOCK_BYTES):
        if pending is not None:
            yield pending, line
            line += pending.count(b"\n")
        pending = block
    if pending is not None:
        yield pending, line


def line_blocks(path: Path, block_bytes: int):
    """Blocks of whole lines of the decompressed content of ``path``."""
    rest = carry = b""
    first = True
    for piece in _decompressed(path, block_bytes):
        if first:
            first = False
            if piece.startswith(codecs.BOM_UTF8):  # a byte-order mark is not part of the first query id
                piece = piece[len(codecs.BOM_UTF8) :]
        piece, carry = carry + piece, b""
        if piece.endswith(b"\r"):  # it may be half of a CRLF split between two pieces
            piece, carry = piece[:-1], b"\r"
        if has_lone_return(piece):
            # a CR alone (old Mac files) ends a line too; CRLF stays (the parsers take it)
            piece = piece.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        end = piece.rfind(b"\n")
        if end < 0:  # no line ends in this piece: read on
            rest += piece
            continue
        if end == len(piece) - 1:  # (no copy of a piece that ends a line)
            block, rest = rest + piece, b""
        else:
            block, rest = rest + piece[: end + 1], piece[end + 1 :]
        yield block
    if carry:  # the file ends with a lone CR
        rest += b"\n"
    if rest:
        yield rest


def has_lone_return(data: bytes) -> bool:
    """Whether some CR in ``data`` is not followed by a LF (one vectorised pass where there is
    a CR at all: counting CRs and CRLFs with ``bytes.count`` takes four times as long)."""
    if b"\r" not in data:
        return False
    text = np.frombuffer(data, dtype=np.uint8)
    returns = np.flatnonzero(text == 13)
    return bool(len(returns)) and (returns[-1] + 1 == len(text) or bool((text[returns + 1] != 10).any()))


def _open(path: Path):
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise MissingFileError(f"file not found: {str(path)!r}", str(path)) from None
    except IsADirectoryError:
        raise MissingFileError(f"{str(path)!r} is a directory, not a file", str(path)) from None
    except OSError as exc:
        raise ParseError(f"cannot read the file ({exc.strerror or exc})", str(path)) from exc


def _gunzipped(handle, block_bytes: int):
    """zlib's interface directly: it checks the CRC, and members follow each other; the
    compressed bytes are read a piece at a time too (a file is never held whole)."""
    raw = handle.read(block_bytes)
    while raw:
        inflater = _inflate.decompressobj(wbits=31)
        while raw and not inflater.eof:
            yield inflater.decompress(raw, block_bytes)
            raw = inflater.unconsumed_tail or (b"" if inflater.eof else handle.read(block_bytes))
        if not inflater.eof:
            raise EOFError("the compressed data end before the end-of-stream marker")
        raw = inflater.unused_data or handle.read(block_bytes)


def _piece_bytes(handle, block_bytes: int) -> int:
    """How much of a plain file to read next: what is left of it, up to ``block_bytes`` (a
    read of the exact size reuses the memory freed by the previous file's; a read of
    ``block_bytes`` maps fresh pages every time), or ``block_bytes`` at its end or for a pipe."""
    try:
        left = os.fstat(handle.fileno()).st_size - handle.tell()
    except (OSError, ValueError):
        return block_bytes
    return min(block_bytes, left) if left > 0 else block_bytes


def _decompressed(path: Path, block_bytes: int):
    """Pieces of about ``block_bytes`` of the content of ``path``, decompressed."""
    module = COMPRESSION_SUFFIXES.get(path.suffix.lower())
    with _open(path) as handle:
        try:
            if module is None:
                while piece := handle.read(_piece_bytes(handle, block_bytes)):
                    yield piece
            elif module is gzip:
                yield from _gunzipped(handle, block_bytes)
            else:
                with module.open(handle, "rb") as stream:
                    while piece := stream.read(block_bytes):
                        yield piece
        except (OSError, EOFError, zlib.error, _inflate.error, lzma.LZMAError, ValueError) as exc:
            raise ParseError(f"cannot decompress the {path.suffix} file ({exc}); {_DAMAGED}", str(path)) from exc


def show(line: bytes, limit: int = 120) -> str:
    """A line of a file for a message: decoded, quoted, cut after ``limit`` characters."""
    text = line.decode("utf-8", errors="replace").rstrip("\r")
    if len(text) > limit:
        text = text[:limit] + "..."
    return repr(text)
