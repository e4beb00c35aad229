"""The generated completions, man page and reference tables: current, complete, and valid;
the hand-written docs: every command in the reference, every link to something there."""

from __future__ import annotations

import enum
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any

import pytest
import typer

from memctl.memories.told_back import memctl_tool

ROOT = Path(__file__).resolve().parent.parent


def _load_gen_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


gen_docs = _load_gen_docs()


@pytest.fixture(scope="module")
def rendered() -> dict[str, str]:
    return gen_docs.render_all()


@pytest.fixture(scope="module")
def tree() -> Any:  # gen_docs.Command, from a module loaded by path
    return gen_docs.command_tree()


def command_paths(tree: Any) -> list[str]:
    return [" ".join(cmd.path) for cmd in tree.walk() if cmd.path]


def test_generated_files_are_current(rendered: dict[str, str]) -> None:
    stale = [
        path
        for path, content in rendered.items()
        if not (ROOT / path).is_file() or (ROOT / path).read_text(encoding="utf-8") != content
    ]
    assert not stale, (
        f"stale generated files: {', '.join(stale)}; "
        f"run `{gen_docs.REGENERATE}` and commit the result"
    )


def test_render_all_is_deterministic(rendered: dict[str, str]) -> None:
    assert gen_docs.render_all() == rendered
    assert set(rendered) == {*gen_docs.OUTPUTS, *gen_docs.DOCS_WITH_TABLES, gen_docs.VALUES}


def test_check_mode_reports_stale_files_without_writing(tmp_path: Path) -> None:
    empty = tmp_path / "checkout"
    empty.mkdir()
    assert gen_docs.stale_files(empty) == [
        *gen_docs.OUTPUTS,
        *gen_docs.DOCS_WITH_TABLES,
        gen_docs.VALUES,
    ]
    assert not any(empty.iterdir())


def test_every_command_and_option_has_help(tree: Any) -> None:
    missing = []
    for cmd in tree.walk():
        if not cmd.help.strip():
            missing.append(f"command `{cmd.name}`")
        for option in cmd.options:
            if not option.is_help and not option.help.strip():
                missing.append(f"option {'/'.join(option.names)} of `{cmd.name}`")
    assert not missing, "no help text for: " + "; ".join(missing)


def test_the_tree_has_the_known_commands(tree: Any) -> None:
    paths = command_paths(tree)
    for path in ("remember", "recall", "config", "config set", "model install", "reembed"):
        assert path in paths


# --- bash -----------------------------------------------------------------------------------


BASH = shutil.which("bash")


def complete_bash(*words: str, script_path: Path = ROOT / gen_docs.BASH) -> list[str]:
    """COMPREPLY of the generated completion function for the command line `words`."""
    quoted = " ".join("'" + word.replace("'", "'\\''") + "'" for word in words)
    script = (
        f"source '{script_path}'\n"
        f"COMP_WORDS=({quoted})\n"
        "COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))\n"
        'COMP_LINE="${COMP_WORDS[*]}"\n'
        "COMP_POINT=${#COMP_LINE}\n"
        '_memctl memctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"\n'
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", script],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return [line for line in done.stdout.splitlines() if line]


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_bash_completion_is_valid_bash() -> None:
    done = subprocess.run(
        [BASH, "-n", str(ROOT / gen_docs.BASH)], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (("memctl", "rec"), ["recall"]),
        (("memctl", "recall", "--li"), ["--limit"]),
        (("memctl", "config", "s"), ["show", "set"]),
        (("memctl", "--home", "/tmp", "-c", "recall.limit=3", "mod"), ["model"]),
        (("memctl", "config", "set", "--pro"), ["--project"]),
        (("memctl", "--ver"), ["--version"]),
    ],
)
def test_bash_completion_completes(words: tuple[str, ...], expected: list[str]) -> None:
    assert complete_bash(*words) == expected


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_bash_completion_offers_every_top_level_command(tree: Any) -> None:
    assert complete_bash("memctl", "") == [sub.path[-1] for sub in tree.subcommands]


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_bash_completion_does_not_offer_options_as_an_option_value() -> None:
    assert complete_bash("memctl", "recall", "--limit", "") == []


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_bash_completion_completes_file_values() -> None:
    target = ROOT / "completions" / "memctl"
    assert f"{target}.bash" in complete_bash("memctl", "export", "--output", str(target))
    assert f"{target}.bash" in complete_bash("memctl", "import", str(target))


