"""memctl.cli.plain prints what rich prints: a recall's tables and lines, byte for byte, on a
pipe and on a terminal, compared with rich itself over many tables; and a `memctl recall`
process printing its table loads no rich at all."""

from __future__ import annotations

import io
import random
import sys

import pytest
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

from memctl.cli import plain
from memctl.cli.render import _plain_table, print_blocks, warn, with_memory_column
from tests.conftest import python_c, run_cli

WORDS = [
    "deploy", "make", "release", "the", "main", "branch", "a", "I", "postgres-16",
    "s3://tidepool-backups-eu-west-1/postgres/nightly-and-hourly-snapshots/",
    "naïve", "café", "Ωmega", "…", "x" * 45, "end.", "(see", "#42)", "ÿ",
]  # fmt: skip
HEADERS = ("#", "relevance", "id", "age", "category")


def rich_table(rows: list[list[str]], texts: list[str], width: int, styled: bool) -> str:
    shown = io.StringIO()
    console = Console(
        file=shown,
        width=width,
        force_terminal=styled,
        color_system="standard" if styled else None,
        highlight=False,
        markup=False,
        emoji=False,
    )
    console.print(with_memory_column(Table(header_style="bold"), HEADERS, rows, texts))
    return shown.getvalue()


def a_text(chance: random.Random) -> str:
    words = [chance.choice(WORDS) for _ in range(chance.randint(0, 40))]
    text = "".join(word + " " * chance.choice((1, 1, 1, 2, 3)) for word in words)
    text = " " * chance.choice((0, 0, 0, 1, 4)) + text  # sometimes indented
    return text if chance.random() < 0.5 else text.strip()


