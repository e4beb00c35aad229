"""Bytecode written once, before the workers start (``tests/conftest.py``'s
``pytest_sessionstart`` in pytest-xdist's controller).

In a fresh clone nothing is compiled (``scripts/setup`` installs with ``--no-compile``), so
the three workers, started at once and collecting the same modules in the same order, each
rewrote the asserts of every test module and compiled every module memctl and the tests
import, themselves: three times the work. Here two forks of the controller do it once
before any worker starts, meeting in the middle: one imports the run's test modules in
order (pytest's import hook rewrites each and writes its bytecode, as a worker would; what
they import is compiled and written too), the other rewrites them from the last, without
running them, after what pytest rewrote in the controller itself (conftest.py, the plugins'
packages). The workers find the bytecode. A clone whose bytecode is current only stats
each module's bytecode file: nothing is forked.

pytest keeps no public way to rewrite a module without importing it: the names below are
its own (``_pytest.assertion.rewrite``); with a pytest that lacks them nothing is written
here, and the workers compile for themselves, as before.
"""

from __future__ import annotations

import importlib
import os
import py_compile
import sys
from importlib.machinery import SourceFileLoader
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def write_for_workers(session: pytest.Session) -> None:
    """Rewrite and compile the run's test modules that have no current bytecode, and
    compile what this process loaded without writing it, in two forks of this process (the
    controller, whose workers have not started; the suite is sized for two cores)."""
    try:
        from _pytest.assertion.rewrite import _rewrite_test, _write_pyc  # noqa: F401
    except ImportError:
        return
    paths = stale(test_modules(session.config))
    loaded = uncompiled()
    plugins = stale(rewritten_here())
    if not paths and not loaded and not plugins:
        return
    children = [
        fork(importing, paths, loaded),
        fork(rewriting, plugins + paths[::-1], session.config),
    ]
    for pid in children:
        os.waitpid(pid, 0)


def test_modules(config: pytest.Config) -> list[Path]:
    """The test modules under the run's paths (its arguments, or ``testpaths``), each in a
    package, so imported by its dotted name."""
    found: set[Path] = set()
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        if path.is_dir():
            found.update(path.rglob("test_*.py"))
        elif path.suffix == ".py":
            found.add(path)
    return sorted(p for p in found if p.is_relative_to(ROOT) and packaged(p))


def packaged(path: Path) -> bool:
    folders = path.relative_to(ROOT).parents
    return all((ROOT / folder / "__init__.py").exists() for folder in folders if folder.parts)


def rewritten(path: Path) -> Path:
    """Where pytest keeps ``path``'s rewritten bytecode."""
    from _pytest.assertion.rewrite import PYC_TAIL, get_cache_dir

    return get_cache_dir(path) / (path.name[:-3] + PYC_TAIL)


def current(path: Path) -> bool:
    """Whether ``path`` has rewritten bytecode written since it last changed (the worker
    that loads it still checks the source's hash)."""
    try:
        return rewritten(path).stat().st_mtime >= path.stat().st_mtime
    except OSError:
        return False


def stale(paths: list[Path]) -> list[Path]:
    return [path for path in paths if not current(path)]


def uncompiled() -> list[tuple[str, str]]:
    """(source, bytecode file) of each module this process loaded from source before
    conftest let bytecode be written (pytest, xdist, conftest's imports: under
    PYTHONDONTWRITEBYTECODE the controller writes none; its workers, started without it,
    each compiled them at once in a fresh clone)."""
    found = []
    for module in list(sys.modules.values()):
        spec = getattr(module, "__spec__", None)
        if not isinstance(getattr(spec, "loader", None), SourceFileLoader):
            continue  # built in, an extension, or a test module (pytest's loader has its own)
        if spec.origin and spec.cached and not os.path.exists(spec.cached):
            found.append((spec.origin, spec.cached))
    return found


def rewritten_here() -> list[Path]:
    """The modules this process loaded through pytest's rewriting hook other than test
    modules: conftest.py and the plugins' packages pytest rewrites (hypothesis, all of it),
    written by no one before the workers start."""
    from _pytest.assertion.rewrite import AssertionRewritingHook

    found = []
    for module in list(sys.modules.values()):
        spec = getattr(module, "__spec__", None)
        if isinstance(getattr(spec, "loader", None), AssertionRewritingHook) and spec.origin:
            if not Path(spec.origin).name.startswith("test_"):
                found.append(Path(spec.origin))
    return found


def fork(work: object, *args: object) -> int:
    """A silent fork of this process that does ``work(*args)`` and exits."""
    pid = os.fork()
    if pid:
        return pid
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        work(*args)  # type: ignore[operator]
    finally:
        os._exit(0)


def importing(paths: list[Path], loaded: list[tuple[str, str]]) -> None:
    """Import ``paths`` in order, then compile ``loaded``."""
    for path in paths:
        try:
            importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
        except (Exception, pytest.skip.Exception):  # again in its worker, which reports it
            continue
    for source, cached in loaded:
        py_compile.compile(source, cfile=cached, doraise=False, quiet=2)


def rewriting(paths: list[Path], config: pytest.Config) -> None:
    """Rewrite and write the bytecode of ``paths``, up to the first the importing fork has
    written (``paths``: the plugins', then the test modules from the last)."""
    from _pytest.assertion.rewrite import _rewrite_test, _write_pyc, assertstate_key

    state = config.stash[assertstate_key]
    for path in paths:
        if current(path):
            return  # the importing fork got here first: the rest is done
        source_hash, code = _rewrite_test(path, config)
        rewritten(path).parent.mkdir(parents=True, exist_ok=True)
        _write_pyc(state, code, source_hash, rewritten(path))
