"""Embeddings from a model served by Ollama over its HTTP API.

The ``ollama`` client (and httpx under it) takes about 350 ms to import, so it
is imported inside the methods that talk to the server: building an embedder
for a command that never embeds costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from memctl.config.urls import shown_url
from memctl.errors import ModelError

if TYPE_CHECKING:
    import ollama

PROBE_TEXT = "memctl dimension probe"


class OllamaEmbedder:
    """An Embedder backed by ``POST /api/embed`` on an Ollama server."""

    def __init__(self, host: str, model: str, timeout: float, batch_size: int = 32) -> None:
        self._host = host
        self._shown = shown_url(host)  # in messages, which runs keep: no credentials
        self._model = model
        self._timeout = timeout
        self._batch_size = batch_size
        self._dim: int | None = None
        self._client: ollama.Client | None = None

    @property
    def name(self) -> str:
        return f"ollama:{self._model}"

    @property
    def dim(self) -> int:
        """Ollama does not report a model's dimension, so the first call embeds a probe."""
        if self._dim is None:
            return int(self.embed([PROBE_TEXT]).shape[1])
        return self._dim

    def embed(self, texts: list[str]) -> np.ndarray:
        """Float32 (len(texts), dim), rows L2-normalised here whatever the server sends.

        An empty list still needs the dimension for its (0, dim) shape, which
        costs one probe request if nothing was embedded before. A zero vector
        stays zero rather than becoming NaN.
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        step = self._batch_size
        batches = [self._embed_batch(texts[i : i + step]) for i in range(0, len(texts), step)]
        return _normalised(np.concatenate(batches))

    def _embed_batch(self, batch: list[str]) -> np.ndarray:
        """One request, checked for one vector per text, all of the model's one size."""
        vectors = self._request(batch)
        if len(vectors) != len(batch):
            raise ModelError(
                f"Ollama model '{self._model}' returned {len(vectors)} vectors "
                f"for {len(batch)} texts"
            )
        sizes = {len(vector) for vector in vectors}
        if len(sizes) != 1 or 0 in sizes:
            raise ModelError(f"Ollama model '{self._model}' returned vectors of unequal lengths")
        (size,) = sizes
        if self._dim is not None and size != self._dim:
            raise ModelError(
                f"Ollama model '{self._model}' returned {size}-dim vectors "
                f"after {self._dim}-dim ones"
            )
        self._dim = size
        return np.asarray(vectors, dtype=np.float32)

    def _request(self, batch: list[str]) -> Sequence[Sequence[float]]:
        """Call the server, turning every way it can fail into one readable line."""
        import httpx
        import ollama

        try:
            answer = self._get_client().embed(model=self._model, input=batch)
        except ollama.ResponseError as error:
            raise self._response_error(error) from error
        except ConnectionError as error:
            raise ModelError(
                f"cannot reach Ollama at {self._shown}: is `ollama serve` running? "
                "(set OLLAMA_HOST or `memctl config set ollama.host URL`)"
            ) from error
        except httpx.TimeoutException as error:
            raise ModelError(
                f"Ollama at {self._shown} did not answer within {self._timeout:g} s"
            ) from error
        except httpx.TransportError as error:
            detail = _one_line(str(error))
            raise ModelError(f"lost connection to Ollama at {self._shown}: {detail}") from error
        except ValueError as error:  # invalid JSON, or JSON without the embeddings
            raise ModelError(f"Ollama at {self._shown} sent an unreadable answer") from error
        return answer.embeddings

    def _response_error(self, error: ollama.ResponseError) -> ModelError:
        """Ollama answers an unpulled model with 404; anything else is passed on."""
        message = _one_line(str(error.error))
        if error.status_code == 404 and "not found" in message:
            return ModelError(
                f"Ollama has no model '{self._model}': run `ollama pull {self._model}`"
            )
        return ModelError(
            f"Ollama could not embed with '{self._model}': {message} (HTTP {error.status_code})"
        )

    def _get_client(self) -> ollama.Client:
        """One client per embedder, so batches reuse the connection."""
        import ollama

        if self._client is None:
            self._client = ollama.Client(host=self._host, timeout=self._timeout)
        return self._client


def _normalised(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; all-zero rows are left as they are."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def _one_line(text: str) -> str:
    """Server messages may span lines; a ModelError is shown as one."""
    return " ".join(text.split())
