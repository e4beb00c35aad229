"""A sync remote written with its credentials (``https://user:TOKEN@host/repo.git``, as
git accepts it) is shown without them: not in what `memctl sync`, `sync init`, `sync
status`, `doctor` and `maintain` print, nor in the runs `maintain` records in the
database (cron mails or logs what they print). Only the home's config.yaml, where the
person wrote it, keeps it. Real processes against a real port where nothing listens."""

from __future__ import annotations

import socket
from pathlib import Path

from memctl.config.urls import shown_url
from tests.conftest import files_holding, run_cli
from tests.syncing import bare_repo

TOKEN = "s3cr3tpassw0rd-for-sync"


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_remote_s_credentials_are_never_printed_nor_stored_but_in_the_config(
    home: Path,
) -> None:
    remote = f"https://bob:{TOKEN}@127.0.0.1:{_closed_port()}/memories.git"
    said = [run_cli("sync", "init", remote)]
    assert said[0].returncode != 0
    assert run_cli("config", "set", "sync.remote", remote).returncode == 0
    said += [
        run_cli("sync"),
        run_cli("sync", "status"),
        run_cli("sync", "status", "--json"),
        run_cli("doctor"),
        run_cli("-c", "sync.auto=true", "maintain"),
        run_cli("runs", "--json"),
    ]
    for done in said:
        assert TOKEN not in done.stdout + done.stderr, done.args
    assert "https://bob:***@127.0.0.1" in said[2].stdout  # status still says which remote
    assert files_holding(home, TOKEN) == ["config.yaml"]


def test_a_remote_s_token_stays_out_of_the_database_when_the_sync_works(
    home: Path, tmp_path: Path
) -> None:
    """The same, against a real bare repository that git reaches by the credentialed URL
    (git's own ``url.<base>.insteadOf``): the sync runs, and the database (which backups
    copy) does not record the token; git's config files keep it, as git does."""
    remote = bare_repo(tmp_path)
    url = f"https://bob:{TOKEN}@git.example.invalid/memories.git"
    config = tmp_path / "gitconfig"
    config.write_text(f'[url "{remote}"]\n\tinsteadOf = {url}\n')
    env = {"GIT_CONFIG_GLOBAL": str(config)}
    assert run_cli("config", "set", "sync.remote", url).returncode == 0
    assert run_cli("remember", "we deploy on Fridays", "-s", "global").returncode == 0
    done = run_cli("sync", env=env)
    assert done.returncode == 0 and "pushed" in done.stdout, done.stdout + done.stderr
    backup = ("-c", "maintain.backups=1", "-c", "maintain.backup_every_hours=0")
    assert run_cli(*backup, "maintain", "--only", "upkeep", env=env).returncode == 0
    assert list(home.glob("backups/*"))
    assert files_holding(home, TOKEN) == ["config.yaml", "sync/repo/.git/config"]


def test_shown_url_hides_a_password_or_a_token_given_as_the_user() -> None:
    assert shown_url("https://bob:tok@github.com/a/b.git") == "https://bob:***@github.com/a/b.git"
    assert shown_url("https://ghp_abc@github.com/a/b.git") == "https://***@github.com/a/b.git"
    assert shown_url("git@github.com:a/b.git") == "git@github.com:a/b.git"
    assert shown_url("ssh://git@host/a/b.git") == "ssh://git@host/a/b.git"
    assert shown_url("/srv/memories.git") == "/srv/memories.git"
