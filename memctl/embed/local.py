"""all-MiniLM-L6-v2 sentence embeddings without torch: the weights read (and packed for
fast loading), the text tokenised, and the numpy forward pass (``embed.bert``) run over
batches of similar lengths, in threads when cores are idle. Doing it in numpy keeps torch
(hundreds of MB, slow to import) out of memctl, with vectors within float32 rounding of the
reference implementation.

This module is imported only when vectors are needed, so importing numpy at the
top is fine; the weights themselves are read on the first ``embed()`` call.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import time
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from memctl.embed import bert
from memctl.embed.bert import DIM, HEAD_DIM, LAYERS, Layer, Weights
from memctl.embed.model_files import MAX_TOKENS, MODEL_NAME, resolve_model_dir
from memctl.embed.packed import load_packed, packed_source, save_packed
from memctl.embed.wordpiece import WordPiece
from memctl.errors import ModelError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tokenizers import Tokenizer

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
# The packed weights' layout: a pack of another one is written again (v2: the column blocks
# of bert.SMALL_ROWS products).
PACK_LAYOUT = "v2"


def _load_weights(path: Path) -> Weights:
    """Read the safetensors file into the layout the forward pass wants."""
    from safetensors.numpy import load_file

    raw = load_file(str(path))

    def get(name: str) -> np.ndarray:
        return np.ascontiguousarray(raw[name], dtype=np.float32)

    def linear(name: str) -> tuple[np.ndarray, np.ndarray]:
        return np.ascontiguousarray(get(f"{name}.weight").T), get(f"{name}.bias")

    def layer(i: int) -> Layer:
        p = f"encoder.layer.{i}"
        # Scaling the query by 1/sqrt(head_dim) here saves a pass over every score matrix.
        scale = np.float32(1.0 / math.sqrt(HEAD_DIM))
        q_w, q_b = linear(f"{p}.attention.self.query")
        k_w, k_b = linear(f"{p}.attention.self.key")
        v_w, v_b = linear(f"{p}.attention.self.value")
        attn_out_w, attn_out_b = linear(f"{p}.attention.output.dense")
        inter_w, inter_b = linear(f"{p}.intermediate.dense")
        out_w, out_b = linear(f"{p}.output.dense")
        qkv_w = np.ascontiguousarray(np.concatenate([q_w * scale, k_w, v_w], axis=1))
        return Layer(
            qkv_w=qkv_w,
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
            qkv_blocks=bert.column_blocks(qkv_w),
            attn_out_blocks=bert.column_blocks(attn_out_w),
            inter_blocks=bert.column_blocks(inter_w),
        )

    return Weights(
        word=get("embeddings.word_embeddings.weight"),
        position=get("embeddings.position_embeddings.weight"),
        token_type=get("embeddings.token_type_embeddings.weight"),
        norm_g=get("embeddings.LayerNorm.weight"),
        norm_b=get("embeddings.LayerNorm.bias"),
        layers=tuple(layer(i) for i in range(LAYERS)),
    )


def _flatten(weights: Weights) -> dict[str, np.ndarray]:
    flat = {f.name: getattr(weights, f.name) for f in fields(Weights) if f.name != "layers"}
    for i, layer in enumerate(weights.layers):
        flat.update({f"{i}.{f.name}": getattr(layer, f.name) for f in fields(Layer)})
    return flat


def _unflatten(flat: dict[str, np.ndarray]) -> Weights:
    layers = tuple(
        Layer(**{f.name: flat[f"{i}.{f.name}"] for f in fields(Layer)}) for i in range(LAYERS)
    )
    top = {f.name: flat[f.name] for f in fields(Weights) if f.name != "layers"}
    return Weights(**top, layers=layers)


def _cached_weights(path: Path, cache_dir: Path | None) -> Weights:
    """The weights from the packed cache when it was made from this very file, else from
    safetensors (writing the cache for next time; a cache that cannot be written is skipped).
    """
    if cache_dir is None:
        return _load_weights(path)
    stat = path.stat()
    source = f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}:{PACK_LAYOUT}"
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
        batches = list(bert.batches([len(row) for row in rows], self._batch_size))

        def forward(batch: slice) -> None:
            ids, mask = bert.pad(rows[batch])
            out[order[batch]] = bert.forward(model.weights, ids, mask)

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

    def _load(self) -> tuple[Tokenizer, Weights]:
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

    def __init__(self, directory: Path, weights: Weights, plain: WordPiece | None) -> None:
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
