"""tests/bytecode.py: the test modules rewritten ahead of the workers are the ones pytest
would have written itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import bytecode


def test_a_module_rewritten_ahead_loads_as_pytest_s_own_with_its_asserts_explained(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from _pytest.assertion.rewrite import _read_pyc

    module = tmp_path / "test_sample.py"
    module.write_text("def test_sum():\n    total = 1 + 1\n    assert total == 3\n")
    assert bytecode.stale([module]) == [module]
    bytecode.rewriting([module], request.config)
    assert bytecode.stale([module]) == []
    code = _read_pyc(module, bytecode.rewritten(module))
    assert code is not None  # pytest takes it as current, so a worker loads it as it is
    namespace: dict[str, object] = {}
    exec(code, namespace)
    with pytest.raises(AssertionError, match="assert 2 == 3"):  # rewritten: the values shown
        namespace["test_sum"]()  # type: ignore[operator]


def test_the_run_s_modules_are_those_under_its_paths(request: pytest.FixtureRequest) -> None:
    modules = bytecode.test_modules(request.config)
    assert Path(__file__) in modules
    assert all(path.name.startswith("test_") for path in modules)
