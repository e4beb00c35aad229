"""A deterministic embedder for fast tests, used through the real Embedder protocol.

Texts become hashed bags of words, so equal texts give equal vectors and
texts sharing words are similar; it knows nothing of meaning (tests of
meaning use the real model).
"""

from __future__ import annotations

import hashlib
import re

import numpy as np


class HashEmbedder:
    def __init__(self, dim: int = 64, name: str = "test:hash") -> None:
        self._dim = dim
        self._name = name
        self.calls: list[list[str]] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()) or [""]:
                digest = hashlib.sha256(word.encode()).digest()
                out[row, int.from_bytes(digest[:4], "little") % self._dim] += 1.0
            out[row] /= np.linalg.norm(out[row])
        return out
