"""The literal strings a rule pattern needs: a message that holds none of them is never
searched sentence by sentence, and no sentence a pattern matches is lost that way."""

from __future__ import annotations

import re
from pathlib import Path

from memctl.ingest.extract_rules import COMMITMENTS, PATTERNS, extract_rules, live
from memctl.ingest.facts import Passage
from memctl.ingest.regex_needs import fold, holds, needs
from memctl.ingest.rule_sentences import sentences
from memctl.model import Role

REAL = Path(__file__).resolve().parents[2] / "benchmarks" / "sessions" / "real"
# real sessions in each of the gold set's languages (sources: SOURCES.md)
SAMPLES = (
    "cc1-cclog-b25638d7.jsonl",
    "cc2-written-zh-order.jsonl",
    "cc2-repiq-9ac35f70.jsonl",
    "cc2-agentstuff-16e76550.jsonl",
    "opencode-written-ledger.json",
)


def test_every_rule_pattern_needs_words_that_every_real_match_holds() -> None:
    matched = 0
    for name in SAMPLES:
        for sentence in sentences((REAL / name).read_text(encoding="utf-8")):
            for pattern in PATTERNS + COMMITMENTS:
                if pattern.regex.search(sentence):
                    matched += 1
                    assert holds(needs(pattern.regex), fold(sentence)), (pattern, sentence)
    assert matched > 20  # the gold set's four languages give many matches to check
    assert all(needs(p.regex) for p in PATTERNS + COMMITMENTS)  # each pattern is prefiltered


def test_needs_joins_literals_and_alternatives_and_gives_up_on_what_it_cannot_spell() -> None:
    assert needs(re.compile(r"\bI tend to\b", re.I)) == {"i tend to"}
    assert needs(re.compile(r"\bmy (?:favou?rite|preferred)\b", re.I)) == {
        "my favorite",
        "my favourite",
        "my preferred",
    }
    assert needs(re.compile(r"\w+\s+\d+")) is None
    assert needs(re.compile(r"(?:a|\w+)z{2,}")) == {"z"}


def test_case_blind_patterns_match_folded_letters() -> None:
    pattern = re.compile("use", re.I)
    assert pattern.search("U\u017fE") and holds(needs(pattern), fold("U\u017fE"))  # long s


def test_a_message_without_the_words_is_ruled_out_and_one_with_them_keeps_its_rule() -> None:
    said = "We always use pnpm, never npm. " + "Ledger totals match an export. " * 200
    assert live(PATTERNS, "Ledger totals match an export. " * 200) == ()
    facts = extract_rules([Passage(said, Role.USER, "session:s#1")], 10)
    assert [f.content for f in facts] == ["We always use pnpm, never npm."]


def test_the_language_a_kind_of_text_is_written_in_is_a_rule() -> None:
    said = "很好。另外提交信息用中文写。帮我提交一下。Commit messages in English, please."
    facts = extract_rules([Passage(said, Role.USER, "session:s#1")], 10)
    assert [(f.content, f.tags) for f in facts] == [
        ("另外提交信息用中文写。", ["rule"]),
        ("Commit messages in English, please.", ["rule"]),
    ]
