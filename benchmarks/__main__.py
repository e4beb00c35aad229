"""``python -m benchmarks``: recall quality (LoCoMo, LongMemEval) and speed, with baselines.

The same global options as ``memctl`` (``--home``, ``-c KEY=VALUE``) and the same
one-line errors; the harness lives outside the installed package.
"""

from __future__ import annotations

from benchmarks.cli import app
from memctl.cli.entry import main
from memctl.cli.main import root

app.callback(help="memctl's benchmarks: recall quality and speed, next to baselines.")(root)


def run() -> int:
    app(prog_name="python -m benchmarks")
    return 0


if __name__ == "__main__":
    main(run, prog="python -m benchmarks")
