"""What memctl kept after the user took it out (a third pass over the surfaces the brief
says leak): a memory deleted for good leaves no tag in its event log; an imported line's
ids, scope and dates hold no secret. Real SQLite files and real `memctl` processes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli
from tests.memories.test_forget_everywhere import _files_holding
from tests.test_secret_doors import CORPUS

TAG = "acme-layoffs-q3"  # a tag naming what the memory was about


def _ok(*args: str) -> str:
    done = run_cli(*args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_memory_deleted_for_good_leaves_no_tag_in_its_events(home: Path) -> None:
    """An edit's event records the tags before and after; a permanent delete blanked the
    texts there and left the tags, so the database and every backup kept them."""
    memory = _ok("remember", "Talk to HR before Friday about the reorg.", "-t", TAG).strip()
    _ok("update", memory, "-t", "hr")
    _ok("maintain")  # a backup holding the edit
    assert _files_holding(home, TAG)
    _ok("delete", memory, "--permanent")
    assert _files_holding(home, TAG) == []
    assert TAG not in _ok("events", "--json")


def test_an_import_line_with_a_secret_in_an_id_scope_or_date_is_refused(
    home: Path, tmp_path: Path
) -> None:
    """memctl's own JSONL keeps a record's ids, scope and dates as written: a secret in
    one reached the store (and its scope counts, relations, events), and a date that was
    none made `memctl list` and `recall` fail with the value in the error."""
    secret = next(row["secret"] for row in CORPUS if row["name"] == "github")
    token = f"ghp_{secret}"
    lines = [
        {"content": "the billing cron runs nightly", "scope": f"team-{token}"},
        {"content": "the staging host is blue", "id": token},
        {"content": "the release train leaves on Tuesdays", "created_at": f"2024 {token}"},
        {"content": "the old deploy path", "superseded_by": token, "state": "superseded"},
        {"content": "the API is versioned in the path", "updated_at": "last week"},
        {"content": "the linter runs before every commit"},
    ]
    given = tmp_path / "memories.jsonl"
    given.write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = run_cli("import", str(given), "--json")
    assert done.returncode == 0, done.stderr
    errors = json.loads(done.stdout)["errors"]
    assert [e.split(": ", 1)[1] for e in errors] == [
        'line 1: "scope" holds what looks like a secret (github-token)',
        'line 2: "id" holds what looks like a secret (github-token)',
        'line 3: "created_at" must be an ISO 8601 date and time',
        'line 4: "superseded_by" holds what looks like a secret (github-token)',
        'line 5: "updated_at" must be an ISO 8601 date and time',
    ]
    assert secret not in done.stdout + done.stderr
    assert _files_holding(home, secret) == []
    listed = _ok("list", "--json")  # every memory's dates read back
    assert "linter" in listed and "release train" not in listed and "last week" not in listed
