"""What rich prints for a results table, a line and a warning, made without importing rich.

Importing rich and drawing a recall's table took ~25 ms of the ~240 ms a `memctl
recall` process costs. For text rich measures one cell a character, on a console it
would not colour otherwise than the header's bold, this module gives the same bytes:
rich's table (``memctl.cli.render.with_memory_column``: a heavy-headed box, every
column unwrapped but the last, which folds at words) and a line that fits. Anything
else (another script's text, a table wider than the console, a console rich would
size or draw otherwise: Windows, Jupyter, a non-UTF-8 stream) returns None, and the
caller prints through rich. tests/cli/test_plain.py compares both over many tables.
"""

from __future__ import annotations

import builtins
import os
import re
import sys
from collections.abc import Sequence

# rich's single-cell characters (rich.cells._SINGLE_CELL_UNICODE_RANGES) that are not
# whitespace to Python's re (U+00A0 is), and the ellipsis memctl cuts text with
_SINGLE_CELLS = ((0x20, 0x7E), (0xA1, 0xAC), (0xAE, 0x2FF), (0x370, 0x482), (0x2500, 0x25FC))
_SAFE = frozenset([chr(c) for start, end in _SINGLE_CELLS for c in range(start, end + 1)] + ["…"])
_WORD = re.compile(r" *[^ ]+ *")  # rich's word (\s*\S+\s*) in text whose only space is " "
_DUMB_TERMINALS = ("dumb", "unknown")  # rich: such a terminal is 80 wide and never coloured
BOLD, YELLOW, RESET = "\x1b[1m", "\x1b[33m", "\x1b[0m"
# The table's box (rich.box.HEAVY_HEAD): top, header row, under the header, rows, bottom.
TOP, HEAD, UNDER = ("┏", "━", "┳", "┓"), ("┃", " ", "┃", "┃"), ("┡", "━", "╇", "┩")
ROW, BOTTOM = ("│", " ", "│", "│"), ("└", "─", "┴", "┘")
Box = tuple[str, str, str, str]  # left, fill, between, right
MIN_WIDTH = 20  # a console narrower than this goes to rich
# The rich release whose bytes this module makes (major.minor): pyproject pins rich to it
RICH_DRAWN = "15.0"


def console(stderr: bool = False) -> tuple[int, bool] | None:
    """(width, styled) of rich's console on stdout (or ``stderr``) as rich would make it
    now (styled: a terminal rich colours); None when rich might decide otherwise than this
    module knows to (``rich.console.Console``)."""
    stream = sys.stderr if stderr else sys.stdout
    idle = getattr(sys.stdin, "__module__", "").startswith("idlelib")  # rich: no terminal
    if sys.platform == "win32" or stream is None or idle or hasattr(builtins, "get_ipython"):
        return None
    if not (getattr(stream, "encoding", None) or "utf-8").lower().startswith("utf"):
        return None  # rich draws an ASCII box
    environ = os.environ
    terminal = _is_terminal(stream, environ)
    dumb = terminal and environ.get("TERM", "").lower() in _DUMB_TERMINALS
    width = _width(environ, dumb)
    return (width, terminal and not dumb) if width >= MIN_WIDTH else None


def _is_terminal(stream: object, environ: os._Environ[str]) -> bool:
    compatible = environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = environ.get("FORCE_COLOR")
    if force is not None:
        return force != ""
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False


def _width(environ: os._Environ[str], dumb: bool) -> int:
    columns, lines = environ.get("COLUMNS"), environ.get("LINES")
    fixed = int(columns) if columns is not None and columns.isdigit() else None
    if fixed is not None and lines is not None and lines.isdigit():
        return fixed
    if dumb:
        return 80
    if fixed is not None:
        return fixed
    for fd in (0, 1, 2):
        try:
            return os.get_terminal_size(fd).columns or 80
        except (AttributeError, ValueError, OSError):
            continue
    return 80


