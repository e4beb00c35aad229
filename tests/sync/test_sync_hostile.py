"""One hostile file in the sync repository is skipped with one line naming it, and sync
goes on for the rest: real bare repositories on disk, files planted the way a hostile
member's push leaves them (any bytes in names, ``..`` entries, YAML bombs)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memctl.api import sync as sync_api
from memctl.context import Context
from memctl.errors import SyncError
from memctl.maintain.redaction import replaced_values
from memctl.store import memories as store
from memctl.store.sync import set_read_commit
from memctl.sync.memfile import BadFile, parse
from tests.conftest import memctl_command
from tests.syncing import bare_repo, machine, plant, shared

SYNC = sync_api.SyncRequest()
HOST = "f" * 16
MOMENT = "'2026-01-01T00:00:00.000Z'"
BASE = f"state: active\ncreated_at: {MOMENT}\nupdated_at: {MOMENT}\n"


def _id(n: int) -> str:
    return f"b{n:031x}"


def _file(n: int, body: str = "content: planted\n") -> tuple[bytes, bytes]:
    return (
        f"memories/global/b0/{_id(n)}_{HOST}.yaml".encode(),
        f"id: {_id(n)}\n{BASE}{body}".encode(),
    )


def _laughs(levels: int, key: str = "relations") -> str:
    """A "billion laughs": each level an alias list of ten of the one before."""
    lines = ["l0: &l0 {dst_id: " + "a" * 32 + ", type: related}"]
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 10) + "]")
    lines.append(f"{key}: *l{levels}")
    return "\n".join(lines) + "\n"


HOSTILE: dict[str, str] = {
    "alias": _laughs(9),
    "alias-small": _laughs(7),
    "tags-alias": _laughs(9, "tags"),
    "deep": "tags: " + "[" * 5000 + "]" * 5000 + "\n",
    "long-string": "content: ok\nl2_content: " + "x" * 600_000 + "\n",
    "many-relations": "relations:\n"
    + "".join(f"- {{dst_id: {'a' * 32}, type: related}}\n" for _ in range(20_000)),
}


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    return bare_repo(tmp_path)


@pytest.fixture
def pair(tmp_path: Path, remote: Path):  # type: ignore[no-untyped-def]
    a, b = machine(tmp_path, "a", remote), machine(tmp_path, "b", remote)
    sync_api.init(a, str(remote))
    sync_api.init(b, str(remote))
    yield a, b
    a.close()
    b.close()


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_yaml_bomb_is_refused_before_it_is_built(name: str) -> None:
    text = f"id: {_id(1)}\n{BASE}content: x\n" + HOSTILE[name]
    with pytest.raises(BadFile):
        parse(text, _id(1), HOST, "global")


@pytest.mark.parametrize(
    "moment",
    ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00", "9000-01-01T00:00:00Z"],
)
def test_a_date_out_of_range_is_refused(moment: str) -> None:
    text = f"id: {_id(1)}\nstate: active\nupdated_at: '{moment}'\ncontent: x\n"
    with pytest.raises(BadFile, match="_at must be a timestamp"):
        parse(text, _id(1), HOST, "global")


def test_only_a_tombstone_is_forgotten_and_the_flag_is_a_boolean() -> None:
    tomb = f"id: {_id(1)}\nstate: deleted\nupdated_at: '2026-01-01T00:00:00Z'\n"
    assert parse(tomb + "forgotten: true\n", _id(1), HOST, "global").forgotten
    assert not parse(tomb, _id(1), HOST, "global").forgotten  # an older memctl's: soft
    # A file with text is no tombstone: the flag cannot make a machine forget it.
    assert not parse(tomb + "forgotten: true\ncontent: x\n", _id(1), HOST, "global").forgotten
    with pytest.raises(BadFile, match="forgotten must be true or false"):
        parse(tomb + "forgotten: 'yes'\n", _id(1), HOST, "global")


def test_only_a_live_file_is_redacted_and_the_flag_is_a_boolean() -> None:
    live = f"id: {_id(1)}\nupdated_at: '2026-01-01T00:00:00Z'\ncontent: x [REDACTED] y\n"
    assert parse(live + "redacted: true\n", _id(1), HOST, "global").redacted
    assert not parse(live, _id(1), HOST, "global").redacted  # an older memctl's: as before
    tomb = f"id: {_id(1)}\nstate: deleted\nupdated_at: '2026-01-01T00:00:00Z'\n"
    assert not parse(tomb + "redacted: true\n", _id(1), HOST, "global").redacted
    with pytest.raises(BadFile, match="redacted must be true or false"):
        parse(live + "redacted: 1\n", _id(1), HOST, "global")


@pytest.mark.parametrize(
    ("before", "after", "values"),
    [
        ("code qx81-7734 and qx81-7734.", "code [REDACTED] and [REDACTED].", ["qx81-7734"] * 2),
        (
            "[REDACTED] then zeta-99-key",
            "[REDACTED] then [REDACTED]",
            ["[REDACTED]", "zeta-99-key"],
        ),
        ("the old merged text", "the old text", None),  # a revert: no mark
        ("a b c", "a b c [REDACTED]", None),  # text added, none taken out
    ],
)
def test_the_values_a_redaction_replaced(before: str, after: str, values: list[str] | None) -> None:
    assert replaced_values(before, after) == values


def _plant_everything(remote: Path, tmp_path: Path) -> None:
    """Plant every hostile file at once, after both machines cloned."""
    files = dict(_file(n, "content: x\n" + HOSTILE[name]) for n, name in enumerate(HOSTILE))
    files.update([_file(50, "content: x\nupdated_at: '9999-12-31T23:59:59-14:00'\n")])
    good_path, good = _file(60, "content: a planted but harmless memory\n")
    files[good_path] = good
    files[b"memories/glob\xffal/b0/" + f"{_id(61)}_{HOST}.yaml".encode()] = good
    files[f"memories/global/b0/{_id(62)}_{HOST}".encode() + b"\xfe.yaml"] = good
    files[b"memories/../b0/" + f"{_id(63)}_{HOST}.yaml".encode()] = good
    files[b"../escape.yaml"] = good
    files[b"memories/global/../../x.yaml"] = good
    plant(remote, files, symlinks={b"memories/global/link": str(tmp_path).encode()})


def test_every_hostile_file_is_skipped_and_the_rest_syncs(
    pair: tuple[Context, Context], remote: Path, tmp_path: Path
) -> None:
    a, b = pair
    kept = shared(a, "a memory of a that b must receive")
    sync_api.sync(a, SYNC)
    _plant_everything(remote, tmp_path)
    result = sync_api.sync(b, SYNC)
    bad = dict(result.bad_files)
    assert store.get_memory(b.db, kept.id) is not None
    assert store.get_memory(b.db, _id(60)) is not None
    for n in range(len(HOSTILE)):
        assert store.get_memory(b.db, _id(n)) is None
    assert store.get_memory(b.db, _id(50)) is None
    assert any("\\xff" in path for path in bad) and any("\\xfe" in path for path in bad)
    assert len(bad) >= len(HOSTILE) + 3
    assert sum("'..'" in why for why in bad.values()) == 3
    # b's push mended the repository: a plain clone checks it out again
    subprocess.run(["git", "clone", "-q", str(remote), str(tmp_path / "fresh")], check=True)
    again = sync_api.sync(b, SYNC)  # and the next sync too
    assert store.get_memory(b.db, kept.id) is not None
    # It read only what changed since the sync before; a read of the whole tree finds
    # nothing else and names the same bad files.
    with b.db.atomic():
        set_read_commit(b.db, None, [])
    whole = sync_api.sync(b, SYNC)
    assert sorted(whole.bad_files) == sorted(again.bad_files)
    assert not any(whole.came_in.values()) and not any(whole.went_out.values())
    assert again.bad_files
    a_result = sync_api.sync(a, SYNC)
    assert store.get_memory(a.db, _id(60)) is not None and a_result.bad_files


def test_the_cli_exits_0_and_names_each_hostile_file(
    pair: tuple[Context, Context], remote: Path, tmp_path: Path
) -> None:
    _, b = pair
    plant(remote, dict([_file(1, "content: x\n" + _laughs(9))]))
    plant(remote, {b"memories/glob\xffal/b0/" + f"{_id(2)}_{HOST}.yaml".encode(): b"x: 1\n"})
    env = {**os.environ, "MEMCTL_LLM": "none"}
    done = subprocess.run(
        memctl_command(["--home", str(b.settings.home), "sync"], env),  # forked
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    skipped = [line for line in done.stderr.splitlines() if "skipped" in line]
    assert len(skipped) == 2, done.stderr
    assert any(_id(1) in line for line in skipped)
    assert any("\\xff" in line for line in skipped)


def test_a_format_file_padded_past_64_kib_is_still_read(
    pair: tuple[Context, Context], remote: Path
) -> None:
    a, _ = pair
    plant(remote, {b"memctl.yaml": b'format: "3.0"\n' + b"#" * 70_000 + b"\n"})
    with pytest.raises(SyncError, match="format 3.0"):
        sync_api.sync(a, SYNC)


def test_a_format_file_that_is_a_symlink_is_refused(
    pair: tuple[Context, Context], remote: Path
) -> None:
    a, _ = pair
    plant(remote, {}, symlinks={b"memctl.yaml": b"/etc/passwd"})
    with pytest.raises(SyncError, match="memctl.yaml"):
        sync_api.sync(a, SYNC)
