"""tests/conftest.py marks what `make test-fast` leaves out: a test that starts processes
or loads the real model is slow, itself or through a helper or fixture of the tests."""

from __future__ import annotations

import pytest

from tests.conftest import _starts_processes, run_cli


def _helper() -> None:
    run_cli("--version")


def _through_a_helper() -> None:
    _helper()


def _in_a_nested_function() -> None:
    def inner() -> None:
        run_cli("--version")

    inner()


class _Process:
    def __init__(self) -> None:
        run_cli("--version")


def _through_a_class() -> None:
    _Process()


def _in_process() -> None:
    sorted([3, 1, 2])


@pytest.mark.parametrize(
    ("function", "slow"),
    [
        (_helper, True),
        (_through_a_helper, True),
        (_in_a_nested_function, True),
        (_through_a_class, True),  # a helper object that starts a process (a server, a wire)
        (_in_process, False),
    ],
)
def test_what_starts_a_process_is_found(function: object, slow: bool) -> None:
    code = function.__code__  # type: ignore[attr-defined]
    assert _starts_processes(code, function.__globals__, set()) is slow  # type: ignore[attr-defined]


def test_this_module_is_fast_and_a_cli_test_is_slow(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("slow") is None
    items = {item.name: item for item in request.session.items}
    cli = items.get("test_version_help_and_unknown_commands_as_processes")
    assert cli is None or cli.get_closest_marker("slow") is not None