# --- zsh and fish ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["ZSH", "FISH"])
def test_zsh_and_fish_mention_every_command(rendered: dict[str, str], tree: Any, path: str) -> None:
    text = rendered[getattr(gen_docs, path)]
    missing = [cmd.path[-1] for cmd in tree.walk() if cmd.path and cmd.path[-1] not in text]
    assert not missing, f"{path.lower()} completion lacks {missing}"


def test_zsh_file_is_a_compdef(rendered: dict[str, str]) -> None:
    assert rendered[gen_docs.ZSH].startswith("#compdef memctl\n")


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completion_is_valid_zsh() -> None:
    done = subprocess.run(
        ["zsh", "-n", str(ROOT / gen_docs.ZSH)], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr


def complete_fish(line: str) -> list[str]:
    script = f"source '{ROOT / gen_docs.FISH}'; complete -C '{line}'"
    done = subprocess.run(
        ["fish", "--no-config", "-c", script],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return [row.split("\t")[0] for row in done.stdout.splitlines()]


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completion_completes() -> None:
    assert complete_fish("memctl rec") == ["recall"]
    assert complete_fish("memctl recall --li") == ["--limit"]
    assert sorted(complete_fish("memctl config ")) == ["init", "path", "set", "show"]
    assert "--project" in complete_fish("memctl config set --")


# --- man page -------------------------------------------------------------------------------


def test_man_page_documents_every_command_key_and_exit_code(
    rendered: dict[str, str], tree: Any
) -> None:
    from memctl import errors
    from memctl.config.keys import KEYS

    man = rendered[gen_docs.MAN]
    for path in command_paths(tree):
        assert f'.SS "memctl {path}"' in man
    for section in (
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "GLOBAL OPTIONS",
        "COMMANDS",
        "ENVIRONMENT",
        "FILES",
        '"EXIT STATUS"',
        '"SEE ALSO"',
    ):
        assert f".SH {section.strip(chr(34))}" in man
    for key in KEYS:
        assert key.env in man
    codes = {
        cls.exit_code
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.MemctlError)
    }
    for code in codes:
        assert f".TP\n\\fB{code}\\fR\n" in man
    assert "\\-\\-limit" in man


def test_roff_escaping() -> None:
    assert gen_docs.roff(".hidden") == "\\&.hidden"
    assert gen_docs.roff("'quoted'") == "\\&'quoted'"
    assert gen_docs.roff("a\\b") == "a\\eb"
    assert gen_docs.roff("use --permanent or -n, long-term") == (
        "use \\-\\-permanent or \\-n, long-term"
    )
    assert gen_docs.roff("café") == "caf\\[u00E9]"


def man_render_command() -> list[str] | None:
    if shutil.which("groff"):
        return ["groff", "-man", "-Tutf8", "-ww", "-z"]
    if shutil.which("man"):
        return ["man", "--warnings", "-l"]
    return None


@pytest.mark.skipif(man_render_command() is None, reason="neither groff nor man is installed")
def test_man_page_renders_without_warnings() -> None:
    command = man_render_command()
    assert command is not None
    done = subprocess.run(
        [*command, str(ROOT / gen_docs.MAN)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr


# --- README and docs/ ------------------------------------------------------------------------


def test_the_command_reference_has_a_row_for_every_command(tree: Any) -> None:
    reference = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    rows = [line for line in reference.splitlines() if line.startswith("| `memctl ")]
    missing = [
        f"memctl {path}"
        for path in command_paths(tree)
        if not any(f"memctl {path}" in row for row in rows)
    ]
    assert not missing, f"the table of docs/commands.md does not name: {', '.join(missing)}"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/commands.md)" in readme


def test_the_generated_tables_hold_every_config_key_and_mcp_tool(rendered: dict[str, str]) -> None:
    from memctl.config.keys import KEYS

    config = rendered[gen_docs.CONFIG_DOC]
    assert all(f"| `{key.name}` |" in config for key in KEYS)
    tools, resources = gen_docs.mcp_listing()
    mcp = rendered[gen_docs.MCP_DOC]
    for tool in tools:
        row = next(line for line in mcp.splitlines() if line.startswith(f"| `{tool.name}` |"))
        assert all(f"`{name}` (" in row for name in tool.input_schema.get("properties", {}))
    assert {"memory_search", "memory_store", "session_search"} <= {tool.name for tool in tools}
    # every tool's result is memctl's store read back: ingest keeps no line of it (s29-leak:
    # session_expand's raw messages outlived their session's forget in the session asking)
    assert all(memctl_tool(f"mcp__memctl__{tool.name}") for tool in tools)
    assert all(f"| `{resource.uri}` |" in mcp for resource in resources)


def test_every_tuning_key_has_a_source_whose_section_exists() -> None:
    """memctl/config/sources.py names a source for each tuning key and no other name; a
    "PAGE § SECTION" it cites is the start of a heading of docs/PAGE."""
    from memctl.config.keys import KEYS
    from memctl.config.sources import SOURCES

    assert set(SOURCES) == {key.name for key in KEYS if key.tuning}
    missing = []
    for name, source in SOURCES.items():
        for page, section in re.findall(r"(\w+\.md) § ([^();:]+?)\s*(?:[();:]|$)", source):
            text = (ROOT / "docs" / page).read_text(encoding="utf-8")
            headings = re.findall(r"^#+ (.+)$", text, re.M)
            if not any(h.startswith(section) for h in headings):
                missing.append(f"{name}: {page} § {section}")
    assert missing == []
    assert all(s.startswith(("measured:", "issue ", "reasoned:")) for s in SOURCES.values())


def anchor(heading: str) -> str:
    """The id GitHub gives a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_every_link_between_the_docs_reaches_a_file_and_heading() -> None:
    broken = []
    for doc in markdown_files():
        text = doc.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # a URL
            path, _, fragment = target.partition("#")
            linked = (doc.parent / path).resolve() if path else doc
            if not linked.exists():
                broken.append(f"{doc.name}: {target}")
            elif fragment and linked.suffix == ".md":
                headings = re.findall(r"^#+ (.+)$", linked.read_text(encoding="utf-8"), re.M)
                if fragment not in {anchor(h) for h in headings}:
                    broken.append(f"{doc.name}: {target}")
    assert broken == []


def test_anchor_is_githubs() -> None:
    assert anchor("Set up with your assistant") == "set-up-with-your-assistant"
    assert anchor("The embedding model") == "the-embedding-model"
    assert anchor("Recovery by `sessions grep` (x)") == "recovery-by-sessions-grep-x"


class Color(enum.StrEnum):
    red = "red"
    green = "green"


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_choices_flag_pairs_and_file_arguments(tmp_path: Path) -> None:
    """What memctl has no command for yet, on a small app: the next command may need it."""
    app = typer.Typer(help="memctl: a test app.")

    @app.callback()
    def root() -> None:
        """Root."""

    @app.command()
    def paint(
        files: Annotated[list[Path] | None, typer.Argument(help="Files.")] = None,
        color: Annotated[Color, typer.Option("--color", help="A color.")] = Color.red,
        loud: Annotated[bool, typer.Option("--loud/--quiet", help="Volume.")] = False,
    ) -> None:
        """Paint things."""

    rendered = gen_docs.render_all(app)
    script = tmp_path / "memctl.bash"
    script.write_text(rendered[gen_docs.BASH], encoding="utf-8")
    assert complete_bash("memctl", "paint", "--color", "", script_path=script) == ["red", "green"]
    assert complete_bash("memctl", "paint", "--color=g", script_path=script) == ["--color=green"]
    assert complete_bash("memctl", "paint", "--q", script_path=script) == ["--quiet"]
    assert complete_bash("memctl", "paint", str(script)[:-2], script_path=script) == [str(script)]
    assert "'*:files - Files.:_files'" in rendered[gen_docs.ZSH]
    assert "-l color -x -a 'red green'" in rendered[gen_docs.FISH]
    assert "\\fB\\-\\-loud\\fR / \\fB\\-\\-quiet\\fR" in rendered[gen_docs.MAN]
    assert "Default: red." in rendered[gen_docs.MAN]


def test_nothing_in_the_repository_refers_to_a_file_outside_it() -> None:
    """A clone holds everything it names: no path into the workspace around it."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    outside = ("../" + "shared", "/work/" + "shared")
    found = [
        name.decode()
        for name in tracked
        if name and (ROOT / name.decode()).is_file()
        for text in [(ROOT / name.decode()).read_bytes().decode("utf-8", "replace")]
        if any(path in text for path in outside)
    ]
    assert found == []


def test_the_benchmarks_summary_tables_name_each_row_once() -> None:
    """docs/benchmarks.md's first three tables (the figures and the commands) are edited by
    every branch that adds a benchmark; a merge that kept both sides of a changed row once
    left five versions of the real-questions command."""
    text = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    tables = re.findall(r"(?:^\|.*\n)+", text, flags=re.M)[:3]
    assert [table.split("|")[1].strip() for table in tables] == ["target", "target", "command"]
    for table in tables:
        names = [
            row.split("|")[1].strip() for row in table.splitlines() if not set(row) <= set("|-: ")
        ]
        repeated = sorted({name for name in names if names.count(name) > 1})
        assert not repeated, repeated
