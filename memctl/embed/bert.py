"""The forward pass of all-MiniLM-L6-v2 in plain numpy: a 6-layer BERT (hidden 384, 12
heads), mean pooling and L2 normalisation, exactly as sentence-transformers runs it, within
float32 rounding of its vectors (``embed.local`` reads the weights and the tokens into it).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

DIM = 384
HEADS = 12
HEAD_DIM = DIM // HEADS
LAYERS = 6
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
# A product of at most SMALL_ROWS rows (a query's tokens) by a 384-row weight runs as one
# product per block of COLUMN_BLOCK columns, each block stored apart (``column_blocks``):
# OpenBLAS copies ("packs") the whole weight for every product, which for a few rows costs
# as much as the arithmetic; a narrow block is cheap to pack. Measured (one thread, this
# machine's SkylakeX kernels): 10 rows by 384 x 1536, 2.2 -> 1.2 ms for six layers' weights;
# 40 rows 4.2 -> 3.6; 64 rows slower (docs/benchmarks.md, s37-speed). Here the vectors are
# the same to the bit (1,187 texts, one at a time, in pairs and batched): a block's dot
# products add the same 384 terms in the same order; another BLAS may differ in the last
# bits. The 1536-row output weight is not cut: its blocked products add in another order.
SMALL_ROWS = 48
COLUMN_BLOCK = 64


@dataclass(frozen=True)
class Layer:
    """One transformer layer, weights pre-transposed so that ``x @ w`` applies them."""

    qkv_w: np.ndarray  # (384, 1152): query (pre-scaled), key and value fused in one matmul
    qkv_b: np.ndarray
    attn_out_w: np.ndarray
    attn_out_b: np.ndarray
    attn_norm_g: np.ndarray
    attn_norm_b: np.ndarray
    inter_w: np.ndarray
    inter_b: np.ndarray
    # the same three weights as ``column_blocks``, for products of at most SMALL_ROWS rows
    qkv_blocks: np.ndarray
    attn_out_blocks: np.ndarray
    inter_blocks: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    out_norm_g: np.ndarray
    out_norm_b: np.ndarray


@dataclass(frozen=True)
class Weights:
    """Everything the forward pass reads, as float32 arrays."""

    word: np.ndarray
    position: np.ndarray
    token_type: np.ndarray
    norm_g: np.ndarray
    norm_b: np.ndarray
    layers: tuple[Layer, ...]


def layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray) -> np.ndarray:
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


def gelu_inplace(x: np.ndarray) -> np.ndarray:
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


def softmax(q: np.ndarray, k_t: np.ndarray, lengths: np.ndarray) -> np.ndarray:
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


def column_blocks(weight: np.ndarray) -> np.ndarray:
    """(columns / COLUMN_BLOCK, rows, COLUMN_BLOCK): each block of the weight's columns
    contiguous, in order."""
    rows, columns = weight.shape
    blocks = weight.reshape(rows, columns // COLUMN_BLOCK, COLUMN_BLOCK).transpose(1, 0, 2)
    return np.ascontiguousarray(blocks)


def _dense(
    x: np.ndarray, weight: np.ndarray, bias: np.ndarray, blocks: np.ndarray | None = None
) -> np.ndarray:
    """x @ weight + bias; for a few rows, by the weight's ``blocks`` (SMALL_ROWS)."""
    if blocks is not None and x.shape[0] <= SMALL_ROWS:
        out = np.matmul(x, blocks).transpose(1, 0, 2).reshape(x.shape[0], weight.shape[1])
    else:
        out = x @ weight
    out += bias
    return out


def _attention(x: np.ndarray, lengths: np.ndarray, layer: Layer) -> np.ndarray:
    """Multi-head self-attention over sentences stacked in ``x`` (rows = tokens), each
    padded to the same width; ``lengths`` are their real token counts.

    The scores are made and used a few sentences at a time (at most SCORE_BLOCK_BYTES),
    so that they stay in the core's cache between the product, exp() and the sums.
    """
    batch = len(lengths)
    tokens = x.shape[0] // batch
    qkv = _dense(x, layer.qkv_w, layer.qkv_b, layer.qkv_blocks).reshape(
        batch, tokens, 3, HEADS, HEAD_DIM
    )
    q, k, v = qkv.transpose(2, 0, 3, 1, 4)  # each (batch, heads, tokens, head_dim)
    k_t = k.transpose(0, 1, 3, 2)
    context = np.empty((batch, tokens, HEADS, HEAD_DIM), dtype=np.float32)
    step = max(1, SCORE_BLOCK_BYTES // (HEADS * tokens * tokens * 4))
    for start in range(0, batch, step):
        rows = slice(start, start + step)
        weights = softmax(q[rows], k_t[rows], lengths[rows])
        context[rows] = (weights @ v[rows]).transpose(0, 2, 1, 3)
    return _dense(
        context.reshape(x.shape), layer.attn_out_w, layer.attn_out_b, layer.attn_out_blocks
    )


def _feed_forward(x: np.ndarray, layer: Layer) -> np.ndarray:
    """Dense 1536, GELU, dense 384, a block of rows at a time.

    The (rows, 1536) hidden array is the widest in the model; in blocks it stays
    in cache and its size no longer grows with the batch (measured 20% faster).
    """
    out = np.empty_like(x)
    for start in range(0, x.shape[0], FFN_BLOCK_ROWS):
        rows = slice(start, start + FFN_BLOCK_ROWS)
        hidden = gelu_inplace(_dense(x[rows], layer.inter_w, layer.inter_b, layer.inter_blocks))
        np.matmul(hidden, layer.out_w, out=out[rows])
    out += layer.out_b
    return out


def _transformer_layer(x: np.ndarray, lengths: np.ndarray, layer: Layer) -> np.ndarray:
    """One BERT layer on (batch * tokens, 384) rows: 2-D matmuls are one BLAS call each."""
    attended = _attention(x, lengths, layer)
    attended += x
    x = layer_norm(attended, layer.attn_norm_g, layer.attn_norm_b)
    out = _feed_forward(x, layer)
    out += x
    return layer_norm(out, layer.out_norm_g, layer.out_norm_b)


def forward(weights: Weights, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean-pooled, L2-normalised sentence vectors for one padded batch of token ids.

    Inputs are single sentences, so every token has token type 0.
    """
    batch, tokens = ids.shape
    x = weights.word[ids] + weights.position[:tokens] + weights.token_type[0]
    x = layer_norm(x.reshape(batch * tokens, DIM), weights.norm_g, weights.norm_b)
    lengths = mask.sum(axis=1).astype(np.int64)
    for layer in weights.layers:
        x = _transformer_layer(x, lengths, layer)
    summed = np.einsum("btd,bt->bd", x.reshape(batch, tokens, DIM), mask)
    pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1.0)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return pooled / np.maximum(norms, np.float32(1e-12))


def pad(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Right-pad token rows with id 0 to the longest; returns (ids, float32 mask)."""
    width = max(len(row) for row in rows)
    ids = np.zeros((len(rows), width), dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.float32)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = row
        mask[i, : len(row)] = 1.0
    return ids, mask


def batches(lengths: list[int], batch_size: int) -> Iterator[slice]:
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
