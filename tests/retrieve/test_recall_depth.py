"""How deep a recall searches does not depend on how many rows it is asked for, below a
plain recall's: ``-n 3`` shows the first three rows ``memctl recall`` shows (Run.depth)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli

FACTS = Path(__file__).resolve().parents[2] / "benchmarks" / "paraphrase" / "facts.jsonl"
# Paraphrases of the facts whose first three rows a 9-deep search (3 x 3) ranked otherwise
# than the plain recall's 30-deep one (fuse maps each leg's scores over the hits it got).
ASKED = (
    "why did the site go down on Valentine's day?",
    "which event-streaming platform do we publish to?",
    "who can grant me cloud account permissions?",
)


def rows(*args: str) -> list[str]:
    done = run_cli("recall", *args, "--json", "--no-touch", real_model=True)
    assert done.returncode == 0, done.stderr
    return [r["content"] for r in json.loads(done.stdout)["results"]]


def test_fewer_rows_are_the_first_rows_of_a_plain_recall(tmp_path: Path) -> None:
    lines = [json.loads(line) for line in FACTS.read_text(encoding="utf-8").splitlines()]
    memories = tmp_path / "facts.jsonl"
    memories.write_text("".join(json.dumps({"content": f["fact"]}) + "\n" for f in lines))
    assert run_cli("import", str(memories), real_model=True).returncode == 0
    for question in ASKED:
        plain = rows(question)
        assert len(plain) >= 3
        assert rows(question, "-n", "3") == plain[:3], question