def plain(texts: Sequence[str]) -> bool:
    """Whether rich measures each character of ``texts`` one cell and breaks only at spaces."""
    return all(_SAFE.issuperset(text) for text in texts)


def line(text: str, width: int) -> str | None:
    """A line as ``Console.print`` prints it, when it fits."""
    return text + "\n" if len(text) <= width and plain([text]) else None


def warning(text: str) -> str | None:
    """A line as rich's console on stderr prints it in yellow without wrapping it (a
    warning: ``memctl.cli.render.warn``), when rich would print it so; NO_COLOR leaves it
    uncoloured, as rich does."""
    shape = console(stderr=True)
    if shape is None or not plain([text]):
        return None
    coloured = shape[1] and not os.environ.get("NO_COLOR")
    return f"{YELLOW}{text}{RESET}\n" if coloured else text + "\n"


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    texts: Sequence[str],
    text_min: int,
    width: int,
    styled: bool,
) -> str | None:
    """rich's table of ``headers`` (the last one the text column's) over ``rows`` (each
    without its text) and ``texts``, the text column at least ``text_min`` wide."""
    if not plain([*headers, *texts, *(cell for row in rows for cell in row)]):
        return None
    columns = [[header, *(row[i] for row in rows)] for i, header in enumerate(headers[:-1])]
    widths = [max(map(len, column)) + 2 for column in columns]
    room = width - len(headers) - 1 - sum(widths)  # borders: one a column, and one more
    longest = max((len(text) for text in [headers[-1], *texts]), default=0)
    text_width = max(min(longest + 2, room), text_min + 2)
    if text_width > room:
        return None  # rich would shrink every column, or crop the lines
    widths.append(text_width)
    out = [_rule(TOP, widths), _row(HEAD, widths, [[h] for h in headers], styled)]
    out.append(_rule(UNDER, widths))
    for row, text in zip(rows, texts, strict=True):
        out.append(_row(ROW, widths, [[cell] for cell in row] + [wrap(text, text_width - 2)]))
    out.append(_rule(BOTTOM, widths))
    return "".join(out)


def _rule(box: Box, widths: list[int]) -> str:
    left, fill, between, right = box
    return left + between.join(fill * w for w in widths) + right + "\n"


def _row(box: Box, widths: list[int], cells: list[list[str]], bold: bool = False) -> str:
    left, _, between, right = box
    height = max(len(cell) for cell in cells)
    lines = []
    for n in range(height):
        parts = []
        for cell, w in zip(cells, widths, strict=True):
            text = cell[n].ljust(w - 2) if n < len(cell) else " " * (w - 2)
            pad = f"{BOLD} {RESET}"  # rich styles each padding apart from the text
            parts.append(f"{pad}{BOLD}{text}{RESET}{pad}" if bold else f" {text} ")
        lines.append(left + between.join(parts) + right + "\n")
    return "".join(lines)


def wrap(text: str, width: int) -> list[str]:
    """``text`` folded at words into lines of at most ``width`` characters, as rich's
    ``Text.wrap`` folds it (``rich._wrap.divide_line``, then each line's spaces past
    ``width`` dropped); a word longer than a line is cut."""
    breaks, offset = [], 0
    for found in _WORD.finditer(text):
        start, word = found.start(), found.group()
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width:
            pieces = [word[i : i + width] for i in range(0, len(word), width)]
            for piece in pieces[:-1]:
                if start:
                    breaks.append(start)
                start += len(piece)
            if start:
                breaks.append(start)
            offset = len(pieces[-1])
        elif offset and start:
            breaks.append(start)
            offset = len(word)
    lines = [text[a:b] for a, b in zip([0, *breaks], [*breaks, len(text)], strict=True)]
    return [_rstrip_end(each, width)[:width] for each in lines]


def _rstrip_end(text: str, width: int) -> str:
    excess = len(text) - width
    if excess <= 0:
        return text
    spaces = len(text) - len(text.rstrip(" "))
    return text[: len(text) - min(spaces, excess)]
