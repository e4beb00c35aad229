"""What kind of answer a question asks for lifts the memories that state one
(retrieve/answers.py, the intent stage): a boost between near neighbours in meaning,
never a filter, never a clear label."""

from __future__ import annotations

import math

import pytest

from memctl.api.memory import RememberRequest, remember
from memctl.context import Context
from memctl.retrieve.answers import COMMAND, PERSON, PLACE, TIME, asked_kind, asking_words, states
from memctl.retrieve.stages.intent import INTENT_BOOST, intent, only_forbids
from tests.retrieve.test_meaning import paraphrase_facts, top
from tests.retrieve.test_recall_stages import cand, make_run

# The first 30 notes of benchmarks/paraphrase/facts.jsonl (a new user's store), and notes
# written for this test with questions in other words (none of the benchmark's).
OWN = (
    "Load tests: `k6 run perf/smoke.js` against staging.",
    "The team offsite is every October in Porto.",
)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("who owns the billing service?", PERSON),
        ("Whose turn is it on call?", PERSON),
        ("when is the retro?", TIME),
        ("how often do we release?", TIME),
        ("where are the dashboards?", PLACE),
        ("how do I run the tests?", COMMAND),
        ("command for the linter?", COMMAND),
        ("which database do we use?", None),
        ("why did the deploy fail?", None),
        # the kind asked first wins: a place, though "when" comes later
        ("where's the spec for detecting when a session starts?", PLACE),
        ("when did the person who owns billing leave?", TIME),
    ],
)
def test_what_kind_of_answer_a_question_asks_for(question: str, kind: str | None) -> None:
    assert asked_kind(question) == kind


def test_the_words_a_question_asks_for_its_kind_of_answer_by() -> None:
    assert asking_words("Command for the linter?") == {"command"}
    assert asking_words("how do I lint it, which commands?") == {"how", "do", "i", "commands"}
    assert asking_words("which database do we use?") == frozenset()


@pytest.mark.parametrize(
    ("kind", "text", "stated"),
    [
        (PERSON, "Tech lead: Marcus Lindqvist.", True),
        (PERSON, "Our designer is Tomás Ferreira.", True),
        (PERSON, "CI runs on GitHub Actions.", False),  # a capital inside: a product
        (PERSON, "Messages go through Apache Kafka.", False),  # a software term
        (TIME, "Retro is the last Friday of each sprint.", True),
        (TIME, "Standup at 9:30, 15 minutes.", True),
        (TIME, "Releases go out every second week.", True),
        (TIME, "Deploys run only after the smoke tests pass.", True),
        (TIME, "We use Postgres for orders.", False),
        (TIME, "I got mentored by a business coach yesterday!", True),
        (TIME, "We switched to Postgres two years ago.", True),
        (TIME, "I'll come over tomorrow if that's fine.", True),
        (TIME, "[4 November 2022] Joanna: I'll come over tomorrow.", True),
        (TIME, "[16 June 2023] Jon: I love dancing.", False),  # when said, not what is
        (PLACE, "Staging server: staging.acme.example.", True),
        (PLACE, "Tests go in tests/ beside the code.", True),
        (PLACE, "Design docs live in Notion.", True),
        (PLACE, "Prefer httpx over requests.", False),
        (COMMAND, "Lint with `ruff check .` first.", True),
        (COMMAND, "Lint before pushing.", False),
    ],
)
def test_what_a_memory_states(kind: str, text: str, stated: bool) -> None:
    assert states(kind, text) is stated


def test_the_kind_asked_for_lifts_a_memory_and_drops_nothing(ctx: Context) -> None:
    owner = cand("Accessibility audits are owned by Kofi Mensah.", 0.5, category="entities")
    schedule = cand("Accessibility audits run each quarter.", 0.52, category="entities")
    said = cand("Kofi Mensah said the audit passed.", 0.51, id="s1#2")
    said.is_message = True
    ranked = intent(make_run(ctx, "who checks that screen readers work?"), [schedule, said, owner])
    assert ranked[0] is owner and math.isclose(owner.score, 0.5 * INTENT_BOOST)
    # a boost, never a filter; a session message is weighed as for categories (not at all)
    assert len(ranked) == 3 and math.isclose(said.score, 0.51)
    assert math.isclose(schedule.score, 0.52)


