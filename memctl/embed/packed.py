"""Float32 arrays in one memory-mapped file: the local model's weights, ready to use.

Reading model.safetensors and laying the weights out for the forward pass
(transposed, fused, float32) takes ~60 ms, which every `memctl recall` process
paid. The laid-out arrays are written once to a cache file; later processes map
it and use the arrays in place, so loading costs about a millisecond and the
pages are shared between processes through the page cache.

Layout: an 8-byte magic, an 8-byte header length, a JSON header listing each
array's name, shape and offset, then the arrays, each 64-byte aligned.
"""

from __future__ import annotations

import json
import mmap
import os
from pathlib import Path

import numpy as np

from memctl.config.files import create_private

MAGIC = b"MCTLPAK1"
ALIGN = 64
MAX_HEADER = 1 << 20  # the model's header is ~10 kB: a longer one is damage


def _aligned(offset: int) -> int:
    return offset + (-offset) % ALIGN


def save_packed(path: Path, arrays: dict[str, np.ndarray], source: str) -> None:
    """Write ``arrays`` (as float32) for ``source`` (a string naming what they came from)."""
    offsets, offset = [], 0
    for array in arrays.values():
        offsets.append(offset)
        offset = _aligned(offset + array.size * 4)
    entries = [
        {"name": name, "shape": list(array.shape), "offset": at}
        for (name, array), at in zip(arrays.items(), offsets, strict=True)
    ]
    header = json.dumps({"source": source, "arrays": entries}).encode()
    start = _aligned(16 + len(header))
    partial = path.with_name(path.name + f".{os.getpid()}.partial")
    with create_private(partial) as out:
        out.write(MAGIC + len(header).to_bytes(8, "little") + header)
        for at, array in zip(offsets, arrays.values(), strict=True):
            out.seek(start + at)
            out.write(np.ascontiguousarray(array, dtype="<f4").tobytes())
    partial.replace(path)


def packed_source(path: Path) -> str | None:
    """What a packed file was made from, read from its header alone; None when it is not
    a packed file (or cannot be read)."""
    try:
        with open(path, "rb") as handle:
            start = handle.read(16)
            length = int.from_bytes(start[8:16], "little")
            if len(start) < 16 or start[:8] != MAGIC or length > MAX_HEADER:
                return None
            header = json.loads(handle.read(length))
    except (OSError, ValueError):
        return None
    source = header.get("source") if isinstance(header, dict) else None
    return source if isinstance(source, str) else None


def load_packed(path: Path, source: str) -> dict[str, np.ndarray] | None:
    """The arrays of a packed file made from ``source``; None when missing, stale or damaged."""
    try:
        with open(path, "rb") as handle:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    try:
        if mapped[:8] != MAGIC:
            return None
        length = int.from_bytes(mapped[8:16], "little")
        header = json.loads(mapped[16 : 16 + length])
        if header.get("source") != source:
            return None
        start = _aligned(16 + length)
        arrays = {}
        for entry in header["arrays"]:
            shape = tuple(entry["shape"])
            count = int(np.prod(shape))
            arrays[entry["name"]] = np.frombuffer(
                mapped, dtype="<f4", count=count, offset=start + entry["offset"]
            ).reshape(shape)
        return arrays
    except (ValueError, KeyError, TypeError):
        return None