@pytest.mark.parametrize("seed", range(8))
def test_a_table_is_rich_s_own_bytes(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    chance = random.Random(seed)
    made = 0
    for _ in range(50):
        width = chance.choice((40, 57, 60, 80, 81, 100, 133, 200))
        styled = chance.random() < 0.5
        rows = [
            [str(n), f"{chance.random():.4f}", f"{chance.getrandbits(32):08x}", "3d", "message"]
            for n in range(1, chance.randint(1, 8))
        ]
        texts = [a_text(chance) for _ in rows]
        monkeypatch.setattr("memctl.cli.render._console", lambda _, w=width: Console(width=w))
        ours = _plain_table(HEADERS, rows, texts, width, styled)
        if ours is not None:
            made += 1
            assert ours == rich_table(rows, texts, width, styled), (width, styled, texts)
    assert made >= 20  # most tables are drawn without rich (the narrowest consoles are not)


def test_text_rich_would_measure_otherwise_is_left_to_rich() -> None:
    rows = [["1", "0.5000", "abcdef12", "3d", "message"]]
    for text in ("部署流程：每周五发布", "tab\tinside", "two\nlines", "no\xa0break", "e\u0301"):
        assert _plain_table(HEADERS, rows, [text], 80, False) is None, text


def test_every_character_taken_is_one_cell_and_no_space() -> None:
    assert all(cell_len(c) == 1 and not c.isspace() or c == " " for c in plain._SAFE)


def test_a_table_wider_than_the_console_is_left_to_rich() -> None:
    rows = [["1", "0.5000", "abcdef12", "3d", "a-very-long-category-name-" * 3]]
    assert _plain_table(HEADERS, rows, ["deploy"], 60, False) is None


# Environments rich decides a console's width and colour from.
ENVIRONS = [
    {},
    {"COLUMNS": "120"},
    {"COLUMNS": "55", "LINES": "10"},
    {"FORCE_COLOR": "1"},
    {"FORCE_COLOR": "1", "TERM": "dumb"},
    {"FORCE_COLOR": "1", "TERM": "dumb", "COLUMNS": "90"},
    {"FORCE_COLOR": "1", "TERM": "dumb", "COLUMNS": "90", "LINES": "5"},
    {"FORCE_COLOR": "1", "NO_COLOR": "1"},
    {"FORCE_COLOR": ""},
    {"TTY_COMPATIBLE": "1", "TERM": "xterm-256color"},
    {"TTY_COMPATIBLE": "0", "FORCE_COLOR": "1"},
]


@pytest.mark.parametrize("environ", ENVIRONS)
def test_the_console_is_rich_s(environ: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Width and colour as rich's own console decides them from the environment, and the
    printed blocks the same."""
    for name in ("COLUMNS", "LINES", "TERM", "FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    rows = [["1", "0.5000", "abcdef12", "3d", "message"]]
    blocks: list[str | tuple[tuple[str, ...], list[list[str]], list[str]]] = [
        (HEADERS, rows, ["We deploy with make release from the main branch, " * 3]),
        "also possible:",
    ]
    monkeypatch.setattr("memctl.cli.render._CONSOLES", {})
    print_blocks(blocks)
    ours = sys.stdout.getvalue()
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    made = Console(highlight=False, markup=False, emoji=False)
    monkeypatch.setattr("memctl.cli.render._CONSOLES", {False: made})
    print_blocks(blocks)
    assert ours == sys.stdout.getvalue()
    assert ("\x1b[1m" in ours) == (made.color_system is not None)


@pytest.mark.parametrize("environ", ENVIRONS)
@pytest.mark.parametrize("message", ["every project searched", "tab\tinside", "naïve café"])
def test_a_warning_is_rich_s_own_bytes(
    environ: dict[str, str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warning line on stderr (``render.warn``) as rich's console prints it, in yellow on
    a terminal; text rich might print otherwise goes to rich."""
    for name in ("COLUMNS", "LINES", "TERM", "FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setattr("memctl.cli.render._CONSOLES", {})
    warn(message)
    ours = sys.stderr.getvalue()
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    made = Console(stderr=True, highlight=False, markup=False, emoji=False)
    monkeypatch.setattr("memctl.cli.render._CONSOLES", {True: made})
    warn(message)
    assert ours == sys.stderr.getvalue()
    assert ("\x1b[33m" in ours) == (made.color_system is not None and not made.no_color)


# What a recall printing its table never uses: rich and Typer (~25 ms of a process), the
# explanations and the context block (--explain, --why-not, --format context), the memory
# operations (their writer: `remember`, `update`...) and forget's SQL.
UNUSED = (
    "rich",
    "typer",
    "click",
    "memctl.retrieve.explain",
    "memctl.retrieve.context_block",
    "memctl.memories.operations",
    "memctl.store.forget",
)


def test_a_recall_prints_its_table_without_what_it_does_not_use(home: object) -> None:
    """The whole `memctl recall` process: its table, and none of ``UNUSED`` loaded; asked
    with --explain, it explains (and loads the explanations)."""
    assert run_cli("remember", "We deploy with make release from the main branch.").returncode == 0
    probe = (
        "import sys\nsys.argv = ['memctl', 'recall', *sys.argv[1:], 'how do we deploy?']\n"
        "from memctl.cli.entry import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print('LOADED', sorted(m for m in sys.modules if m.startswith({UNUSED!r})))"
    )
    done = python_c(probe, env={"MEMCTL_EMBEDDER": "hash"})
    assert "make release" in done.stdout and "┏━" in done.stdout
    assert done.stdout.splitlines()[-1] == "LOADED []"
    explained = python_c(probe, "--explain", env={"MEMCTL_EMBEDDER": "hash"})
    assert "found by:" in explained.stdout
    assert "memctl.retrieve.explain" in explained.stdout.splitlines()[-1]


def test_rich_is_pinned_to_the_release_this_module_draws() -> None:
    """plain.py re-draws one rich release's table: pyproject pins rich to that minor
    version, so a rich release that draws otherwise never reaches an install unseen (a new
    one is taken by moving the pin and RICH_DRAWN together, with this file passing)."""
    import tomllib
    from importlib.metadata import version

    from tests.conftest import ROOT

    wanted = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    major, minor = (int(part) for part in plain.RICH_DRAWN.split("."))
    assert f"rich>={major}.{minor},<{major}.{minor + 1}" in wanted["dependencies"]
    assert version("rich").split(".")[:2] == [str(major), str(minor)]
