"""How long `memctl import` takes, and how much memory, on files of realistic sizes.

    .venv/bin/python benchmarks/import_speed.py

Whole processes (Python start-up included), no LLM (rule-based extraction),
the local MiniLM embedder, each into a fresh data directory unless said:

- a 5 MB Markdown file (atomic, smart-split into 80,000-character chunks),
  with the process's peak memory;
- a directory of 200 notes of 1-7 KB (documents and sections);
- the same directory again (every file unchanged: the re-import no-op);
- a ChatGPT export of 500 conversations of 6 messages, with peak memory;
- 50 MB of plain text where every line states a fact (the worst case for atomic
  import: extraction stops at ``import.max_facts`` / ``import.extract_chars``),
  with peak memory. ``--quick`` runs only this one.

Prints the figures; asserts nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ingest_speed import ENV, PEAK_PROBE  # noqa: E402  (a script beside this one)

from benchmarks.documents import chatgpt_export, markdown_notes, note, plain_text  # noqa: E402  (path above)


def memctl_import(home: Path, *paths: Path) -> tuple[float, int, dict[str, object]]:
    """(seconds, peak RSS in MiB, the JSON report) of one `memctl import` process."""
    began = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            PEAK_PROBE,
            "--home",
            str(home),
            "import",
            "--json",
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
        env=ENV,
        check=True,
    )
    elapsed = time.perf_counter() - began
    return elapsed, int(done.stderr.rpartition("PEAK ")[2].split()[0]), json.loads(done.stdout)


def show(what: str, result: tuple[float, int, dict[str, object]]) -> None:
    elapsed, peak, report = result
    print(
        f"{what}: {elapsed:.1f} s, peak RSS {peak} MiB; {report['imported']} memories imported, "
        f"{report['merged']} merged, {report['skipped']} skipped"
    )


def plain(work: Path) -> None:
    text = work / "plain.txt"
    lines = plain_text(text, 50 * 1024 * 1024)
    size = text.stat().st_size / 1e6
    show(
        f"{size:.0f} MB plain text ({lines:,} lines, each a fact)", memctl_import(work / "h4", text)
    )


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="memctl-import-bench-"))
    if "--quick" in sys.argv:
        plain(work)
        return
    big = work / "notes.md"
    facts = markdown_notes(big, 5 * 1024 * 1024)
    show(f"5 MB Markdown ({facts} facts in it)", memctl_import(work / "h1", big))

    notes = work / "notes"
    notes.mkdir()
    for n in range(200):
        (notes / f"note{n:03}.md").write_text(note(n), encoding="utf-8")
    show("200 notes", memctl_import(work / "h2", notes))
    show("the same 200 notes again", memctl_import(work / "h2", notes))

    export = work / "conversations.json"
    chatgpt_export(export, 500)
    size = export.stat().st_size / 1e6
    show(f"ChatGPT export, 500 conversations ({size:.1f} MB)", memctl_import(work / "h3", export))
    plain(work)


if __name__ == "__main__":
    main()
