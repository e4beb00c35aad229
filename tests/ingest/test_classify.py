"""What ``remember`` files a text under when no category is given (``classify``): the kinds
of sentence a developer asks it to keep, and what the distillation makes of the same words."""

from __future__ import annotations

import pytest

from memctl.ingest.extract_rules import extract_rules
from memctl.ingest.facts import Passage
from memctl.ingest.rule_pattern import EV, PA, PR, C, E, P
from memctl.ingest.rules_stated import classify
from memctl.model import Category


@pytest.mark.parametrize(
    ("text", "category"),
    [
        # procedures: how the team does a task, with what (the README walks' sentence)
        ("we deploy with make release from main", PA),
        ("We release by tagging main and running make publish", PA),
        ("We run the migrations with alembic upgrade head.", PA),
        ("we test with pytest -n auto", PA),
        ("To deploy, run make release from main", PA),
        # a routine with no means is a fact of the project, not a procedure to follow
        ("we rotate the API keys every 90 days", E),
        ("We review every PR before merging", E),
        # what the project uses or where it runs stays a project fact
        ("we use uv for dependencies", E),
        ("We host on fly.io", E),
        ("We run into timeouts with the old client", E),
        # preferences and rules
        ("I prefer tabs over spaces", PR),
        ("prefer small pull requests", PR),
        ("never push to main directly", PA),
        # facts about a thing
        ("the staging host is staging.example.com", E),
        ("Postgres listens on port 5433 locally", E),
        # events: a dated happening, told in the past; a date ahead is a fact
        ("on March 3 the DB went down", EV),
        ("The outage on 2026-03-03 was caused by a full disk.", EV),
        ("The TLS certificate expires on May 1", E),
        ("Yesterday the deploy failed because the disk was full", C),
        # decisions
        ("we chose Postgres over MySQL because of JSONB", PA),
        ("We went with SQLite because it needs no server", PA),
        ("Decided: use Redis for the job queue", PA),
        ("We picked up the keys from the office", E),
        # profile
        ("My name is Dana and I live in Lisbon", P),
    ],
)
def test_remember_files_each_kind_of_sentence_under_its_category(
    text: str, category: Category
) -> None:
    assert classify(text) == category


def test_a_procedure_said_in_a_session_is_kept_as_one_and_a_choice_alone_is_not() -> None:
    """The procedure pattern is the distillation's too (a project fact before); the
    ``STATED`` patterns are tried by ``classify`` only: "we went with" in a chat is mostly
    a step of the task at hand."""
    facts = extract_rules(
        [Passage("We deploy with make release from main. We went with SQLite for now.")], 10
    )
    assert [(f.content, f.category, f.tags) for f in facts] == [
        ("We deploy with make release from main.", PA, ["procedure"])
    ]