def test_when_lifts_the_turn_that_says_when_not_every_dated_turn(ctx: Context) -> None:
    """Every stored chat turn opens with its date: the one that says when the thing
    happened ("yesterday") is lifted; the others, near in meaning, are not."""
    told = cand("[16 June 2023] Jon: I got mentored by a business coach yesterday!", 0.5)
    asked = cand("[16 June 2023] Gina: How is the business coach working out?", 0.52)
    ranked = intent(make_run(ctx, "when did Jon get mentoring for his business?"), [asked, told])
    assert ranked[0] is told and math.isclose(told.score, 0.5 * INTENT_BOOST)
    assert math.isclose(asked.score, 0.52)


def test_when_lifts_a_session_message_that_says_when(ctx: Context) -> None:
    """A chat turn kept as a session message is weighed for a time, as a memory is; for a
    person it is not (Kofi's message above)."""
    told = cand("Jon: I got mentored by a business coach yesterday!", 0.5, id="s1#4")
    asked = cand("Gina: How is the business coach working out?", 0.52, id="s1#5")
    told.is_message = asked.is_message = True
    ranked = intent(make_run(ctx, "when did Jon get mentoring for his business?"), [asked, told])
    assert ranked[0] is told and math.isclose(told.score, 0.5 * INTENT_BOOST)
    assert math.isclose(asked.score, 0.52)


@pytest.mark.parametrize(
    ("text", "forbids"),
    [
        ("We never deploy on Fridays.", True),
        ("Don't deploy on Fridays.", True),
        ("No deploys after 4 pm.", True),
        ("We deploy with make ship; never on Fridays.", False),  # a way, then a rule
        ("Never deploy without tests, deploy with `make ship`.", False),
        ("We do not, under any circumstances, deploy on Fridays.", False),  # NegEx: a clause
        ("Run `deploy --no-cache`, never by hand.", False),  # code denies nothing
        ("We use bun test here, not jest.", False),
        ("Friday afternoons are frozen.", False),  # holds none of the words
        ("We never deploy.", False),  # nothing more: the answer, a no
        ("Stop the deploy with `make halt` before editing.", False),  # a way to stop it
    ],
)
def test_what_only_forbids_the_asked_work(text: str, forbids: bool) -> None:
    assert only_forbids(text, frozenset({"deploy", "jest", "test", "stop"})) is forbids
    # asked of the case it forbids, it is the answer
    assert not only_forbids(text, frozenset({"deploy", "friday", "4", "pm", "after"}))


def test_a_rule_forbidding_the_asked_work_leaves_the_first_place_to_the_way(
    ctx: Context,
) -> None:
    """In the quick start's store the rule "We never deploy on Fridays." shares "deploy"
    with "how do we deploy?" and, short and named, outscored the steps: it states no way to
    deploy, the mirror of the steps' command. Asked whether we deploy on Fridays, it is the
    answer."""
    rule = cand("We never deploy on Fridays.", 1.2, category="patterns")
    steps = cand("We deploy with `make release` from main.", 1.0, category="patterns")
    run = make_run(ctx, "how do we deploy?")
    run.word_weights = {"deploy": 1.0}
    ranked = intent(run, [rule, steps])
    assert ranked == [steps, rule]
    assert math.isclose(rule.score, 1.2 / INTENT_BOOST**2)
    assert math.isclose(steps.score, INTENT_BOOST**2)
    rule.score = 1.2
    run = make_run(ctx, "do we deploy on Fridays?")
    run.word_weights = {"deploy": 1.0, "fridays": 1.0}
    assert math.isclose(intent(run, [rule])[0].score, 1.2)


@pytest.fixture(scope="module")
def notes(real_store: Context) -> Context:
    """The 30 notes and this test's own, remembered with the real model."""
    for text in (*paraphrase_facts()[:30], *OWN):
        remember(real_store, RememberRequest(text, scope="global"))
    return real_store


def test_a_question_for_a_command_finds_the_note_that_gives_one(notes: Context) -> None:
    """No word in common with the note; the notes sharing "service" with the question, or
    close in meaning, came first without the kind of answer (6th and 2nd)."""
    assert OWN[0] in top(notes, "how do I check the service copes with heavy traffic?")[:5]
    assert top(notes, "how can I stress the service before launch?")[0] == OWN[0]


def test_an_unrelated_question_still_gets_no_clear_match(notes: Context) -> None:
    assert top(notes, "who won the football world cup in 1998?", True) == []
    assert top(notes, "when does the bakery on the corner open?", True) == []
