"""Rendering for people (rich) and for scripts (JSON with stable field names).

rich is imported when a console or a table is first needed, not with this
module: ``recall --format context|json|ids`` (a session-start hook) never
loads it (about 25 ms), and a recall's tables print without it whenever
``memctl.cli.plain`` can make rich's very bytes (``print_blocks``).
"""

from __future__ import annotations

import json
import re
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from memctl.cli import plain
from memctl.model import Memory, counted, counted_to, parse_time

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID
    from rich.table import Table

    console: Console
    err_console: Console


_CONSOLES: dict[bool, Console] = {}  # by stderr: made on first use


def _console(stderr: bool) -> Console:
    if stderr not in _CONSOLES:
        from rich.console import Console

        # emoji off: text is shown as stored (":rocket:" stays itself), and rich does not
        # load its emoji table (7 ms of every process that prints)
        _CONSOLES[stderr] = Console(stderr=stderr, highlight=False, markup=False, emoji=False)
    return _CONSOLES[stderr]


def __getattr__(name: str) -> Console:
    """``console`` (stdout) and ``err_console`` (stderr), made on first use."""
    if name in ("console", "err_console"):
        return _console(name == "err_console")
    raise AttributeError(name)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def say(line: str) -> None:
    """One line as it is, the terminal folding it: rich broke a path, or a command to copy,
    at its width, even into a pipe (a walk got "export" and "PATH=..." on two lines)."""
    _console(False).print(line, soft_wrap=True)


def warn(message: str) -> None:
    """A warning line on stderr, scrubbed as an error line is (``memctl.cli.entry``): it may
    quote a value read or typed, and stderr reaches logs, cron's ``maintain.log`` among them."""
    from memctl.api.config import scrubbed

    line = scrubbed(f"memctl: warning: {message}")
    made = None if True in _CONSOLES else plain.warning(line)  # rich's, once it is made
    if made is not None:
        sys.stderr.write(made)  # rich's bytes without importing rich (~25 ms of a process)
        return
    _console(True).print(line, style="yellow", soft_wrap=True)


def age(iso: str | None, now: datetime | None = None) -> str:
    """A short relative age: ``now``, ``5min``, ``3h``, ``2d``, ``7w``, ``4mo``, ``2y`` (minutes
    are ``min``: a table's ``2m`` beside ``9mo`` read as months)."""
    if not iso:
        return "-"
    seconds = max(0.0, ((now or datetime.now(UTC)) - parse_time(iso)).total_seconds())
    for unit, size in (
        ("y", 365 * 86400),
        ("mo", 30 * 86400),
        ("w", 7 * 86400),
        ("d", 86400),
        ("h", 3600),
        ("min", 60),
    ):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return "now"


# Digits of an id a table shows (every command takes a unique prefix; --json has the whole id).
ID_WIDTH = 8
# ... and of a session's id: Codex's (UUIDv7) open with their start time, so two sessions
# begun within a minute share their first 8 digits ("01a227b0-2f48-…", "01a227b0-1cea-…")
SESSION_ID_WIDTH = 12
# The narrowest a table's text column is squeezed to before the others give way.
TEXT_MIN_WIDTH = 20


def short_id(full: str) -> str:
    """An id as a table shows it: its first 8 digits; a session message its session's
    first 12 and its ``#N``."""
    session, separator, number = full.rpartition("#")
    return f"{session[:SESSION_ID_WIDTH]}#{number}" if separator else full[:ID_WIDTH]


def shown_of(shown: int, total: int, at_most: int, one: str, many: str | None = None) -> str:
    """A listing's last line: "3 memories", or "20 of 1,234 memories (-n shows more)" when
    its limit cut it (``total`` as counted, up to ``at_most``: "20 of 10,000+ ...")."""
    if shown >= total:
        return counted(shown, one, many)
    return f"{shown:,} of {counted_to(total, at_most, one, many)} (-n shows more)"


