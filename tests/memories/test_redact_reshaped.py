"""`memctl redact` reaches a value memctl itself stored reshaped: cut short with an ellipsis
(a session's digest quotes the value's head "zorblaxq…"), in its own case (a question
written by rule lower-cases a name's first letter, "émile Zola"), or over several lines
(`redact -` reads all of standard input: a value of several lines goes whole and line by
line). Real `memctl` processes on a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

from memctl.api import memory as memory_api
from memctl.api import sync as sync_api
from memctl.api.distil import DistilRequest, PendingRequest, distil, pending
from memctl.config import load_settings
from memctl.context import Context
from memctl.embed.hashed import HashEmbedder
from memctl.ingest.capture import IngestOptions, capture
from memctl.ingest.entities import RULES_VERSION
from memctl.ingest.pipeline import run_session
from memctl.store import graph
from memctl.store.database import Database
from memctl.store.forget import cut_heads
from tests.conftest import cli_ok, files_holding, run_cli
from tests.ingesting import claude_work_session, source
from tests.syncing import bare_repo, git, machine, shared

VALUE = "zorblaxquintessence-7731-alpha-omega"  # no pattern of the privacy filter knows it
HEAD = VALUE[:8]  # what the digest keeps of it, cut at ITEM_WIDTH
# Cut texts the value's redaction leaves: a head shorter than CUT_HEAD_MIN, another word's.
KEPT = "the zor… rollout and the manzorblax… cache were cut short too"


def _ingest(tmp_path: Path, name: str, said: list[tuple[str, str]]) -> None:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps({"role": r, "content": c}) + "\n" for r, c in said))
    cli_ok("-c", "llm=none", "ingest", "--transcript", str(path), "--wait")


def test_redact_takes_out_a_head_memctl_stored_cut_short(home: Path, tmp_path: Path) -> None:
    asked = "Please set up the deploy pipeline for the staging cluster and make sure the release "
    asked += "job uses the new vault key which is "
    asked = f"{asked:x<150} {VALUE} and then run the tests"  # the value across the digest's cut
    done = "I set up the deploy pipeline; the release job reads the vault key. The 42 tests pass, "
    _ingest(tmp_path, "cut", [("user", asked), ("assistant", done + "so it is ready to ship.")])
    cli_ok("remember", KEPT)
    digest = json.loads(cli_ok("list", "--json", "--all-scopes"))
    assert any(f"{HEAD}…" in m["content"] for m in digest)  # the digest quotes the head
    assert files_holding(home, VALUE) and files_holding(home, HEAD)

    cli_ok("redact", VALUE)

    assert files_holding(home, HEAD) == []  # the message's value, the digest's head
    kept = [m["content"] for m in json.loads(cli_ok("list", "--json", "--all-scopes"))]
    assert KEPT in kept  # a head of 3 characters, and another word's cut, stay


def test_redact_takes_out_a_name_a_question_holds_in_its_own_case(home: Path) -> None:
    cli_ok("-c", "llm=none", "remember", "Émile Zola owns the billing service and its deploys")
    assert files_holding(home, "émile Zola")  # the question written by rule

    cli_ok("redact", "Émile Zola")

    assert files_holding(home, "mile Zola") == []  # the question, its index and its vector
    recalled = json.loads(cli_ok("recall", "émile zola", "--json", "--all-scopes"))
    assert all("mile" not in json.dumps(r) for r in recalled["results"])


def test_redact_dash_reads_a_value_of_several_lines(home: Path, tmp_path: Path) -> None:
    codes = ["quokka-marmalade-7731", "heron-lavender-0042", "badger-saffron-9918"]
    _ingest(tmp_path, "codes", [("user", "my recovery codes:\n" + "\n".join(codes))])
    _ingest(tmp_path, "one", [("user", f"the second code {codes[1]} worked at last")])
    assert all(files_holding(home, c) for c in codes)

    said = run_cli("redact", "-", input="\n".join(codes) + "\n")

    assert said.returncode == 0, said.stderr
    assert [c for c in codes if files_holding(home, c)] == []  # whole, and line by line
    seed = "W7QX9-K2PL\nZ9RM4"  # its second line too short to take out of every text alone
    done = "I stored the seed words in the vault and restored last night's backup from them: "
    asked = f"Store the seed words {seed} in the vault, then test the backup restore."
    _ingest(tmp_path, "seed", [("user", asked), ("assistant", done + "every table came back.")])
    assert files_holding(home, "W7QX9-K2PL Z9RM4")  # the digest flattens the request
    cli_ok("redact", "-", input=seed)
    assert files_holding(home, "Z9RM4") == []  # whole, and flattened onto one line
    _ingest(tmp_path, "pin", [("user", "the door codes:\nab12\ncd34\nef56\nthanks")])
    cli_ok("redact", "ab12\r\ncd34\r\nef56")  # pasted from a Windows file, as an argument
    assert files_holding(home, "cd34") == []
    blank = run_cli("redact", "-", input="\n\n")
    assert blank.returncode == 2 and len(blank.stderr.strip().splitlines()) == 1
    binary = run_cli("redact", "-", input=b"\xff\xfe\x00key-material")
    assert binary.returncode == 2 and binary.stderr.strip().splitlines() == [
        "memctl: error: redact: the value is not UTF-8 text"
    ]


def test_redact_takes_out_a_triple_s_predicate_memctl_lower_cased(home: Path) -> None:
    """A host's (or an LLM's) triple keeps its predicate lower-cased ("is run by émile
    zola for"): the entities named by the value went, the predicate stayed."""
    settings = load_settings(overrides={"llm": "none", "ingest.host_distil": True})
    ctx = Context(settings, embedder=HashEmbedder())
    report = capture(ctx, source(_session()), IngestOptions()).report
    run_session(ctx, report.session_id, report.job_id)
    (task,) = pending(ctx, PendingRequest()).batches
    fact = {
        "content": "The billing service is run by Émile Zola for the finance team.",
        "category": "entities",
        "source_message": 1,
        "triples": [["billing service", "is run by Émile Zola for", "finance team"]],
    }
    distil(ctx, DistilRequest(task.session_id, task.through_seq, {"facts": [fact]}))
    ctx.close()
    assert "is run by émile zola for" in cli_ok("graph", "billing service", "--all-scopes")

    cli_ok("redact", "Émile Zola")

    assert files_holding(home, "mile zola") == [] and files_holding(home, "mile Zola") == []


def _session() -> str:
    return "\n".join(json.dumps(line) for line in claude_work_session())


def test_redact_rewrites_a_hook_s_record_of_why_it_captured_nothing(home: Path) -> None:
    """`hooks/missed/` keeps "no transcript of session 'ID' found" (`memctl doctor` shows
    it): a session id holding the value stayed there after `redact`."""
    said = {"session_id": f"{VALUE}-sess", "hook_event_name": "Stop"}
    assert run_cli("hook", "claude-code", "Stop", input=json.dumps(said)).returncode == 0
    assert "hooks/missed/claude-code.Stop" in files_holding(home, VALUE)

    cli_ok("redact", VALUE)

    assert files_holding(home, VALUE[:8]) == []
    assert "[REDACTED]-sess" in (home / "hooks/missed/claude-code.Stop").read_text()


def test_redact_removes_a_hook_s_record_named_after_a_session_holding_the_value(
    home: Path, tmp_path: Path
) -> None:
    """The record of the memories a session was given is named after its id
    (`hooks/injected/session.<id>`), and the client process's record of the sessions it
    started lists it (`hooks/started/<pid>`): a value in the id stayed in both."""
    cli_ok("remember", "the shop's staging host is blue", cwd=tmp_path)
    said = {"session_id": f"{VALUE}-sess", "cwd": str(tmp_path), "hook_event_name": "SessionStart"}
    given = run_cli("hook", "claude-code", "SessionStart", input=json.dumps(said), env=PID)
    assert "staging host is blue" in given.stdout, given.stderr
    assert [p.parent.name for p in home.rglob("*") if VALUE in p.name] == ["injected"]
    assert files_holding(home, VALUE) == ["hooks/started/4242"]

    cli_ok("redact", VALUE)

    assert [p for p in home.rglob("*") if HEAD in p.name] == []
    assert files_holding(home, HEAD) == []


PID = {"CLAUDE_PID": "4242"}  # the client process, whose sessions the hook records


def test_redact_takes_a_cut_head_out_of_a_backup_the_store_no_longer_holds_it_in(
    home: Path,
) -> None:
    """A backup keeps rows the store has since lost (a run's notes, a job done): a head
    only a backup holds is found in that backup, not only among the store's."""
    cli_ok("remember", f"the vault key is {VALUE}")
    cli_ok(*BACKUPS, "maintain")
    (backup,) = (home / "backups").glob("memctl-*.db")
    with Database.open(backup) as db, db.atomic():  # a run the store no longer holds
        db.execute(
            "UPDATE runs SET notes = ?", (json.dumps([f"read {HEAD}…"], ensure_ascii=False),)
        )
    assert files_holding(home, HEAD) == sorted(["memctl.db", str(backup.relative_to(home))])

    report = json.loads(cli_ok("redact", VALUE, "--json"))

    assert len(report["backups_rewritten"]) == 1
    assert files_holding(home, HEAD) == []


BACKUPS = ("-c", "maintain.backups=3", "-c", "maintain.backup_every_hours=0")


def test_a_cut_head_is_found_at_each_length_the_value_matches(ctx: Context) -> None:
    """A dotted value cut with "..." matches a dot of the ellipsis as its own; the whole
    value before an ellipsis is no head (it goes as the value); another word's is none."""
    said = "api.internal... then api.internal.example.com… and xapi.internal…"
    memory_api.remember(ctx, memory_api.RememberRequest(said))
    value = "api.internal.example.com"
    assert cut_heads(ctx.db, [value]) == {"api.internal...": value}


def test_redact_sends_again_a_shared_memory_whose_triple_it_took_out(tmp_path: Path) -> None:
    """A model's triple names the value in its predicate, the memory's text does not: its
    sync file kept the triple on the remote (and in the clone) after `redact`, which changed
    no text of the memory, so no sync sent its file again."""
    remote = bare_repo(tmp_path)
    ctx = machine(tmp_path, "laptop", remote)
    sync_api.init(ctx, str(remote))
    memory = shared(ctx, "The billing service is run by the finance team")
    at = "2026-12-01T00:00:00Z"
    with ctx.db.atomic():  # what the graph read of a model's fact
        ends = [graph.add_entity(ctx.db, n, n, "thing", at) for n in ("billing", "finance")]
        said = graph.add_triple(ctx.db, ends[0], f"is run by {VALUE} for", ends[1], at)
        graph.add_source(ctx.db, said, memory.id, "", "llm")
        graph.mark_indexed(ctx.db, memory.id, memory.content_hash, RULES_VERSION)
    sync_api.sync(ctx, sync_api.SyncRequest())
    home = ctx.settings.home
    ctx.close()
    assert VALUE in git("--git-dir", str(remote), "grep", "-h", "-e", ".", "HEAD")
    at_home = ("--home", str(home), "-c", f"sync.remote={remote}")

    report = json.loads(cli_ok(*at_home, "redact", VALUE, "--json"))

    assert report["restated"] == [memory.id] and report["shared"] == [memory.id]
    assert files_holding(home, VALUE) == []  # the clone's file too
    cli_ok(*at_home, "sync")
    assert VALUE not in git("--git-dir", str(remote), "grep", "-h", "-e", ".", "HEAD")
