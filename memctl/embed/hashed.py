"""A bag-of-words hash embedder: no model, no numpy maths beyond counting, deterministic.

Texts become hashed bags of words, so equal texts give equal vectors and texts
sharing words are similar; it knows nothing of meaning. ``embedder: hash``
selects it: for tests (in process or in a subprocess) and for machines where
the model cannot be installed, where recall then leans on its words alone.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

WORD = re.compile(r"\w+")


class HashEmbedder:
    def __init__(self, dim: int = 64, name: str = "test:hash") -> None:
        self._dim = dim
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in WORD.findall(text.lower()) or [""]:
                digest = hashlib.sha256(word.encode()).digest()
                out[row, int.from_bytes(digest[:4], "little") % self._dim] += 1.0
            out[row] /= np.linalg.norm(out[row])
        return out
