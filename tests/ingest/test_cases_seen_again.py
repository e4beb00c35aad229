"""The same failure fixed the same way in several sessions is one case, each later session
one more source of it (real repiq sessions, MIT: benchmarks/sessions/real/SOURCES.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memctl.api.sessions import origins
from memctl.context import Context
from memctl.ingest.reconcile_rules import same_case
from tests.ingest.test_compaction import ingest_file
from tests.ingest.test_ingest_sessions import memories_of

REAL = Path(__file__).resolve().parents[2] / "benchmarks" / "sessions" / "real"
# the cases these sessions' commits made, as main kept them (s30-distill counted 3)
HOOK = "exit 1: bug: pre-commit's script is installed in migration mode"
COMMIT = f"`git commit -m \"$(cat <<'EOF' feat(cli): change de…` failed: {HOOK}"
ADD_COMMIT = f"`git add README.md && git commit -m \"$(cat <<'EOF'…` failed: {HOOK}"
GIT_C = f"`git -C …/repiq add AGENTS.md && git -C …/repiq co…` failed: {HOOK}"
NO_VERIFY = " → fixed by adding `--no-verify`"


def test_one_failure_fixed_one_way_is_one_case_whatever_the_command_lines() -> None:
    assert same_case(COMMIT + NO_VERIFY, ADD_COMMIT + NO_VERIFY)
    assert same_case(GIT_C + NO_VERIFY, COMMIT + NO_VERIFY)
    # another fix is another lesson; so is another program's failure
    assert not same_case(COMMIT + NO_VERIFY, COMMIT + " → fixed by `pre-commit install`")
    assert not same_case(
        COMMIT + NO_VERIFY, f"`npm publish` failed: {HOOK}{NO_VERIFY}".replace("git", "npm")
    )
    # a bare exit status names no failure of its own (repiq 7cb04102's "exit 137:")
    bare = "`git commit -m \"$(cat <<'EOF' build(nix): migrate …` failed: exit 137: "
    assert not same_case(bare + NO_VERIFY, bare.replace("build(nix)", "fix") + NO_VERIFY)
    assert not same_case("we commit with --no-verify", COMMIT + NO_VERIFY)


def test_a_fix_seen_in_two_sessions_is_one_memory_both_sessions_source(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx()
    first = ingest_file(ctx, REAL / "cc2-repiq-ce76d3df.jsonl")
    later = ingest_file(ctx, REAL / "cc2-repiq-9ac35f70.jsonl")
    cases = [m for m in memories_of(ctx, first) + memories_of(ctx, later) if "case" in m.tags]
    hook = [m for m in cases if "migration mode" in m.content]
    assert len(hook) == 1 and hook[0].session_id == first
    # nothing lost: the later session is a source of the case it saw again
    sessions = {o.session_id for o in origins(ctx, hook)[hook[0].id]}
    assert sessions == {first, later}
