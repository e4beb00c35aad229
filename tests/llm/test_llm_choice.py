"""Which LLM a run uses: ``llm: auto`` (the default) checks for Ollama first; a server that
cannot be reached fails over to the rules at once and says, once, how to set one up."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest

from memctl.config import load_settings
from memctl.context import Context
from memctl.llm import LLMError, choose_llm
from memctl.llm import retry as retry_module
from memctl.llm.ollama import OllamaLLM
from memctl.llm.probe import PROBE_FILE, reachable
from tests.conftest import run_cli
from tests.ingesting import distil
from tests.ollama_server import FakeOllama

TRANSCRIPT = "user: I prefer tabs over spaces.\nassistant: Noted.\n"
SCHEMA = {"type": "object"}


def test_auto_is_the_default(home: Path) -> None:
    assert load_settings().llm == "auto"


def test_auto_without_ollama_uses_the_rules_and_says_how_to_set_it_up(
    make_ctx: Callable[..., Context], dead_ollama_url: str
) -> None:
    ctx = make_ctx(llm="auto", ollama__host=dead_ollama_url)
    choice = choose_llm(ctx.settings)
    assert choice.llm is None
    assert choice.note is not None and "memctl doctor" in choice.note
    assert "memctl config set llm none" in choice.note
    run = distil(ctx, TRANSCRIPT)
    assert run.record.llm == "rules" and run.record.counts == {"create": 1}
    assert [n for n in run.record.notes if "memctl doctor" in n] == [choice.note]


def test_auto_with_ollama_uses_it(
    make_ctx: Callable[..., Context], ollama_server: FakeOllama
) -> None:
    ctx = make_ctx(llm="auto", ollama__host=ollama_server.url)
    choice = choose_llm(ctx.settings)
    assert isinstance(choice.llm, OllamaLLM) and choice.note is None
    choose_llm(ctx.settings)  # the answer is remembered
    assert len(ollama_server.requests_to("/api/version")) == 1


def test_none_never_checks(make_ctx: Callable[..., Context], ollama_server: FakeOllama) -> None:
    ctx = make_ctx(llm="none", ollama__host=ollama_server.url)
    assert choose_llm(ctx.settings).llm is None and choose_llm(ctx.settings).note is None
    assert ollama_server.requests_to("/api/version") == []


def test_the_check_is_remembered_for_a_while(home: Path) -> None:
    home.mkdir()
    with FakeOllama() as server:
        url = server.url
        assert reachable(url, 1.0, home, ttl=60)
    assert reachable(url, 1.0, home, ttl=60)  # within the TTL: the remembered answer
    assert not reachable(url, 1.0, home, ttl=0)  # no memory: asks, and nobody answers
    saved = json.loads((home / PROBE_FILE).read_text())
    assert saved[url][0] is True  # ttl 0 writes nothing
    assert (home / PROBE_FILE).stat().st_mode & 0o777 == 0o600


def test_the_remembered_check_keeps_no_credentials(home: Path) -> None:
    home.mkdir()
    (home / PROBE_FILE).write_text(json.dumps({"http://old:tok-0ld@h:1": [True, 1.0]}))
    with FakeOllama() as server:
        url = server.url.replace("://", "://bob:tok-s3cret@")
        assert reachable(url, 1.0, home, ttl=60)
    text = (home / PROBE_FILE).read_text()
    assert "tok-s3cret" not in text and "tok-0ld" not in text  # an older memctl's key goes
    assert json.loads(text) == {server.url.replace("://", "://bob:***@"): [True, ANY]}
    from memctl.llm import probe

    probe._seen.clear()  # a new process: the answer comes from the file
    assert reachable(url, 1.0, home, ttl=60)


def test_a_refused_connection_is_not_retried(
    dead_ollama_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    waits: list[float] = []
    monkeypatch.setattr(retry_module.time, "sleep", waits.append)
    llm = OllamaLLM(dead_ollama_url, "llama3.2", timeout=5.0, retries=2, backoff=1.0)
    with pytest.raises(LLMError) as caught:
        llm.complete_json("s", "p", SCHEMA, lambda v: v)
    assert caught.value.reason == "unreachable" and waits == []
    assert "memctl doctor" in str(caught.value) and dead_ollama_url in str(caught.value)


def test_a_server_error_once_connected_is_still_retried(
    ollama_server: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.ollama_server import Fail

    waits: list[float] = []
    monkeypatch.setattr(retry_module.time, "sleep", waits.append)
    ollama_server.script_chat(Fail(500, "busy"), {"n": 1})
    llm = OllamaLLM(ollama_server.url, "llama3.2", timeout=5.0, retries=2, backoff=1.0)
    assert llm.complete_json("s", "p", SCHEMA, lambda v: v).value == {"n": 1}
    assert waits == [1.0]


def _ingest_wait(transcript: Path, *config: str) -> Any:
    args: list[str] = []
    for pair in config:
        args += ["-c", pair]
    return run_cli(*args, "ingest", "--transcript", str(transcript), "--wait")


@pytest.mark.parametrize("llm", ["auto", "ollama"])
def test_ingest_wait_without_ollama_warns_once(
    tmp_path: Path, dead_ollama_url: str, llm: str
) -> None:
    transcript = tmp_path / "t.txt"
    transcript.write_text(TRANSCRIPT * 3)
    host = dead_ollama_url.replace("://", "://bob:tok-s3cret@")  # shown without the token
    done = _ingest_wait(transcript, f"llm={llm}", f"ollama.host={host}")
    assert done.returncode == 0, done.stderr
    hints = [line for line in done.stderr.splitlines() if "memctl doctor" in line]
    shown = dead_ollama_url.replace("://", "://bob:***@")
    assert len(hints) == 1 and shown in hints[0] and len(hints[0]) <= 160
    runs = json.loads(run_cli("runs", "--json").stdout)
    assert "tok-s3cret" not in json.dumps(runs) + done.stderr
    expected = "rules" if llm == "auto" else "ollama:llama3.2 -> rules"
    assert [r["llm"] for r in runs] == [expected]


def test_ingest_wait_with_llm_none_says_nothing(tmp_path: Path) -> None:
    transcript = tmp_path / "t.txt"
    transcript.write_text(TRANSCRIPT)
    done = _ingest_wait(transcript, "llm=none")
    assert done.returncode == 0 and "ollama" not in done.stderr.lower()


def test_import_of_several_files_without_ollama_warns_once(
    tmp_path: Path, dead_ollama_url: str
) -> None:
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text(f"{name}: we deploy on Fridays with make ship.\n")
    done = run_cli(
        "-c",
        f"ollama.host={dead_ollama_url}",
        "import",
        str(tmp_path / "a.txt"),
        str(tmp_path / "b.txt"),
    )
    assert done.returncode == 0, done.stderr
    assert len([line for line in done.stderr.splitlines() if "memctl doctor" in line]) == 1
