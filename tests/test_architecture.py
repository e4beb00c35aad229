"""The layering DESIGN.md promises, checked on the source and on real imports."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from importlib.util import find_spec
from pathlib import Path

import pytest

from tests.conftest import python_c, run_cli

PACKAGE = Path(__file__).resolve().parent.parent / "memctl"
SQL = re.compile(
    r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|"
    r"CREATE\s+(TABLE|INDEX|VIRTUAL|TRIGGER)|DROP\s+TABLE|PRAGMA)\b",
    re.I | re.S,
)


@cache
def parsed(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for every test here (each walks every module)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def modules(outside: str | None = None) -> list[Path]:
    return [
        p
        for p in PACKAGE.rglob("*.py")
        if outside is None or not p.relative_to(PACKAGE).as_posix().startswith(outside)
    ]


def every(paths: list[Path]) -> Callable[[Callable[[Path], None]], Callable[[], None]]:
    """``check`` as one test over ``paths``, failing with every module that breaks its rule
    (a test a module was ~1,850 tests, each paying pytest's own work for a few ms of it)."""

    def one_test(check: Callable[[Path], None]) -> Callable[[], None]:
        def test() -> None:
            broken = []
            for path in paths:
                try:
                    check(path)
                except AssertionError as error:
                    broken.append(f"{path.relative_to(PACKAGE).as_posix()}: {error}")
            assert not broken, "\n".join(broken)

        test.__name__, test.__doc__ = check.__name__, check.__doc__
        return test

    return one_test


def imported_names(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(
                node.module if node.module.startswith("memctl") else node.module.split(".")[0]
            )
    return names


@every(modules(outside="cli/"))
def test_only_the_cli_imports_typer_and_rich(path: Path) -> None:
    assert not imported_names(path) & {"typer", "rich"}, path


@every(modules(outside="store/"))
def test_only_the_store_speaks_sql(path: Path) -> None:
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            assert not SQL.search(node.value), f"{path}: {node.value[:60]!r}"
    assert "apsw" not in imported_names(path), path


@every(modules())
def test_nothing_below_the_cli_imports_it(path: Path) -> None:
    if path.relative_to(PACKAGE).parts[0] in ("cli", "__main__.py"):
        return
    cli = ("memctl.cli", "memctl.cli.")  # not memctl.clients
    assert not any(n == cli[0] or n.startswith(cli[1]) for n in imported_names(path)), path


HEAVY = ("numpy", "sqlite_vec", "ollama", "tokenizers", "safetensors", "git", "httpx")
# Forgetting everywhere (the store, its vector indexes, each backup, the sync clone): only
# a forget or a redact needs it, and a command reading sessions back loaded it (s24-walk).
FORGETTING = ("memctl.maintain.forgetting", "memctl.maintain.everywhere", "memctl.maintain.backup")


def loaded_after(code: str, watched: tuple[str, ...] = HEAVY) -> set[str]:
    """The ``watched`` modules loaded by ``code``, read from a last line the commands'
    output cannot fake."""
    probe = f"import sys\n{code}\nprint('\\nMODULES: ' + ' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    modules = done.stdout.rpartition("MODULES: ")[2]
    return set(modules.split()) & set(watched)


def test_importing_the_cli_loads_no_heavy_module() -> None:
    assert loaded_after("import memctl.cli.main") == set()


def test_commands_without_vectors_load_no_model_code_and_no_forgetting(home: Path) -> None:
    code = (
        "from memctl.cli.main import app\n"
        "for args in (['list'], ['status'], ['events'], ['config', 'show'], ['runs'],\n"
        "             ['sessions', 'list'], ['model', 'info'], ['doctor']):\n"
        "    app(args, standalone_mode=False)"
    )
    assert loaded_after(code, HEAVY + FORGETTING) == set()


def test_recall_loads_no_transcript_parser() -> None:
    """recall's output (the fast lane's and the resident process's children's) reads no
    transcript: the parsers and distillation rules (about 40 ms of a process) stay unloaded
    until --explain asks which sessions a memory came from."""
    probe = (
        "import sys, memctl.cli.fastlane, memctl.cli.recall_out\n"
        "print(sorted(m for m in sys.modules if m.startswith('memctl.ingest')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# What a recall's own process never needs: the transcript parsers (one per client format),
# the store's writer (a recall spools its touches), rich (its table and warning are made
# plain), shutil and the compression modules it loads (argparse sizes its help with it):
# together tens of ms of its CPU.
NOT_FOR_RECALL = ("memctl.ingest.parse", "memctl.store.writes", "rich", "shutil")


def test_a_recall_in_its_own_process_loads_no_parser_writer_or_rich(home: Path) -> None:
    """A whole `memctl recall` (no resident process) over a stored session, from a folder in
    no project (it warns that every project was searched), its session messages shown with
    their calls: none of NOT_FOR_RECALL loaded, and no client's wrapper compiled (no message
    opens with one)."""
    said = "user: the rollout moved to Friday\nassistant: [tool Bash: make ship]\n"
    stored = run_cli("ingest", "--mode", "raw", "--session-id", "s1", input=said)
    assert stored.returncode == 0, stored.stderr
    elsewhere = home.parent / "elsewhere"
    elsewhere.mkdir()
    probe = (
        "import sys\nsys.argv = ['memctl', 'recall', 'rollout Friday']\n"
        "from memctl.cli.entry import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "from memctl.memories.injected import INJECTIONS\n"
        "compiled = sum('_compiled' in vars(i.regex) for i in INJECTIONS)\n"
        "print('\\nCOMPILED', compiled, 'MODULES', *sorted(sys.modules))"
    )
    done = python_c(probe, env={"MEMCTL_EMBEDDER": "hash"}, cwd=elsewhere)
    assert done.returncode == 0 and "every project searched" in done.stderr, done.stderr
    assert "s1#1" in done.stdout and "rollout moved to Friday" in done.stdout, done.stdout
    compiled, _, *loaded = done.stdout.rpartition("\nCOMPILED ")[2].split()
    assert compiled == "0"
    assert [m for m in loaded if m.startswith(NOT_FOR_RECALL)] == []


def test_get_loads_no_model_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """`memctl get` reads where a memory came from (maintain's folds) without numpy."""
    monkeypatch.setenv("MEMCTL_EMBEDDER", "hash")
    made = run_cli("remember", "We deploy with make release from the main branch.")
    shown = ["get", made.stdout.strip()]
    code = f"from memctl.cli.main import app\napp({shown!r}, standalone_mode=False)"
    assert loaded_after(code) == set()


def test_the_hook_entry_loads_no_config_editor_and_no_capture() -> None:
    """Hooks ask the clients' registry; tomlkit (editing Codex's config) stays unloaded, and
    so does the capture (transcript parsers and distillation rules, about 30 ms of CPU),
    which the session-start and per-prompt hooks never run."""
    probe = (
        "import sys, memctl.integrations.hooks\n"
        "print(sorted(m for m in sys.modules if m == 'tomlkit' or m.startswith('memctl.ingest')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_torch_and_sentence_transformers_are_not_installed() -> None:
    assert find_spec("torch") is None
    assert find_spec("sentence_transformers") is None


def test_every_package_directory_has_an_init() -> None:
    """A directory without __init__.py is left out of the wheel by find_packages."""
    missing = [
        d.relative_to(PACKAGE).as_posix()
        for d in [PACKAGE, *PACKAGE.rglob("*")]
        if d.is_dir()
        and d.name != "__pycache__"
        and any(d.glob("*.py"))
        and not (d / "__init__.py").is_file()
    ]
    assert not missing


# The layer order, top to bottom. A module may import from its own layer or a lower one,
# never from a higher one; packages in one layer are peers and must not form a cycle.
LAYERS: list[tuple[str, ...]] = [
    ("cli", "ui", "__main__"),
    ("integrations",),
    ("clients",),
    ("api",),
    ("maintain",),
    ("ingest", "imports", "retrieve", "sync"),
    ("memories",),
    ("context",),
    ("store", "embed", "llm"),
    ("config", "model", "errors", "home", "lazy_re", "__init__"),
]
LAYER_OF = {name: depth for depth, names in enumerate(LAYERS) for name in names}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(("memctl", *parts))


def memctl_imports(path: Path) -> set[str]:
    """Every memctl module ``path`` imports, at the top or inside a function."""
    found: set[str] = set()
    own = module_name(path)
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("memctl")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            if not base.startswith("memctl"):
                continue
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                found.add(candidate if candidate in GRAPH_NODES else base)
    return found


GRAPH_NODES = {module_name(p) for p in modules()}


def top_package(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__"
    return parts[1]


def module_graph() -> dict[str, set[str]]:
    return {module_name(p): {m for m in memctl_imports(p) if m in GRAPH_NODES} for p in modules()}


def test_every_top_level_name_has_a_layer() -> None:
    names = {top_package(m) for m in GRAPH_NODES}
    assert names <= set(LAYER_OF), names - set(LAYER_OF)


def test_the_documented_layers_are_these_layers() -> None:
    """docs/architecture.md draws every top-level package, top to bottom in LAYERS' order."""
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    diagram = text.split("## Layers", 1)[1].split("```")[1]
    drawn = re.findall(r"^ memctl/(\w+)", diagram, flags=re.M)
    documented = [name for names in LAYERS for name in names if not name.startswith("__")]
    assert drawn == documented


@every(modules())
def test_imports_point_down_the_layers(path: Path) -> None:
    own = LAYER_OF[top_package(module_name(path))]
    upward = [
        m for m in memctl_imports(path) if m in GRAPH_NODES and LAYER_OF[top_package(m)] < own
    ]
    assert not upward, f"{path.relative_to(PACKAGE)} imports a higher layer: {upward}"


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle in ``graph`` as a list of nodes, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_module_import_cycle() -> None:
    graph = module_graph()
    # A package's __init__ may re-export its own modules; that is not a cycle of design.
    for name, targets in graph.items():
        if (PACKAGE / Path(*name.split(".")[1:]) / "__init__.py").exists():
            graph[name] = {t for t in targets if not t.startswith(name + ".")}
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_no_package_import_cycle() -> None:
    graph: dict[str, set[str]] = {}
    for source, targets in module_graph().items():
        graph.setdefault(top_package(source), set()).update(
            top_package(t) for t in targets if top_package(t) != top_package(source)
        )
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_find_cycle_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


# The store's functions that change a memory row, an edge or the event log. Only the write
# module (store/writes.py) calls them, so every change lands with its event and its undo
# payload; the store's other modules too (scopes.adopt moves a scope through the Writer).
STORE_WRITES = {
    "log_event",
    "log_events",
    "log_run_events",
    "insert_memory",
    "update_memory",
    "move_scope",
    "delete_memory_row",
    "put_vector",
    "record_access",
    "add_relation",
    "add_relations",
    "remove_relation",
    "remove_relations",
    "supersede_many",
    "set_strengths",
    "set_visibility",
    "set_withheld",
}
WRITE_MODULE = PACKAGE / "store" / "writes.py"
EVENTS_MODULE = PACKAGE / "store" / "events.py"


def store_writes_named(path: Path) -> set[str]:
    """The store write functions ``path`` imports from memctl.store or calls through a store
    module it imported (``store.update_memory``)."""
    tree = parsed(path)
    named: set[str] = set()
    modules_as: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("memctl.store"):
            named |= {alias.name for alias in node.names}
            modules_as |= {alias.asname or alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            modules_as |= {
                a.asname for a in node.names if a.name.startswith("memctl.store") and a.asname
            }
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules_as
        ):
            named.add(node.attr)
    return named & STORE_WRITES


def test_the_write_module_names_every_store_write() -> None:
    assert store_writes_named(WRITE_MODULE) == STORE_WRITES


@every(modules())
def test_only_the_write_module_writes_memories_and_events(path: Path) -> None:
    """Outside store/ and inside it: a store module uses only its own write functions."""
    if path == WRITE_MODULE:
        return
    assert not store_writes_named(path), f"{path}: write through store.writes.Writer"


def test_only_the_event_log_module_inserts_events() -> None:
    """The event log's SQL is in store/events.py alone, whose writes only the Writer calls."""
    inserting = {
        p.relative_to(PACKAGE).as_posix()
        for p in modules()
        if re.search(r"INSERT\s+(OR\s+\w+\s+)?INTO\s+events\b", p.read_text(encoding="utf-8"))
    }
    assert inserting == {EVENTS_MODULE.relative_to(PACKAGE).as_posix()}


# What the CLI may import: itself, the API, the layers above the API it drives (integrations:
# hooks, MCP, setup, doctor; clients: the assistants; ui: the viewer it starts), and the
# vocabulary every layer shares
# (errors, the data model, the version). Everything else it reaches through memctl/api/.
CLI_REACHES = ("memctl.cli", "memctl.api", "memctl.integrations", "memctl.clients", "memctl.ui")
CLI_SHARES = ("memctl", "memctl.errors", "memctl.model")


@every(sorted((PACKAGE / "cli").glob("*.py")))
def test_the_cli_does_not_import_past_the_api(path: Path) -> None:
    past = sorted(
        name
        for name in memctl_imports(path)
        if name not in CLI_SHARES
        and not name.startswith(tuple(f"{r}." for r in CLI_REACHES))
        and name not in CLI_REACHES
    )
    assert not past, f"{path.relative_to(PACKAGE)} imports past memctl/api/: {past}"


# The viewer is a door like the CLI, and narrower: it reaches the core through memctl/api/ only,
# its health page runs the CLI's `doctor` checks, and its session forget ends the home's
# resident process as the CLI's does (`integrations.purge.stop_resident_after`).
UI_REACHES = ("memctl.ui", "memctl.api", "memctl.integrations.doctor", "memctl.integrations.purge")


@every(sorted((PACKAGE / "ui").glob("*.py")))
def test_the_viewer_imports_only_the_api(path: Path) -> None:
    past = sorted(
        name
        for name in memctl_imports(path)
        if name not in CLI_SHARES
        and name not in UI_REACHES
        and not name.startswith(tuple(f"{r}." for r in UI_REACHES))
    )
    assert not past, f"{path.relative_to(PACKAGE)} imports past memctl/api/: {past}"


FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]+")
COMMAND = re.compile(r"`memctl [^`]*`")  # a whole command to run, quoted, may hold its flags


@every(modules(outside="cli/"))
def test_errors_below_the_cli_name_no_command_line_flag(path: Path) -> None:
    """An error raised below the CLI is in the API's words (``budget``); the CLI shows its
    own spelling (``--budget``), MCP the tool's argument name."""
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Raise) and node.exc is not None:
            for part in ast.walk(node.exc):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    text = COMMAND.sub("", part.value)
                    assert not FLAG.search(text), f"{path}:{node.lineno}: {part.value!r}"


@every(modules(outside="config/"))
def test_only_the_config_package_builds_settings(path: Path) -> None:
    """Every door (Typer, the fast lane, hooks, the MCP server, the worker) gets its
    settings from ``config.settings_from_flags``: one reading of --home and -c."""
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            assert name != "load_settings", f"{path}:{node.lineno}"
