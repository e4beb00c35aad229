"""memctl doctor: is this machine set up? One line a check, with its fix."""

from __future__ import annotations

from dataclasses import asdict

import typer

from memctl.cli.common import JsonOption, new_typer, open_context
from memctl.cli.render import console, print_json
from memctl.errors import MemctlError
from memctl.integrations.doctor import FAIL, OK, Check
from memctl.integrations.doctor import doctor as run_checks

app = new_typer()


@app.command()
def doctor(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Check this machine: model, store, hooks and capture, the resident process, LLM, sync
    remote, file modes; each with a fix."""
    from memctl.api.sessions import last_captured

    context = open_context(ctx)
    stored = context.settings.db_path.exists()  # doctor reads: a missing store stays missing
    try:
        captured = last_captured(context) if stored else {}
    except MemctlError:  # a store that cannot be read (a full disk): its check says so
        captured = {}
    checks = run_checks(context, captured)
    if as_json:
        print_json([asdict(check) for check in checks])
    else:  # a long check folds at words under its own column: a grep still finds its line
        from rich.table import Table

        grid = Table.grid(padding=(0, 2))
        grid.add_column(no_wrap=True)
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        for check in checks:
            style = "red" if check.status == FAIL else None
            grid.add_row(check.status, check.name, _detail(check), style=style)
        console.print(grid)
    failed = [check.name for check in checks if check.status == FAIL]
    if failed:
        raise MemctlError(f"{len(failed)} of {len(checks)} checks failed: {', '.join(failed)}")


def _detail(check: Check) -> str:
    fix = f" (fix: {check.fix})" if check.fix and check.status != OK else ""
    return check.detail + fix
