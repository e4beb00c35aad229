"""The numpy MiniLM embedder against vectors from the real sentence-transformers.

The fixture was made once by tests/fixtures/make_minilm_reference.py in a
throwaway venv with torch; these tests need only numpy and the model wheel.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memctl.embed import bert, local, model_files
from memctl.embed.local import LocalEmbedder
from memctl.errors import ModelError
from tests.conftest import python_c

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "minilm_reference.json"
REFERENCE = json.loads(FIXTURE.read_text(encoding="utf-8"))
TEXTS = [item["text"] for item in REFERENCE["items"]]
VECTORS = np.array([item["vector"] for item in REFERENCE["items"]], dtype=np.float32)


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    """One embedder for the module: loading the weights is the slow part."""
    return LocalEmbedder()


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity."""
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_identity(embedder: LocalEmbedder) -> None:
    assert embedder.name == "local:all-MiniLM-L6-v2"
    assert embedder.dim == 384


@pytest.mark.parametrize("index", range(len(TEXTS)), ids=[t[:30] or "<empty>" for t in TEXTS])
def test_matches_sentence_transformers(embedder: LocalEmbedder, index: int) -> None:
    vector = embedder.embed([TEXTS[index]])
    assert cosines(vector, VECTORS[index : index + 1])[0] >= 0.999


def test_close_enough_to_tell_exact_gelu_from_tanh_gelu(embedder: LocalEmbedder) -> None:
    """Cosine alone cannot: the tanh GELU approximation still scores 0.999998 but is 3e-4 off."""
    np.testing.assert_allclose(embedder.embed(TEXTS), VECTORS, rtol=0, atol=1e-5)


def test_fixture_exercises_truncation() -> None:
    assert max(item["tokens_untruncated"] for item in REFERENCE["items"]) > 256


def test_text_past_256_tokens_is_ignored(embedder: LocalEmbedder) -> None:
    long_text = max(TEXTS, key=len)
    vectors = embedder.embed([long_text, long_text + " Completely unrelated closing words."])
    # Equal up to float32 rounding: BLAS may sum the two rows in a different order.
    np.testing.assert_allclose(vectors[0], vectors[1], rtol=0, atol=1e-6)