def one_line(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


# Where a folded line's next lines start: under the text past its indent and its list mark
# ("- ", "+ ", "[3] ", ">[3] ", "match:    "); at most this far, so some text stays.
HANG = re.compile(r"^\s*(?:[-+>]?\[\d+\] |[-+] |[\w ]{1,10}: +)?")
HANG_MAX = 24


def fit(text: str, width: int | None = None) -> str:
    """``text`` with each line longer than ``width`` display cells (the terminal's; a CJK
    character takes two) folded at words, its next lines indented under its text."""
    from rich.text import Text

    room = width or _console(False).width
    folded: list[str] = []
    for line in text.expandtabs().splitlines():  # rich expands tabs too: the cut stays true
        mark = HANG.match(line)
        hang = min(mark.end() if mark else 0, HANG_MAX, room // 2)
        first, *_ = Text(line).wrap(_console(False), room) or [Text("")]
        folded.append(first.plain.rstrip())
        rest = line[len(first.plain) :].strip()
        if rest:
            for part in Text(rest).wrap(_console(False), room - hang):
                folded.append(" " * hang + part.plain.rstrip())
    return "\n".join(folded)


def middle(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, cut in the middle (a path keeps its name)."""
    if len(text) <= width:
        return text
    head = max(1, (width - 1) // 2)
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]


def unbroken(
    texts: list[str], others: list[list[str]], width: int | None = None
) -> tuple[list[str], int]:
    """The texts of a table's last column, each word longer than the room the other columns
    (each its header and cells) leave on a console ``width`` wide (the console's) cut in the
    middle, and the column's width: one that breaks none of their words. A rich table with
    borders takes 3 characters a column + 1."""
    used = sum(max(map(len, column)) + 3 for column in others) + 1
    room = max(TEXT_MIN_WIDTH, (width or _console(False).width) - used - 3)
    cut = [" ".join(middle(word, room) for word in text.split(" ")) for text in texts]
    longest = max((len(word) for text in cut for word in text.split()), default=0)
    return cut, max(TEXT_MIN_WIDTH, longest)


def memory_table(
    memories: list[Memory], title: str | None = None, times: dict[str, str] | None = None
) -> Table:
    """Memories as a table; ``times`` (by id) dates a memory by its source, not its creation."""
    from rich.table import Table

    times = times or {}
    table = Table(title=title, show_lines=False, header_style="bold")
    headers = ("id", "age", "category", "kind", "state")
    rows = [
        [
            short_id(memory.id),
            age(times.get(memory.id, memory.created_at)),
            str(memory.category),
            str(memory.kind),
            str(memory.state),
        ]
        for memory in memories
    ]
    return with_memory_column(table, headers, rows, [one_line(m.summary) for m in memories])


def with_memory_column(
    table: Table, headers: tuple[str, ...], rows: list[list[str]], summaries: list[str]
) -> Table:
    """``table`` with ``headers`` and ``rows``, and a last "memory" column of ``summaries``
    as wide as the rest leaves room for, breaking no word (``unbroken``)."""
    columns = [[header, *(row[i] for row in rows)] for i, header in enumerate(headers)]
    texts, width = unbroken(summaries, columns)
    for column in headers:
        table.add_column(column, no_wrap=True)
    table.add_column("memory", overflow="fold", min_width=width, ratio=1)
    for row, text in zip(rows, texts, strict=True):
        table.add_row(*row, text)
    return table


# A table ``with_memory_column`` draws: its headers but the text column's, its rows, its texts.
MemoryTable = tuple[tuple[str, ...], list[list[str]], list[str]]


def print_blocks(blocks: list[str | MemoryTable]) -> None:
    """Lines and memory tables on stdout as rich prints them (a table: header "bold"): made
    by ``memctl.cli.plain`` when it can make each (rich's console not made yet: it keeps
    what it read at its start), else printed by rich."""
    shape = None if False in _CONSOLES else plain.console()
    if shape is not None:
        width, styled = shape
        made = [
            plain.line(block, width)
            if isinstance(block, str)
            else _plain_table(*block, width=width, styled=styled)
            for block in blocks
        ]
        if all(part is not None for part in made):
            sys.stdout.write("".join(part for part in made if part is not None))
            return
    from rich.table import Table

    for block in blocks:
        if isinstance(block, str):
            _console(False).print(block)
        else:
            _console(False).print(with_memory_column(Table(header_style="bold"), *block))


def _plain_table(
    headers: tuple[str, ...], rows: list[list[str]], summaries: list[str], width: int, styled: bool
) -> str | None:
    columns = [[header, *(row[i] for row in rows)] for i, header in enumerate(headers)]
    texts, text_min = unbroken(summaries, columns, width)
    return plain.table((*headers, "memory"), rows, texts, text_min, width, styled)


def counts_table(title: str, counts: dict[str, int]) -> Table:
    from rich.table import Table

    table = Table(title=title, header_style="bold", title_justify="left")
    table.add_column(title.split()[-1])
    table.add_column("count", justify="right")
    for name, count in counts.items():
        table.add_row(name, str(count))
    return table


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def item_progress(disable: bool) -> Progress:
    """A transient bar for work counted in items: done / total, items a second, and the
    time left from that rate (rich estimates it from the last 30 s of updates)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        Task,
        TaskProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class Count(MofNCompleteColumn):
        """done/total, in KiB/MiB for work counted in bytes (``update_items`` unit)."""

        def render(self, task: Task) -> Text:
            if task.fields.get("unit") != "bytes" or task.total is None:
                return super().render(task)
            done, total = human_size(int(task.completed)), human_size(int(task.total))
            return Text(f"{done}/{total}", style="progress.download")

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        Count(),
        TaskProgressColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeRemainingColumn(),
        console=_console(False),
        transient=True,
        disable=disable,
    )


def update_items(bar: Progress, task: TaskID, done: int, total: int, unit: str) -> None:
    """Move an ``item_progress`` bar to ``done`` of ``total`` and show the rate."""
    bar.update(task, completed=done, total=total, unit=unit)
    speed = next((t.speed for t in bar.tasks if t.id == task), None)
    if unit == "bytes":
        bar.update(task, rate=f"{human_size(int(speed))}/s" if speed else "")
    else:
        bar.update(task, rate=f"{speed:.1f} {unit}/s" if speed else "")
