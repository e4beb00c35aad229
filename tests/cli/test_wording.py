"""What a person reads: counts in the singular for one, and usage lines that name each
argument as the man page does. In-process: no command is run."""

from __future__ import annotations

import re
from collections.abc import Iterator

import typer

from memctl.cli.main import build_app
from memctl.cli.sessions import copies_line, forgotten_line
from memctl.maintain.everywhere import Forgotten


def test_one_of_each_is_said_in_the_singular() -> None:
    done = Forgotten("0514dfee", messages=1, memories=["m1"], quotes={"events": 1})
    done.backups, done.kept = ["b1"], {"m2": "s2"}
    line = forgotten_line(done)
    assert line.startswith("forgot 0514dfee: 1 message, 1 memory, 1 quote, 1 backup rewritten")
    assert "; kept 1 memory another session also states" in line
    done.copies = {"resumed": 2}
    assert copies_line(done).startswith("1 other session holds copies")
    many = Forgotten("0514dfee", messages=2, memories=["m1", "m2"], quotes={"events": 2})
    assert forgotten_line(many).startswith("forgot 0514dfee: 2 messages, 2 memories, 2 quotes")


def _commands(command: typer.core.TyperGroup, path: str) -> Iterator[tuple[str, object]]:
    for name, sub in command.commands.items():
        yield f"{path} {name}", sub
        if isinstance(sub, typer.core.TyperGroup):
            yield from _commands(sub, f"{path} {name}")


def test_usage_lines_name_arguments_as_the_man_page_does() -> None:
    """Typer writes a required argument ``{ref}`` and an optional one ``[query]``."""
    root = typer.main.get_command(build_app())
    assert isinstance(root, typer.core.TyperGroup)
    for path, command in _commands(root, "memctl"):
        assert isinstance(command, typer.core.TyperCommand | typer.core.TyperGroup)
        usage = " ".join(command.collect_usage_pieces(typer.Context(command)))
        assert not re.search(r"[{}a-z]", usage), f"{path}: {usage}"
    forget = root.commands["sessions"].commands["forget"]  # type: ignore[attr-defined]
    assert forget.collect_usage_pieces(typer.Context(forget)) == ["[OPTIONS]", "REF"]
    promote = root.commands["promote"]
    assert promote.collect_usage_pieces(typer.Context(promote)) == ["[OPTIONS]", "[ID]..."]