def test_shape_dtype_and_norms(embedder: LocalEmbedder) -> None:
    vectors = embedder.embed(TEXTS)
    assert vectors.shape == (len(TEXTS), 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_empty_list(embedder: LocalEmbedder) -> None:
    vectors = embedder.embed([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_order_is_kept_when_batches_are_length_sorted() -> None:
    small_batches = LocalEmbedder(batch_size=2)
    forward = small_batches.embed(TEXTS)
    backward = small_batches.embed(TEXTS[::-1])
    assert cosines(forward, VECTORS).min() >= 0.999
    assert cosines(forward, backward[::-1]).min() > 0.9999


def test_batch_equals_one_by_one(embedder: LocalEmbedder) -> None:
    batched = embedder.embed(TEXTS)
    single = np.vstack([embedder.embed([text]) for text in TEXTS])
    assert cosines(batched, single).min() > 0.9999


def test_a_few_rows_through_column_blocks_give_the_whole_weights_vectors(
    embedder: LocalEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A query's few tokens go through each weight's column blocks (bert.SMALL_ROWS): the
    same vectors as through the whole weight, to float32 rounding (to the bit here)."""
    weight = embedder._model().weights.layers[0].inter_w
    blocks = bert.column_blocks(weight)
    assert blocks.shape == (1536 // bert.COLUMN_BLOCK, 384, bert.COLUMN_BLOCK)
    assert np.array_equal(np.concatenate(list(blocks), axis=1), weight)
    short = [t for t in TEXTS if 0 < len(t) < 200][:6]
    asked = [embedder.embed([text]) for text in short] + [embedder.embed(short[:2])]
    monkeypatch.setattr(bert, "SMALL_ROWS", 0)  # every product by the whole weight
    whole = [embedder.embed([text]) for text in short] + [embedder.embed(short[:2])]
    for by_blocks, by_whole in zip(asked, whole, strict=True):
        np.testing.assert_allclose(by_blocks, by_whole, rtol=0, atol=1e-6)
        assert cosines(by_blocks, by_whole).min() > 0.9999999


def test_paraphrase_beats_unrelated(embedder: LocalEmbedder) -> None:
    deploy, ship, cat = embedder.embed(
        [
            "How do I deploy the app?",
            "What are the steps to ship our service to production?",
            "She adopted a grey cat named Pixel from the shelter last spring.",
        ]
    )
    assert deploy @ ship > deploy @ cat + 0.2


def test_explicit_dir_without_files_is_an_error_not_a_fallback(tmp_path: Path) -> None:
    embedder = LocalEmbedder(model_dir=tmp_path)  # lazy: constructing reads nothing
    with pytest.raises(ModelError, match="memctl model install") as caught:
        embedder.embed(["hello"])
    assert "\n" not in str(caught.value)


def test_explicit_dir_missing_one_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ModelError, match="memctl model install"):
        LocalEmbedder(model_dir=tmp_path).embed(["hello"])


def test_explicit_dir_with_model_is_used(tmp_path: Path) -> None:
    wheel_dir = model_files.wheel_model_dir()
    assert wheel_dir is not None
    for name in model_files.MODEL_FILES:
        (tmp_path / name).symlink_to(wheel_dir / name)
    vector = LocalEmbedder(model_dir=str(tmp_path)).embed([TEXTS[0]])
    assert cosines(vector, VECTORS[:1])[0] >= 0.999


def test_finds_the_per_user_copy_then_one_in_memctl_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheel_dir = model_files.wheel_model_dir()
    assert wheel_dir is not None
    monkeypatch.setattr(model_files, "wheel_model_dir", lambda: None)
    monkeypatch.setenv("MEMCTL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with pytest.raises(ModelError, match="^the local embedding model is not installed: run `memc"):
        model_files.resolve_model_dir(None)
    older = tmp_path / "home" / "models" / "all-MiniLM-L6-v2"
    per_user = tmp_path / "cache" / "memctl" / "models" / "all-MiniLM-L6-v2"
    for directory in (older, per_user):
        directory.mkdir(parents=True)
        for name in model_files.MODEL_FILES:
            (directory / name).symlink_to(wheel_dir / name)
        assert model_files.resolve_model_dir(None) == directory


def test_the_model_and_its_packed_weights_are_per_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert model_files.default_model_dir() == tmp_path / ".cache" / "memctl" / "models" / MODEL
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert model_files.packed_cache_dir() == tmp_path / "xdg" / "memctl" / "models"


def test_two_data_directories_share_one_packed_cache(tmp_path: Path) -> None:
    """Each data directory used to get its own 87 MB copy of the weights."""
    from memctl.config import load_settings
    from memctl.embed import get_embedder

    cache = tmp_path / "cache"
    for home in ("a", "b"):
        settings = load_settings(home=tmp_path / home)
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("XDG_CACHE_HOME", str(cache))
            get_embedder(settings).embed(["hello"])
    packs = [p.name for p in (cache / "memctl" / "models").iterdir()]
    assert len(packs) == 1 and packs[0].startswith(f"{MODEL}-") and packs[0].endswith(".f32pack")
    assert not (tmp_path / "a" / "models").exists() and not (tmp_path / "b" / "models").exists()


MODEL = "all-MiniLM-L6-v2"


def test_torch_is_not_installed() -> None:
    assert importlib.util.find_spec("torch") is None
    assert importlib.util.find_spec("sentence_transformers") is None


def test_embedding_imports_no_torch() -> None:
    """Run in a fresh interpreter so other tests' imports cannot hide or fake the result."""
    code = (
        "import sys\n"
        "from memctl.embed.local import LocalEmbedder\n"
        "LocalEmbedder().embed(['hello'])\n"
        "print(sorted(m for m in sys.modules"
        " if m.split('.')[0] in {'torch', 'sentence_transformers', 'transformers'}))\n"
    )
    project_root = Path(__file__).resolve().parents[2]
    result = python_c(code, cwd=project_root, check=True)
    assert result.stdout.strip() == "[]"


def test_batches_respect_count_and_token_budget() -> None:
    lengths = [2] * 10 + [100] * 300 + [256] * 200
    batches = list(bert.batches(lengths, batch_size=4096))
    assert [i for b in batches for i in range(len(lengths))[b]] == list(range(len(lengths)))
    assert all(len(lengths[b]) * max(lengths[b]) <= bert.MAX_BATCH_TOKENS for b in batches)
    assert all(len(lengths[b]) <= 3 for b in bert.batches(lengths, batch_size=3))


def test_packed_weights_cache_gives_the_same_vectors(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = LocalEmbedder(cache_dir=cache).embed(TEXTS[:3])
    (packed,) = cache.glob("all-MiniLM-L6-v2-*.f32pack")
    stamp = packed.stat().st_mtime_ns
    again = LocalEmbedder(cache_dir=cache)
    assert np.array_equal(again.embed(TEXTS[:3]), first)
    assert packed.stat().st_mtime_ns == stamp  # read, not rewritten
    assert cosines(first, VECTORS[:3]).min() > 0.9999
    packed.write_bytes(b"MCTLPAK1 damaged")
    assert np.array_equal(LocalEmbedder(cache_dir=cache).embed(TEXTS[:3]), first)
    assert packed.stat().st_size > 80_000_000  # rewritten whole


def test_each_copy_of_the_model_has_its_own_pack_and_gone_copies_are_pruned(
    tmp_path: Path,
) -> None:
    """Two installs used to share one file and rewrite it in turn (about 1 s and 87 MB
    each time the other one embedded); a pack whose model is gone is removed."""
    directory = model_files.resolve_model_dir(None)

    def install(copy: Path) -> Path:  # hard links: copies in other places, no 87 MB each
        copy.mkdir()
        for name in model_files.MODEL_FILES:
            try:
                os.link(directory / name, copy / name)
            except OSError:
                shutil.copyfile(directory / name, copy / name)
        return copy

    copies = [install(tmp_path / name) for name in ("pipx", "venv")]
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "all-MiniLM-L6-v2.f32pack").write_bytes(b"MCTLPAK1 the name before")
    first = LocalEmbedder(copies[0], cache_dir=cache).embed([TEXTS[0]])
    LocalEmbedder(copies[1], cache_dir=cache).embed([TEXTS[0]])
    packs = sorted(cache.glob("*.f32pack"))
    assert len(packs) == 2 and "all-MiniLM-L6-v2.f32pack" not in {p.name for p in packs}
    stamps = [p.stat().st_mtime_ns for p in packs]
    for copy in copies:  # each reads its own, rewriting neither
        assert np.array_equal(LocalEmbedder(copy, cache_dir=cache).embed([TEXTS[0]]), first)
    assert [p.stat().st_mtime_ns for p in packs] == stamps
    LocalEmbedder(install(tmp_path / "gone"), cache_dir=cache).embed([TEXTS[0]])
    for name in model_files.MODEL_FILES:
        (tmp_path / "gone" / name).unlink()
    LocalEmbedder(copies[0], cache_dir=cache).embed([TEXTS[0]])  # reads: nothing pruned
    assert len(list(cache.glob("*.f32pack"))) == 3
    packs[0].unlink()
    LocalEmbedder(copies[0], cache_dir=cache).embed([TEXTS[0]])  # writes: prunes "gone"
    assert len(list(cache.glob("*.f32pack"))) == 2


def test_an_unwritable_cache_is_skipped(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    vector = LocalEmbedder(cache_dir=blocker / "cache").embed([TEXTS[0]])
    assert cosines(vector, VECTORS[:1])[0] > 0.9999


def test_the_tokenizer_built_from_the_vocabulary_equals_tokenizer_json() -> None:
    from tokenizers import Tokenizer

    from benchmarks.synthetic import synthetic_memories

    directory = model_files.resolve_model_dir(None)
    fast = local._load_tokenizer(directory / "tokenizer.json")
    reference = Tokenizer.from_file(str(directory / "tokenizer.json"))
    reference.enable_truncation(max_length=local.MAX_TOKENS)
    reference.no_padding()
    texts = [
        *TEXTS,
        *synthetic_memories(300),
        "Café déjà vu: naïve résumé, Ångström, façade",
        "如何部署计费服务？日本語のテキスト、한국어 문장",
        "parse_user_id() in src/auth/ids.py -> UUID; x == y && a != b",
        "emoji 🚀🔥 and \t tabs \n newlines \u200b zero-width",
        "UPPER lower MiXeD 12345 3.14 1,000,000",
        "supercalifragilisticexpialidocious " + "x" * 120,
        " ".join(["word"] * 400),
        "",
    ]
    for text in texts:
        assert fast.encode(text).ids == reference.encode(text).ids, text


def reference_softmax(scores: np.ndarray, lengths: list[int]) -> np.ndarray:
    """Softmax of each row over its sentence's real keys, in float64."""
    wide = scores.astype(np.float64)
    for row, length in enumerate(lengths):
        wide[row, :, :, length:] = -np.inf
    wide = np.exp(wide - wide.max(axis=-1, keepdims=True))
    return wide / wide.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("scale", [1.0, 40.0], ids=["unshifted", "too-large-to-exponentiate"])
def test_attention_weights_cover_only_each_sentences_tokens(scale: float) -> None:
    """Small scores take the unshifted way, scores past exp()'s range the shifted one;
    both weigh only real tokens and match a float64 softmax."""
    rng = np.random.default_rng(3)
    lengths = [5, 7, 7]
    q = rng.standard_normal((3, 2, 7, 8), dtype=np.float32) * np.float32(scale)
    k_t = rng.standard_normal((3, 2, 8, 7), dtype=np.float32)
    expected = reference_softmax(q @ k_t, lengths)
    weights = bert.softmax(q, k_t, np.array(lengths))
    assert (q @ k_t).max() > bert.EXP_SAFE or scale == 1.0
    np.testing.assert_allclose(weights, expected, rtol=0, atol=1e-6)
    assert not weights[0, :, :, 5:].any()


def test_a_row_whose_every_term_vanishes_is_redone_shifted() -> None:
    """Scores far below zero (every exp() would underflow to 0) still give weights."""
    lengths = [4]
    q = np.full((1, 1, 4, 2), -30.0, dtype=np.float32)
    k_t = np.full((1, 1, 2, 4), 2.0, dtype=np.float32)  # every score is -120
    weights = bert.softmax(q, k_t, np.array(lengths))
    np.testing.assert_allclose(weights, 0.25, rtol=0, atol=1e-6)


def test_loading_limits_blas_to_one_thread_unless_the_user_says() -> None:
    """OpenBLAS threads spin while waiting: writes embed beside a busy assistant."""
    script = (
        "from threadpoolctl import threadpool_info\n"
        "from memctl.embed.local import LocalEmbedder\n"
        "LocalEmbedder().embed(['x'])\n"
        "print(max(p['num_threads'] for p in threadpool_info() if p['user_api'] == 'blas'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(local.BLAS_THREADS)
    mine = subprocess.run(
        [sys.executable, "-c", script],
        env={**env, "OPENBLAS_NUM_THREADS": "2"},
        capture_output=True,
        text=True,
    )
    assert mine.stdout.strip() == "2", mine.stderr


def test_forward_passes_in_two_threads_give_the_same_vectors() -> None:
    one, two = LocalEmbedder(batch_size=2, threads=1), LocalEmbedder(batch_size=2, threads=2)
    np.testing.assert_allclose(two.embed(TEXTS), one.embed(TEXTS), rtol=0, atol=1e-6)


@pytest.mark.parametrize(
    ("cores", "load", "own", "threads"),
    [
        (2, 0.2, 0.0, 2),
        (2, 1.6, 0.0, 1),
        (2, 2.1, 2.0, 2),
        (2, 3.0, 1.0, 1),
        (8, 0.0, 0.0, 2),
        (1, 0.0, 0.0, 1),
    ],
)
def test_threads_follow_the_cores_others_leave_idle(
    cores: int, load: float, own: float, threads: int
) -> None:
    """The embedder's own threads are in the load average too: they do not count against it."""
    assert local.idle_threads(cores, load, own) == threads
