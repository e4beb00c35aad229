"""What the scripts that make one generated file share (``gen_schema.py``,
``gen_mcp_answers.py``): run plain, they write the file when what they make differs from
it; with ``--check`` they write nothing and exit 1 when it is stale, for a test or CI."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def write_or_check(path: Path, make: Callable[[], str], doc: str, script: str) -> int:
    """The main of a script that writes ``path`` with ``make()``; ``doc`` (its docstring)
    gives ``--help`` its first line, ``script`` its name in the stale message."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    check = parser.parse_args().check
    text = make()
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return 0
    if check:
        print(f"{path} is stale: run python {script}")
        return 1
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")
    return 0
