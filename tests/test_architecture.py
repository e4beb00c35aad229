"""The layering DESIGN.md promises, checked on the source and on real imports."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "memctl"
SQL = re.compile(
    r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|"
    r"CREATE\s+(TABLE|INDEX|VIRTUAL|TRIGGER)|DROP\s+TABLE|PRAGMA)\b",
    re.I | re.S,
)


def modules(outside: str | None = None) -> list[Path]:
    return [
        p
        for p in PACKAGE.rglob("*.py")
        if outside is None or not p.relative_to(PACKAGE).as_posix().startswith(outside)
    ]


def imported_names(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(
                node.module if node.module.startswith("memctl") else node.module.split(".")[0]
            )
    return names


@pytest.mark.parametrize("path", modules(outside="cli/"), ids=lambda p: p.name)
def test_only_the_cli_imports_typer_and_rich(path: Path) -> None:
    assert not imported_names(path) & {"typer", "rich"}, path


@pytest.mark.parametrize("path", modules(outside="store/"), ids=lambda p: p.name)
def test_only_the_store_speaks_sql(path: Path) -> None:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            assert not SQL.search(node.value), f"{path}: {node.value[:60]!r}"
    assert "apsw" not in imported_names(path), path


@pytest.mark.parametrize("path", modules(), ids=lambda p: p.name)
def test_nothing_below_the_cli_imports_it(path: Path) -> None:
    if path.relative_to(PACKAGE).parts[0] in ("cli", "__main__.py"):
        return
    assert not any(name.startswith("memctl.cli") for name in imported_names(path)), path


HEAVY = ("numpy", "sqlite_vec", "ollama", "tokenizers", "safetensors", "git", "httpx")


def loaded_after(code: str) -> set[str]:
    """Heavy modules loaded by ``code``, read from a last line the commands' output cannot fake."""
    probe = f"import sys\n{code}\nprint('\\nMODULES: ' + ' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    modules = done.stdout.rpartition("MODULES: ")[2]
    return set(modules.split()) & set(HEAVY)


def test_importing_the_cli_loads_no_heavy_module() -> None:
    assert loaded_after("import memctl.cli.main") == set()


def test_commands_without_vectors_load_no_model_code(home: Path) -> None:
    code = (
        "from memctl.cli.main import app\n"
        "for args in (['list'], ['status'], ['events'], ['config', 'show']):\n"
        "    app(args, standalone_mode=False)"
    )
    assert loaded_after(code) == set()


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
