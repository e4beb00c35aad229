"""The parts of import that need no store: the smart split and each of its boundary rules,
sections, the strategy each kind of document gets, and format detection."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memctl.config.settings import load_settings
from memctl.errors import ConfigError, InputError
from memctl.imports.detect import strategy as choose
from memctl.imports.detect import survey
from memctl.imports.files import Target
from memctl.imports.formats import detect as detect_format
from memctl.imports.formats.base import pieces
from memctl.imports.sections import sections
from memctl.imports.split import Splitter, cut_point, split
from memctl.ingest.source import Input
from memctl.memories import privacy
from memctl.memories.scrubber import scrub_stream

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "imports"
LIMIT, OVERLAP = 100, 10


def chunks(text: str, limit: int = LIMIT, overlap: int = OVERLAP) -> list[str]:
    return list(split([text], limit, overlap))


def test_a_heading_wins_over_a_later_blank_line() -> None:
    text = "x" * 30 + "\n## Next\n" + "y" * 20 + "\n\n" + "z" * 100
    assert cut_point(text, LIMIT, OVERLAP) == 31
    assert chunks(text)[1].startswith("x" * 9 + "\n## Next")  # 10 characters of overlap


def test_a_blank_line_wins_over_a_later_line_break() -> None:
    text = "x" * 30 + "\n\n" + "y" * 20 + "\n" + "z" * 100
    assert cut_point(text, LIMIT, OVERLAP) == 32


def test_a_line_break_wins_over_a_hard_cut() -> None:
    text = "x" * 40 + "\n" + "y" * 100
    assert cut_point(text, LIMIT, OVERLAP) == 41


def test_a_hard_cut_when_nothing_breaks_the_text() -> None:
    found = chunks("x" * 250)
    assert [len(c) for c in found] == [100, 100, 70]


def test_breaks_inside_the_overlap_do_not_count() -> None:
    # a cut at 2 would leave the next chunk starting before this one: no progress
    assert cut_point("x\n\n" + "y" * 150, LIMIT, OVERLAP) == LIMIT


def test_a_text_within_the_limit_is_one_chunk_and_blank_text_none() -> None:
    assert chunks("short text\n") == ["short text\n"]
    assert chunks(" \n\n ") == []


def test_the_overlap_must_leave_room() -> None:
    with pytest.raises(ConfigError, match="less than half"):
        Splitter(100, 50)


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from("ab \n#"), min_size=1, max_size=700),
    piece=st.integers(min_value=1, max_value=90),
)
def test_chunks_fit_overlap_and_cover_the_text(text: str, piece: int) -> None:
    """Fed in pieces of any size: every chunk within the limit, each starting with the
    last `overlap` characters of the one before, and together the whole text."""
    found = list(split([text[i : i + piece] for i in range(0, len(text), piece)], 100, 10))
    if not text.strip():
        return
    assert all(0 < len(c) <= 100 for c in found)
    rebuilt = found[0]
    for before, chunk in zip(found, found[1:], strict=False):
        assert chunk[:10] == before[-10:]
        rebuilt += chunk[10:]
    assert rebuilt == text
    assert found == chunks(text, 100, 10)  # the same chunks however the text arrives


def test_the_default_split_is_80000_characters_with_2000_of_overlap() -> None:
    s = load_settings()
    assert (s.import_split_chars, s.import_split_overlap) == (80_000, 2_000)
    paragraph = "A sentence about the deploy pipeline and its many stages.\n\n"
    found = chunks(paragraph * 4000, s.import_split_chars, s.import_split_overlap)
    assert len(found) == 4 and all(len(c) <= 80_000 for c in found)  # 236,000 characters
    assert all(c.endswith("\n\n") for c in found[:-1])  # cut after a blank line
    assert found[1][:2000] == found[0][-2000:]


def test_sections_cut_at_level_one_and_two_headings_outside_code() -> None:
    text = (
        "Intro line.\n"
        "# Title\n"
        "## Empty\n"
        "## Deploy\nWe deploy with make.\n### Details\nStill deploy.\n"
        "```sh\n# a shell comment, not a heading\n```\n"
        "## Rollback\nRevert the tag.\n"
    )
    found = list(sections(text.splitlines(keepends=True), 1000, 10))
    assert [s.heading for s in found] == ["", "Deploy", "Rollback"]  # title and Empty hold nothing
    assert found[1].text.startswith("## Deploy\n") and "### Details" in found[1].text
    assert "# a shell comment" in found[1].text


def test_a_long_section_is_split_into_parts() -> None:
    text = "## Big\n" + "word " * 100 + "\n## Small\nfine\n"
    found = list(sections(text.splitlines(keepends=True), 200, 20))
    assert [s.anchor for s in found] == ["Big (part 1)", "Big (part 2)", "Big (part 3)", "Small"]
    assert all(len(s.text) <= 200 for s in found)


def write(tmp_path: Path, name: str, text: str) -> Target:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return Target(str(path), path)


def chosen(target: Target, asked: str = "auto") -> str:
    return choose(survey(target), asked, load_settings())[0]


WORDS = " ".join(f"word{i}" for i in range(520))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("user: hi\nassistant: hello\nuser: I prefer tabs.\n", "atomic"),
        ("Human: hi\nAI: hello\nhuman: bye\n", "atomic"),
        ("user: hi\nassistant: hello\nand more text\n", "document"),  # two role lines
        ("x" * 80_001, "atomic"),
        ("x" * 80_000, "document"),
        (f"# Guide\n## Part\n{WORDS}\n", "section"),
        (f"# Guide\n{' '.join(WORDS.split()[:480])}\n", "document"),  # 499 words
        (f"{WORDS}\n", "document"),  # no headings
        (f"```\n# not a heading\n```\n{WORDS}\n", "document"),
    ],
)
def test_each_strategy_is_chosen_by_the_shape_of_the_text(
    tmp_path: Path, text: str, expected: str
) -> None:
    assert chosen(write(tmp_path, "doc.md", text)) == expected


def test_an_asked_strategy_wins_for_documents_only(tmp_path: Path) -> None:
    assert chosen(write(tmp_path, "doc.md", "short\n"), "section") == "section"
    chats = Target(
        str(FIXTURES / "claude-ai-conversations.json"), FIXTURES / "claude-ai-conversations.json"
    )
    assert chosen(chats, "document") == "atomic"


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("chatgpt-conversations.json", "chatgpt"),
        ("claude-ai-conversations.json", "claude-ai"),
        ("mem0-get-all.json", "mem0"),
        ("mem0-platform-page.json", "mem0"),
        ("memctl-memory.yaml", "memctl-yaml"),
        ("basic-memory-note.md", "front-matter"),
        ("obsidian-note.md", "front-matter"),
        ("conversation.txt", "text"),
    ],
)
def test_each_fixture_is_detected(name: str, label: str) -> None:
    assert survey(Target(name, FIXTURES / name)).label == label


def test_detection_by_content_and_refusals(tmp_path: Path) -> None:
    assert survey(write(tmp_path, "links.md", "[memctl](https://x.y) notes\n")).label == "markdown"
    line = '{"id": "ab" , "content": "a memory"}\n'
    assert survey(write(tmp_path, "dump", line)).label == "memctl-jsonl"
    transcript = '{"role": "user", "content": "hi"}\n'
    with pytest.raises(InputError, match="not a format memctl imports"):
        survey(write(tmp_path, "chat.jsonl", transcript))
    with pytest.raises(InputError, match="looks like JSON"):  # not "is JSON": it is cut off
        survey(write(tmp_path, "notes.json", '{"broken": '))
    with pytest.raises(InputError, match="binary"):
        survey(Target("pdf", _bytes(tmp_path, b"%PDF-1.7\n" + bytes(range(128, 256)) * 40)))
    with pytest.raises(InputError, match="binary"):
        survey(Target("png", _bytes(tmp_path, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")))
    with pytest.raises(InputError, match="empty"):
        survey(Target("empty", _bytes(tmp_path, b"\n \n")))
    assert detect_format("notes.yaml", "name: x\n").NAME == "markdown"  # YAML, not a memory


def _bytes(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "blob"
    path.write_bytes(data)
    return path


def test_pieces_end_at_line_breaks_and_skip_front_matter() -> None:
    text = "".join(f"line {i}\n" for i in range(5000))
    found = list(pieces(Input(io.BytesIO(text.encode()), "x"), skip=7, size=1000))
    assert "".join(found) == text[7:]
    assert all(len(p) <= 1000 and p.endswith("\n") for p in found)


def test_a_private_block_over_many_pieces_is_hidden_to_its_close() -> None:
    found = privacy.Redactions()
    pieces_ = ["a\n", "<private>\n", "x" * 60 + "\n", "y" * 60 + "\n", "z</private> seen\n"]
    assert "".join(scrub_stream(pieces_, found)) == "a\n[REDACTED] seen\n"
    assert found.private_blocks == 1
    key = ["-----BEGIN RSA PRIVATE KEY-----\n", "abc\n", "-----END RSA PRIVATE KEY-----\nok\n"]
    assert "".join(scrub_stream(key, found)) == "[REDACTED:private-key]\nok\n"
