"""all-MiniLM-L6-v2 sentence embeddings computed in plain numpy.

The model is a 6-layer BERT (hidden 384, 12 heads) followed by mean pooling and
L2 normalisation, exactly as sentence-transformers runs it. Doing the forward
pass in numpy keeps torch (hundreds of MB, slow to import) out of memctl while
giving vectors within float32 rounding of the reference implementation.

This module is imported only when vectors are needed, so importing numpy at the
top is fine; the weights themselves are read on the first ``embed()`` call.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from memctl.embed.model_files import MODEL_NAME, resolve_model_dir
from memctl.embed.packed import load_packed, packed_source, save_packed
from memctl.embed.wordpiece import WordPiece
from memctl.errors import ModelError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tokenizers import Tokenizer

DIM = 384
HEADS = 12
HEAD_DIM = DIM // HEADS
LAYERS = 6
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
LAYER_NORM_EPS = 1e-12
# Attention scores are exponentiated unshifted while none exceeds this: float32 exp()
# overflows above 88.7, and a row of 256 terms of e^80 sums to 1.4e37 < 3.4e38.
EXP_SAFE = 80.0
# Below this a row's unshifted sum may have lost its precision (float32's smallest
# normal number is 1.2e-38); such rows are redone shifted by their maximum.
SMALLEST_ROW_SUM = 1e-30
# Padded tokens per forward pass at most: bounds memory (a layer's arrays grow with
# batch * tokens) whatever embed.batch_size is set to.
MAX_BATCH_TOKENS = 16384
# Attention scores made at once, at most (a few sentences' worth): kept in a core's cache,
# texts of ~160 tokens cost 6-14 % less CPU than with a whole batch's scores at once, and
# the vectors are the same (docs/benchmarks.md, "Bulk import of memories").
SCORE_BLOCK_BYTES = 256 << 10
FFN_BLOCK_ROWS = 256
# numpy's BLAS threads once the embedder loads, unless OPENBLAS_NUM_THREADS says
# otherwise. OpenBLAS threads spin while they wait: with two on a busy 2-core machine
# a 400-character text cost 130-145 ms of CPU instead of 27 (benchmarks/embed_speed.py),
# and what writes embed runs beside the assistant the user is waiting for.
BLAS_THREADS = 1
# Forward passes of one call run side by side in this many threads at most, when as many
# cores are idle: numpy releases the GIL in its products and element-wise loops, and each
# thread's BLAS stays at one thread, so nothing spins. Measured on 2 cores only.
MAX_EMBED_THREADS = 2
# The kernel's load average (os.getloadavg()[0]) is a 1-minute exponential mean of the
# running threads, this process's own among them: ``_Cores`` keeps its own share alike.
LOAD_WINDOW_SECONDS = 60.0


@dataclass(frozen=True)
class _Layer:
    """One transformer layer, weights pre-transposed so that ``x @ w`` applies them."""

    qkv_w: np.ndarray  # (384, 1152): query (pre-scaled), key and value fused in one matmul
    qkv_b: np.ndarray
    attn_out_w: np.ndarray
    attn_out_b: np.ndarray
    attn_norm_g: np.ndarray
    attn_norm_b: np.ndarray
    inter_w: np.ndarray
    inter_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    out_norm_g: np.ndarray
    out_norm_b: np.ndarray


@dataclass(frozen=True)
class _Weights:
    """Everything the forward pass reads, as float32 arrays."""

    word: np.ndarray
    position: np.ndarray
    token_type: np.ndarray
    norm_g: np.ndarray
    norm_b: np.ndarray
    layers: tuple[_Layer, ...]


def _load_weights(path: Path) -> _Weights:
    """Read the safetensors file into the layout the forward pass wants."""
    from safetensors.numpy import load_file

    raw = load_file(str(path))

    def get(name: str) -> np.ndarray:
        return np.ascontiguousarray(raw[name], dtype=np.float32)

    def linear(name: str) -> tuple[np.ndarray, np.ndarray]:
        return np.ascontiguousarray(get(f"{name}.weight").T), get(f"{name}.bias")

    def layer(i: int) -> _Layer:
        p = f"encoder.layer.{i}"
        # Scaling the query by 1/sqrt(head_dim) here saves a pass over every score matrix.
        scale = np.float32(1.0 / math.sqrt(HEAD_DIM))
        q_w, q_b = linear(f"{p}.attention.self.query")
        k_w, k_b = linear(f"{p}.attention.self.key")
        v_w, v_b = linear(f"{p}.attention.self.value")
        attn_out_w, attn_out_b = linear(f"{p}.attention.output.dense")
        inter_w, inter_b = linear(f"{p}.intermediate.dense")
        out_w, out_b = linear(f"{p}.output.dense")
        return _Layer(
            qkv_w=np.ascontiguousarray(np.concatenate([q_w * scale, k_w, v_w], axis=1)),
            qkv_b=np.concatenate([q_b * scale, k_b, v_b]),
            attn_out_w=attn_out_w,
            attn_out_b=attn_out_b,
            attn_norm_g=get(f"{p}.attention.output.LayerNorm.weight"),
            attn_norm_b=get(f"{p}.attention.output.LayerNorm.bias"),
            inter_w=inter_w,
            inter_b=inter_b,
            out_w=out_w,
            out_b=out_b,
            out_norm_g=get(f"{p}.output.LayerNorm.weight"),
            out_norm_b=get(f"{p}.output.LayerNorm.bias"),
        )

    return _Weights(
        word=get("embeddings.word_embeddings.weight"),
        position=get("embeddings.position_embeddings.weight"),
        token_type=get("embeddings.token_type_embeddings.weight"),
        norm_g=get("embeddings.LayerNorm.weight"),
        norm_b=get("embeddings.LayerNorm.bias"),
        layers=tuple(layer(i) for i in range(LAYERS)),
    )


def _flatten(weights: _Weights) -> dict[str, np.ndarray]:
    flat = {f.name: getattr(weights, f.name) for f in fields(_Weights) if f.name != "layers"}
    for i, layer in enumerate(weights.layers):
        flat.update({f"{i}.{f.name}": getattr(layer, f.name) for f in fields(_Layer)})
    return flat


def _unflatten(flat: dict[str, np.ndarray]) -> _Weights:
    layers = tuple(
        _Layer(**{f.name: flat[f"{i}.{f.name}"] for f in fields(_Layer)}) for i in range(LAYERS)
    )
    top = {f.name: flat[f.name] for f in fields(_Weights) if f.name != "layers"}
    return _Weights(**top, layers=layers)


def _cached_weights(path: Path, cache_dir: Path | None) -> _Weights:
    """The weights from the packed cache when it was made from this very file, else from
    safetensors (writing the cache for next time; a cache that cannot be written is skipped).
    """
    if cache_dir is None:
        return _load_weights(path)
    stat = path.stat()
    source = f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}:v1"
    packed = packed_path(cache_dir, path)
    flat = load_packed(packed, source)
    if flat is not None:
        with contextlib.suppress(KeyError, TypeError):
            return _unflatten(flat)
    weights = _load_weights(path)
    with contextlib.suppress(OSError):
        save_packed(packed, _flatten(weights), source)
        _prune_packed(cache_dir, packed)
    return weights


def packed_path(cache_dir: Path, model_file: Path) -> Path:
    """The packed weights of one installed copy of the model, named by its place: two
    installs (pipx's and a project's virtualenv, say) sharing one file rewrote it in turn,
    ~1 s and 87 MB written whenever a process of the other one embedded."""
    where = hashlib.sha256(str(model_file.resolve()).encode()).hexdigest()[:12]
    return cache_dir / f"{MODEL_NAME}-{where}.f32pack"


def _prune_packed(cache_dir: Path, keep: Path) -> None:
    """Remove the packed weights of copies of the model that are gone (and the one file
    of memctl before packs were named by place)."""
    for other in cache_dir.glob(f"{MODEL_NAME}*.f32pack"):
        source = packed_source(other)
        model_file = source.rsplit(":", 3)[0] if source else ""
        if other != keep and (not model_file or not Path(model_file).exists()):
            other.unlink(missing_ok=True)


def _load_tokenizer(path: Path) -> Tokenizer:
    """The model's tokenizer, truncating at 256 tokens and never padding.

    The shipped tokenizer.json pads and truncates everything to 128 tokens;
    sentence-transformers overrides that with max_seq_length 256, and padding
    is done per batch by ``_pad`` after sorting texts by token count.

    tokenizer.json describes a plain BERT pipeline (lower-casing normaliser, BERT
    pre-tokenizer, WordPiece, [CLS] ... [SEP]); built from vocab.txt, when it is
    there, the same tokenizer loads in about half the time, which every `memctl
    recall` process pays. tests/embed/test_embed_local.py checks that both give the same ids.
    """
    from tokenizers import Tokenizer

    vocab = path.with_name("vocab.txt")
    tokenizer = _bert_tokenizer(vocab) if vocab.is_file() else Tokenizer.from_file(str(path))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()
    return tokenizer


def _bert_tokenizer(vocab: Path) -> Tokenizer:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    wordpiece = models.WordPiece.from_file(
        str(vocab), unk_token="[UNK]", max_input_chars_per_word=100
    )
    tokenizer = Tokenizer(wordpiece)
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    cls, sep = wordpiece.token_to_id("[CLS]"), wordpiece.token_to_id("[SEP]")
    if cls is None or sep is None:
        raise ValueError(f"{vocab} has no [CLS] or [SEP] token")
    tokenizer.post_processor = processors.BertProcessing(("[SEP]", sep), ("[CLS]", cls))
    return tokenizer


def _layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """LayerNorm over the last axis; normalises one copy of ``x`` in place to spare memory."""
    out = x - x.mean(axis=-1, keepdims=True)
    out /= np.sqrt(np.mean(np.square(out), axis=-1, keepdims=True) + np.float32(LAYER_NORM_EPS))
    out *= gain
    out += bias
    return out


# Abramowitz & Stegun 7.1.26, erfc(z) ~ t*poly(t)*exp(-z^2) with t = 1/(1+p*z), z >= 0:
# |error| < 1.5e-7, below float32 resolution. Coefficients from a5 down to a1.
_ERF_P = np.float32(0.3275911)
_ERF_A = tuple(
    np.float32(a) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)
)
_INV_SQRT2 = np.float32(1.0 / math.sqrt(2.0))


def _gelu_inplace(x: np.ndarray) -> np.ndarray:
    """x * Phi(x), overwriting x: the exact (erf) GELU BERT was trained with.

    The tanh approximation is 3e-4 off the reference vectors, and numpy has no
    erf without scipy, hence the polynomial. Every step works in place: on
    (tokens, 1536) arrays fresh temporaries cost more than the arithmetic.
    """
    z = np.abs(x)
    z *= _INV_SQRT2
    t = z * _ERF_P
    t += 1.0
    np.reciprocal(t, out=t)
    poly = t * _ERF_A[0]
    for a in _ERF_A[1:]:
        poly += a
        poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # erfc(|x| / sqrt 2)
    poly *= -0.5
    poly += 0.5  # erf(|x| / sqrt 2) / 2
    np.copysign(poly, x, out=poly)
    poly += 0.5  # Phi(x)
    x *= poly
    return x


def _exp_rows(scores: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
    """Softmax numerators of (batch, heads, tokens, tokens) ``scores``, in place and not
    shifted, with the keys past each sentence's length (its padding) at 0; None when that
    is unsafe (a score large enough for exp() to overflow, or a row whose every term
    vanished), and ``scores`` is then spent.

    Softmax is the same whatever constant a row is shifted by: the shift by the row's
    maximum only keeps exp() finite, and rows of ~100 reduce slowly (a third of the
    softmax's time). BERT's scores stay far inside exp()'s range, so one maximum of
    the whole array decides. Padding keys are zeroed after exp(), a few slices at
    the end of each row, instead of a mask added to every score before it.
    """
    if scores.max() > EXP_SAFE:
        return None
    np.exp(scores, out=scores)
    for row, length in enumerate(lengths):
        scores[row, :, :, length:] = 0.0
    return scores


def _softmax(q: np.ndarray, k_t: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Attention weights softmax(q @ k_t) over each sentence's own tokens.

    Rows are summed by a product with a column of ones: 2.5x faster than ``sum``.
    """
    weights = _exp_rows(q @ k_t, lengths)
    ones = np.ones((k_t.shape[-1], 1), dtype=np.float32)
    sums = None if weights is None else weights @ ones
    if weights is None or sums is None or not sums.min() >= SMALLEST_ROW_SUM:
        weights = q @ k_t  # the rare safe way: shift each row by its own maximum
        for row, length in enumerate(lengths):
            weights[row, :, :, length:] = -np.inf
        weights -= weights.max(axis=-1, keepdims=True)
        np.exp(weights, out=weights)
        sums = weights @ ones
    np.reciprocal(sums, out=sums)
    weights *= sums
    return weights


def _dense(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    out = x @ weight
    out += bias
    return out


def _attention(x: np.ndarray, lengths: np.ndarray, layer: _Layer) -> np.ndarray:
    """Multi-head self-attention over sentences stacked in ``x`` (rows = tokens), each
    padded to the same width; ``lengths`` are their real token counts.

    The scores are made and used a few sentences at a time (at most SCORE_BLOCK_BYTES),
    so that they stay in the core's cache between the product, exp() and the sums.
    """
    batch = len(lengths)
    tokens = x.shape[0] // batch
    qkv = _dense(x, layer.qkv_w, layer.qkv_b).reshape(batch, tokens, 3, HEADS, HEAD_DIM)
    q, k, v = qkv.transpose(2, 0, 3, 1, 4)  # each (batch, heads, tokens, head_dim)
    k_t = k.transpose(0, 1, 3, 2)
    context = np.empty((batch, tokens, HEADS, HEAD_DIM), dtype=np.float32)
    step = max(1, SCORE_BLOCK_BYTES // (HEADS * tokens * tokens * 4))
    for start in range(0, batch, step):
        rows = slice(start, start + step)
        weights = _softmax(q[rows], k_t[rows], lengths[rows])
        context[rows] = (weights @ v[rows]).transpose(0, 2, 1, 3)
    return _dense(context.reshape(x.shape), layer.attn_out_w, layer.attn_out_b)


def _feed_forward(x: np.ndarray, layer: _Layer) -> np.ndarray:
    """Dense 1536, GELU, dense 384, a block of rows at a time.

    The (rows, 1536) hidden array is the widest in the model; in blocks it stays
    in cache and its size no longer grows with the batch (measured 20% faster).
    """
    out = np.empty_like(x)
    for start in range(0, x.shape[0], FFN_BLOCK_ROWS):
        rows = slice(start, start + FFN_BLOCK_ROWS)
        hidden = _gelu_inplace(_dense(x[rows], layer.inter_w, layer.inter_b))
        np.matmul(hidden, layer.out_w, out=out[rows])
    out += layer.out_b
    return out


def _transformer_layer(x: np.ndarray, lengths: np.ndarray, layer: _Layer) -> np.ndarray:
    """One BERT layer on (batch * tokens, 384) rows: 2-D matmuls are one BLAS call each."""
    attended = _attention(x, lengths, layer)
    attended += x
    x = _layer_norm(attended, layer.attn_norm_g, layer.attn_norm_b)
    out = _feed_forward(x, layer)
    out += x
    return _layer_norm(out, layer.out_norm_g, layer.out_norm_b)


def _forward(weights: _Weights, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean-pooled, L2-normalised sentence vectors for one padded batch of token ids.

    Inputs are single sentences, so every token has token type 0.
    """
    batch, tokens = ids.shape
    x = weights.word[ids] + weights.position[:tokens] + weights.token_type[0]
    x = _layer_norm(x.reshape(batch * tokens, DIM), weights.norm_g, weights.norm_b)
    lengths = mask.sum(axis=1).astype(np.int64)
    for layer in weights.layers:
        x = _transformer_layer(x, lengths, layer)
    summed = np.einsum("btd,bt->bd", x.reshape(batch, tokens, DIM), mask)
    pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1.0)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return pooled / np.maximum(norms, np.float32(1e-12))


def _pad(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Right-pad token rows with id 0 to the longest; returns (ids, float32 mask)."""
    width = max(len(row) for row in rows)
    ids = np.zeros((len(rows), width), dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.float32)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = row
        mask[i, : len(row)] = 1.0
    return ids, mask


def _batches(lengths: list[int], batch_size: int) -> Iterator[slice]:
    """Consecutive slices of ascending ``lengths``, each one forward pass.

    A slice holds at most ``batch_size`` texts and, padded to its longest, at
    most MAX_BATCH_TOKENS tokens (one text alone may exceed it: 256 is the cap).
    """
    start = 0
    while start < len(lengths):
        longest = lengths[min(start + batch_size, len(lengths)) - 1]
        size = max(1, min(batch_size, MAX_BATCH_TOKENS // longest))
        yield slice(start, start + size)
        start += size


def idle_threads(cores: int, load: float, own: float) -> int:
    """Threads for forward passes: the cores that the load average less this embedder's
    ``own`` share leaves idle, rounded, between 1 and MAX_EMBED_THREADS."""
    return max(1, min(MAX_EMBED_THREADS, cores, round(cores - max(0.0, load - own))))


class _Cores:
    """How many threads the next forward passes may use: the cores that others (every
    running thread but this embedder's) leave idle, from the load average."""

    def __init__(self) -> None:
        self.own, self.at = 0.0, time.monotonic()  # this embedder's share of the load

    def _decay(self) -> float:
        now = time.monotonic()
        factor, self.at = math.exp(-(now - self.at) / LOAD_WINDOW_SECONDS), now
        return factor

    def idle(self) -> int:
        self.own *= self._decay()
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):  # no load average here: do not guess
            return 1
        return idle_threads(os.cpu_count() or 1, load, self.own)

    def ran(self, threads: int) -> None:
        """``threads`` ran since the last call: the kernel's average moved toward them."""
        self.own = threads + (self.own - threads) * self._decay()


def _threads_allowed() -> bool:
    """Threads of our own only while numpy's BLAS runs one (ours or the user's setting)."""
    return os.environ.get("OPENBLAS_NUM_THREADS", str(BLAS_THREADS)) == "1"


class LocalEmbedder:
    """The default embedder: all-MiniLM-L6-v2, 384 dimensions, CPU only, no torch."""

    def __init__(
        self,
        model_dir: Path | str | None = None,
        batch_size: int = 32,
        cache_dir: Path | None = None,
        threads: int | None = None,
    ) -> None:
        """``model_dir`` empty or None finds the model itself; nothing is read until ``embed``.
        ``cache_dir`` keeps the weights laid out for fast loading (embed/packed.py).
        ``threads`` fixes how many forward passes run at once; None: as many as cores
        are idle (at most MAX_EMBED_THREADS), decided at every call."""
        self._model_dir = Path(model_dir).expanduser() if model_dir else None
        self._cache_dir = cache_dir
        self._batch_size = max(1, batch_size)
        self._threads = threads
        self._cores = _Cores()
        self._loaded: _Model | None = None

    @property
    def name(self) -> str:
        return f"local:{MODEL_NAME}"

    @property
    def dim(self) -> int:
        return DIM

    def embed(self, texts: list[str]) -> np.ndarray:
        """Vectors for ``texts`` in their order; batches are formed from similar lengths."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        model = self._model()
        ids = model.token_ids(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
        rows = [ids[i] for i in order]
        out = np.empty((len(texts), DIM), dtype=np.float32)
        batches = list(_batches([len(row) for row in rows], self._batch_size))

        def forward(batch: slice) -> None:
            ids, mask = _pad(rows[batch])
            out[order[batch]] = _forward(model.weights, ids, mask)

        threads = min(len(batches), self._thread_count()) if len(batches) > 1 else 1
        if threads == 1:
            for batch in batches:
                forward(batch)
        else:  # imported here: concurrent.futures brings logging (~8 ms a recall process)
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(threads, thread_name_prefix="memctl-embed") as pool:
                list(pool.map(forward, batches))
        self._cores.ran(threads)
        return out

    def _thread_count(self) -> int:
        if self._threads is not None:
            return max(1, self._threads)
        return self._cores.idle() if _threads_allowed() else 1

    def _load(self) -> tuple[Tokenizer, _Weights]:
        """The ``tokenizers`` tokenizer and the weights (loaded once)."""
        model = self._model()
        return model.tokenizer(), model.weights

    def _model(self) -> _Model:
        """The weights and the tokenizers, read once, on first use."""
        if self._loaded is None:
            if "OPENBLAS_NUM_THREADS" not in os.environ:  # the user's setting wins
                from threadpoolctl import threadpool_limits

                threadpool_limits(BLAS_THREADS, "blas")  # for the rest of the process
            directory = resolve_model_dir(self._model_dir)
            with _loading(directory):
                key = _files_key(directory, self._cache_dir)
                loaded = _LOADED.get(key)
                if loaded is None:
                    loaded = _LOADED[key] = _Model.load(directory, self._cache_dir)
                self._loaded = loaded
        return self._loaded


@contextlib.contextmanager
def _loading(directory: Path) -> Iterator[None]:
    """A model file that cannot be read is a ModelError naming the directory."""
    try:
        yield
    except Exception as exc:  # safetensors and tokenizers raise their own types
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ModelError(f"cannot load the local model from {directory}: {reason}") from exc


class _Model:
    """One copy of the model: its weights, and its tokenizers. ASCII text is tokenized in
    plain Python from vocab.txt (``memctl.embed.wordpiece``: a recall then never loads
    ``tokenizers``, ~20 ms of CPU); other text, or every text without a vocab.txt, by
    ``tokenizers`` from tokenizer.json, loaded at its first such text."""

    def __init__(self, directory: Path, weights: _Weights, plain: WordPiece | None) -> None:
        self.directory = directory
        self.weights = weights
        self.plain = plain
        self._tokenizer: Tokenizer | None = None

    @classmethod
    def load(cls, directory: Path, cache_dir: Path | None) -> _Model:
        vocab = directory / "vocab.txt"
        plain = WordPiece.from_file(vocab, MAX_TOKENS) if vocab.is_file() else None
        return cls(directory, _cached_weights(directory / "model.safetensors", cache_dir), plain)

    def tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            with _loading(self.directory):
                self._tokenizer = _load_tokenizer(self.directory / "tokenizer.json")
        return self._tokenizer

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's token ids, [CLS] and [SEP] included, truncated to MAX_TOKENS."""
        plain = self.plain
        ids: list[list[int] | None] = [
            plain.ids(text) if plain is not None and text.isascii() else None for text in texts
        ]
        others = [i for i, found in enumerate(ids) if found is None]
        if others:
            encoded = self.tokenizer().encode_batch([texts[i] for i in others])
            for i, encoding in zip(others, encoded, strict=True):
                ids[i] = encoding.ids
        return [found for found in ids if found is not None]


# Models this process loaded, by their files as they were: every embedder of the process
# shares them (the resident recall process loads once for all its requests); a model
# installed again since, or its packed weights written again, is loaded again.
_LOADED: dict[tuple[object, ...], _Model] = {}


def _files_key(directory: Path, cache_dir: Path | None) -> tuple[object, ...]:
    files = [directory / name for name in ("tokenizer.json", "vocab.txt", "model.safetensors")]
    if cache_dir is not None:
        files.append(packed_path(cache_dir, files[2]))
    seen: list[tuple[int, int, int] | None] = []
    for path in files:
        try:
            stat = path.stat()
            seen.append((stat.st_ino, stat.st_size, stat.st_mtime_ns))
        except OSError:  # no vocab.txt, or no packed weights (yet, or where they cannot be)
            seen.append(None)
    return (directory.resolve(), cache_dir, *seen)
