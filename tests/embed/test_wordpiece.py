"""The plain-Python tokenizer of ASCII text (memctl.embed.wordpiece) against the model's own
tokenizer.json run by ``tokenizers``: the same ids, so the same vectors."""

from __future__ import annotations

import string
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer

from memctl.embed import local, model_files
from memctl.embed.local import LocalEmbedder
from memctl.embed.wordpiece import WordPiece
from memctl.errors import ModelError
from tests.conftest import python_c

DIRECTORY = model_files.resolve_model_dir(None)
PLAIN = WordPiece.from_file(DIRECTORY / "vocab.txt", local.MAX_TOKENS)
REFERENCE = Tokenizer.from_file(str(DIRECTORY / "tokenizer.json"))
REFERENCE.enable_truncation(max_length=local.MAX_TOKENS)
REFERENCE.no_padding()
ASCII = "".join(map(chr, range(128)))
WORDY = string.ascii_letters + string.digits + "  .,-_'#/:()"


def test_the_vocabulary_is_the_tokenizers() -> None:
    assert PLAIN.vocab == REFERENCE.get_vocab()


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "How do we deploy the billing service?",
        "parse_user_id() in src/auth/ids.py -> UUID; x == y && a != b",
        "don't re-run CI/CD on k8s: use `make ship` (v2.3.1)",
        "tabs\tnew\nlines\r\nand\x00nul\x0bvt\x0cff\x1fus\x7fdel joined",
        "supercalifragilisticexpialidocious " + "x" * 101 + " " + "y" * 100,
        "UPPER lower MiXeD 12345 3.14 1,000,000 ###",
        " ".join(["deployment"] * 400),  # past 256 tokens: truncated
        "!" * 300,
    ],
)
def test_the_same_ids_as_the_models_tokenizer(text: str) -> None:
    assert PLAIN.ids(text) == REFERENCE.encode(text).ids


@given(st.text(alphabet=ASCII, max_size=300) | st.text(alphabet=WORDY, max_size=300))
def test_any_ascii_text_gets_the_same_ids(text: str) -> None:
    assert PLAIN.ids(text) == REFERENCE.encode(text).ids


def test_other_text_is_refused() -> None:
    with pytest.raises(ValueError, match="ASCII"):
        PLAIN.ids("déjà vu")


def test_a_batch_mixing_ascii_and_other_text_equals_each_text_alone() -> None:
    texts = ["how do we deploy?", "Café déjà vu: naïve résumé", "如何部署计费服务？", "k8s CI"]
    embedder = LocalEmbedder()
    together = embedder.embed(texts)
    alone = np.vstack([LocalEmbedder().embed([text]) for text in texts])
    assert np.abs(together - alone).max() < 1e-5


def test_a_model_without_vocab_txt_gives_the_same_vectors(tmp_path: Path) -> None:
    for name in model_files.MODEL_FILES:  # tokenizer.json and the weights only
        (tmp_path / name).symlink_to(DIRECTORY / name)
    texts = ["how do we deploy the billing service?", "who owns payments?"]
    without = LocalEmbedder(model_dir=tmp_path).embed(texts)
    assert np.abs(without - LocalEmbedder().embed(texts)).max() < 1e-5


@pytest.mark.parametrize(
    "lines",
    [
        ["[UNK]", "[CLS]", "[SEP]", "deploy", "##s", "deploy"],  # a later duplicate wins
        ["[UNK]\r", "[CLS] ", "[SEP]\t", "deploy\u3000", "##s", "de ploy \u2003"],
    ],
)
def test_a_vocabulary_file_reads_as_tokenizers_reads_it(tmp_path: Path, lines: list[str]) -> None:
    from tokenizers.models import WordPiece as Reference

    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", newline="")
    assert WordPiece.from_file(path, local.MAX_TOKENS).vocab == Reference.read_file(str(path))


def test_a_vocabulary_without_its_special_tokens_is_a_one_line_error(tmp_path: Path) -> None:
    for name in model_files.MODEL_FILES:
        (tmp_path / name).symlink_to(DIRECTORY / name)
    (tmp_path / "vocab.txt").write_text("[PAD]\nhello\n", encoding="utf-8")
    with pytest.raises(ModelError, match="cannot load the local model") as caught:
        LocalEmbedder(model_dir=tmp_path).embed(["hello"])
    assert "\n" not in str(caught.value)


def test_an_ascii_query_loads_no_tokenizers_and_other_text_does() -> None:
    probe = (
        "import sys\nfrom memctl.embed.local import LocalEmbedder\n"
        "embedder = LocalEmbedder()\nembedder.embed(['how do we deploy to production?'])\n"
        "print('tokenizers' in sys.modules)\nembedder.embed(['déjà vu'])\n"
        "print('tokenizers' in sys.modules)"
    )
    assert python_c(probe).stdout.split() == ["False", "True"]
