"""Hostile input: NUL bytes, broken lines, absurd nesting, symlink loops, and the file modes
memctl gives what it makes under a careless umask."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memctl.context import Context
from memctl.errors import InputError
from memctl.ingest.capture import IngestOptions, capture
from memctl.store.sessions import latest_messages
from tests.conftest import run_cli, run_memctl
from tests.ingesting import source

NO_LLM = {"MEMCTL_LLM": "none"}
DEPTH = 200_000


def lines(n: int) -> list[bytes]:
    return [
        json.dumps({"role": "user" if i % 2 == 0 else "assistant", "content": f"line {i}"}).encode()
        + b"\n"
        for i in range(n)
    ]


def stored_texts(ctx: Context, session: str = "s") -> list[str]:
    return [m.content for m in latest_messages(ctx.db, session, 0, 10_000)]


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data + b"\x00" * 8192,  # what a crash leaves at the end of an append
        lambda data: data.replace(b"line 100", b"line\x00 100"),  # one NUL in a line
        lambda data: data.replace(b'"line 50"}\n', b'"line 50"}\n' + b"\x00" * 300),
    ],
    ids=["after", "inside", "between"],
)
def test_nul_bytes_are_left_out_and_counted_and_the_lines_kept(ctx: Context, damage) -> None:  # type: ignore[no-untyped-def]
    data = damage(b"".join(lines(200)))
    report = capture(ctx, source(data), IngestOptions(session_id="s")).report
    assert report.messages_new == 200
    assert report.nul_bytes == data.count(b"\x00")
    assert "line 100" in stored_texts(ctx)


def test_binary_input_is_still_refused() -> None:
    for data in (b"\x7fELF\x02\x01\x01\x00\x00", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"):
        with pytest.raises(InputError, match="binary"):
            source(data)


def test_a_partly_malformed_transcript_keeps_its_good_lines(ctx: Context) -> None:
    broken = [line[:-6] + b"\n" if i % 10 == 0 else line for i, line in enumerate(lines(100))]
    report = capture(ctx, source(b"".join(broken)), IngestOptions(session_id="s")).report
    assert (report.messages_new, report.malformed) == (90, 10)
    assert report.problems[0] == "line 1: not JSON"


def test_the_cli_reports_nul_bytes_in_its_summary(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(lines(20)) + b"\x00" * 100)
    done = run_cli("-c", "ingest.spawn_worker=false", "ingest", "--transcript", str(path))
    assert done.returncode == 0, done.stderr
    assert "20 new" in done.stdout and "100 NUL bytes" in done.stdout


@pytest.fixture(scope="module")
def deep(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    where = tmp_path_factory.mktemp("deep")
    nested = "[" * DEPTH + "]" * DEPTH
    files = {
        "document": nested,
        "jsonl": '{"role": "user", "content": ' + nested + "}\n",
        "messages": '[{"role": "user", "content": "kept"}, ' + nested + "]",
        "yaml": "content: " + "[" * DEPTH + "]" * DEPTH + "\n",
    }
    paths = {}
    for name, text in files.items():
        paths[name] = where / f"{name}.{'yaml' if name == 'yaml' else 'json'}"
        paths[name].write_text(text)
    return paths


@pytest.mark.parametrize(
    "args",
    [
        ("ingest", "--transcript", "{document}"),
        ("ingest", "--wait", "--transcript", "{document}"),
        ("ingest", "--transcript", "{jsonl}"),
        ("import", "{document}"),
    ],
    ids=["fast-lane", "wait", "jsonl", "import"],
)
def test_json_nested_200000_deep_is_one_clear_error(deep: dict[str, Path], args) -> None:  # type: ignore[no-untyped-def]
    done = run_cli(*(a.format(**deep) for a in args), env=NO_LLM)
    assert done.returncode == 6, done.stderr
    errors = done.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("memctl: error:"), done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr


def test_deep_yaml_is_no_internal_error(tmp_path: Path) -> None:
    memory = tmp_path / "m.yaml"  # memctl's sync format: one memory a file
    memory.write_text("id: 0123456789abcdef0123456789abcdef\ncontent: " + "[" * DEPTH + "\n")
    config = tmp_path / "home" / "config.yaml"
    config.parent.mkdir()
    config.write_text("recall: " + "{a: " * DEPTH + "\n")
    for args in (("import", str(memory)), ("status",)):
        done = run_cli(*args, env=NO_LLM)
        assert done.returncode in (2, 6), done.stderr
        assert "internal error" not in done.stderr and "Traceback" not in done.stderr


def test_a_deep_member_after_good_messages_keeps_them(ctx: Context, deep: dict[str, Path]) -> None:
    report = capture(
        ctx, source(deep["messages"].read_bytes()), IngestOptions(session_id="s")
    ).report
    assert report.messages_new == 1 and report.malformed == 1
    assert "nested too deeply" in report.problems[0]


def test_symlink_loops_and_dangling_links_are_left_out_with_a_warning(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "good.md").write_text("# Deploys\n\nWe deploy the billing service on Fridays.\n")
    (notes / "self.md").symlink_to("self.md")
    (notes / "a.md").symlink_to("b.md")
    (notes / "b.md").symlink_to("a.md")
    (notes / "gone.md").symlink_to(tmp_path / "nowhere.md")
    (notes / "again").symlink_to(notes)  # a directory loop: not followed
    done = run_cli("import", "--json", str(notes), env=NO_LLM)
    assert done.returncode == 0, done.stderr
    files = {Path(f["name"]).name: f for f in json.loads(done.stdout)["files"]}
    assert files["good.md"]["status"] == "imported"
    for name in ("self.md", "a.md", "b.md"):
        assert (files[name]["status"], files[name]["why"]) == ("skipped", "a symlink loop")
    assert files["gone.md"]["status"] == "skipped"
    assert "does not exist" in files["gone.md"]["why"]
    assert "left out" in files["gone.md"]["problems"][0]  # shown as a warning without --json


def test_every_file_is_0600_and_every_directory_0700_under_umask_000(
    home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    cache = tmp_path / "cache"  # the per-user model cache
    transcript = tmp_path / "t.jsonl"
    transcript.write_bytes(b"".join(lines(4)))
    note = tmp_path / "note.md"
    note.write_text("# Hosts\n\nOur staging database runs on host db-7.internal.\n")
    commands = [
        ("config", "set", "recall.limit", "7"),
        ("config", "init", "--project"),
        ("remember", "We deploy the billing service on Fridays."),
        ("-c", "ingest.spawn_worker=false", "ingest", "--transcript", str(transcript)),
        ("-c", "ingest.spawn_worker=true", "ingest", "--client", "generic", str(note)),
        ("import", str(note)),
        ("recall", "deploy"),
        ("export", "--output", str(tmp_path / "out.jsonl")),
    ]
    env = {**os.environ, **NO_LLM, "XDG_CACHE_HOME": str(cache)}
    for args in commands:
        mask = os.umask(0)  # the commands' (run_memctl passes this process's on)
        try:
            done = run_memctl(list(args), env, cwd=project, timeout=300)
        finally:
            os.umask(mask)
        assert done.returncode == 0, (args, done.stderr)
    made = [home, *home.rglob("*"), *(project / ".memctl").rglob("*"), tmp_path / "out.jsonl"]
    made += [cache / "memctl", *(cache / "memctl").rglob("*")]
    assert (home / "logs").is_dir() and (cache / "memctl" / "models").is_dir()
    assert (home / "memctl.db.vectors" / "manifest.json").is_file()
    assert (project / ".memctl" / "config.yaml").is_file()
    loose = {
        str(p): oct(p.stat().st_mode & 0o777)
        for p in made
        if p.stat().st_mode & 0o777 != (0o700 if p.is_dir() else 0o600)
    }
    assert not loose


def test_arguments_that_are_not_utf8_are_no_internal_error() -> None:
    bad = os.fsdecode(b"caf\xe9 \xff\xfe deploys")  # what Python makes of such argv bytes
    for args in (("remember", bad), ("recall", bad), ("list", "--tag", bad)):
        done = run_cli(*args, env=NO_LLM)
        assert done.returncode == 0, done.stderr
    assert "caf\ufffd" in run_cli("list", "--json", env=NO_LLM).stdout


def test_an_unclosed_codex_cwd_followed_by_blanks_is_read_at_once(tmp_path: Path) -> None:
    """The pattern that found the folder in Codex's environment block split a run of blanks
    three ways: 8,000 blanks after an unclosed <cwd> took over two minutes, 200,000 would
    take days. The real CLI, bounded, so the old behaviour fails here instead of hanging."""
    blanks = "<environment_context>\n  <cwd>" + " " * 200_000
    path = tmp_path / "rollout.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"timestamp": "2025-03-02T09:00:00Z", "type": kind, "payload": payload})
            for kind, payload in [
                ("session_meta", {"id": "019a-codex-hostile", "timestamp": "2025-03-02T09:00:00Z"}),
                ("response_item", _codex_message("user", blanks)),
                ("response_item", _codex_message("user", "We deploy with make ship.")),
            ]
        )
    )
    done = run_cli(
        "-c",
        "ingest.spawn_worker=false",
        "ingest",
        "--client",
        "codex",
        "--transcript",
        str(path),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "2 messages read, 2 new" in done.stdout


def _codex_message(role: str, text: str) -> dict[str, object]:
    return {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}
