"""A deterministic embedder for fast tests, used through the real Embedder protocol.

Texts become hashed bags of words, so equal texts give equal vectors and
texts sharing words are similar; it knows nothing of meaning (tests of
meaning use the real model).
"""

from __future__ import annotations

import numpy as np

from memctl.embed import hashed as embed_hashed


class HashEmbedder(embed_hashed.HashEmbedder):
    """memctl's hash embedder, recording each call's texts (what was embedded, and when)."""

    def __init__(self, dim: int = 64, name: str = "test:hash") -> None:
        super().__init__(dim, name)
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return super().embed(texts)
