"""Arrow-backed string columns read chunk by chunk, without joining the chunks first."""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd


def arrow_chunks(values: pd.Series) -> Optional[list]:
    """The Arrow chunks behind an Arrow-backed string column, or None. A column of many
    small chunks (a concatenation of per-topic frames) becomes one chunk, so that work done
    chunk by chunk stays vectorised."""
    if getattr(values.dtype, "storage", None) != "pyarrow":
        return None
    import pyarrow as pa

    chunks = pa.chunked_array(pa.array(values)).chunks
    if len(chunks) > 1024:  # (a file read in blocks of a few MiB has a few chunks per file: kept)
        chunks = [pa.concat_arrays([chunk.cast(pa.large_string()) for chunk in chunks])]
    return chunks


def take_sorted(chunks: list, rows: np.ndarray):
    """The values at ``rows`` (ascending positions) of a column held as Arrow ``chunks``, as
    one Arrow array, taken chunk by chunk: Arrow's ``take`` on a chunked array first joins
    every chunk, a copy of the whole column to fetch a few values."""
    import pyarrow as pa

    bounds = np.cumsum([0] + [len(chunk) for chunk in chunks])
    cuts = np.searchsorted(rows, bounds)
    pieces = [chunk.take(pa.array(rows[low:high] - start))
              for chunk, start, low, high in zip(chunks, bounds[:-1].tolist(), cuts[:-1].tolist(), cuts[1:].tolist())
              if high > low]
    return pa.concat_arrays(pieces) if pieces else chunks[0].slice(0, 0)


def is_string_chunk(chunk) -> bool:
    """Whether an Arrow array holds (large) strings, whose buffers :func:`string_buffers` reads."""
    import pyarrow as pa

    return pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type)


def string_buffers(chunk) -> tuple[np.ndarray, np.ndarray]:
    """The offsets of an Arrow string array (its slice of them) and its UTF-8 bytes, as numpy
    views of the array's own buffers: the value at ``i`` is ``data[offsets[i]:offsets[i + 1]]``."""
    import pyarrow as pa

    _, offset_buffer, data_buffer = chunk.buffers()
    offset_type = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
    offsets = np.frombuffer(offset_buffer, dtype=offset_type)[chunk.offset : chunk.offset + len(chunk) + 1]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    return offsets, data


__all__ = ["arrow_chunks", "is_string_chunk", "string_buffers", "take_sorted"]
