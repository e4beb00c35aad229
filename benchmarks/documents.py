"""Synthetic files to import, of any size, for tests and benchmarks: Markdown notes with now
and then a durable fact, small notes for a directory, and a ChatGPT export."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qui", "dor", "fen", "gal")
TOOLS = ("helix", "vim", "emacs", "zed", "kakoune", "nano", "vscode", "sublime", "micro", "jed")
HABITS = ("run the tests", "review pull requests", "write the changelog", "rebase on main")
TIMES = ("before lunch", "on Monday mornings", "after standup", "at the end of the day")

FACT_EVERY = 40  # one rule-matching sentence in this many paragraphs


def markdown_notes(path: Path, size: int) -> int:
    """About ``size`` bytes of Markdown: sections of prose with a durable fact every
    ``FACT_EVERY`` paragraphs, each fact different. Returns how many facts it holds."""
    facts = n = 0
    with path.open("w", encoding="utf-8") as out:
        while out.tell() < size:
            if n % 25 == 0:
                out.write(f"## Part {n // 25}\n\n")
            words = " ".join(f"term{(n * 7 + i) % 997}" for i in range(60))
            out.write(f"Paragraph {n} discusses {words}.\n\n")
            if n % FACT_EVERY == 0:
                out.write(f"We deploy service{n} with `make release-{n}` from main.\n\n")
                facts += 1
            n += 1
    return facts


def plain_text(path: Path, size: int) -> int:
    """About ``size`` bytes of plain text (no headings) where every line states a durable
    fact: the worst case for atomic import. Returns the number of lines."""
    n = 0
    with path.open("w", encoding="utf-8") as out:
        while out.tell() < size:
            tool, habit = TOOLS[n % len(TOOLS)], HABITS[n % len(HABITS)]
            out.write(
                f"I prefer {tool} for editing module{n}, and I usually {habit} "
                f"{TIMES[n % len(TIMES)]}. The notes for ticket {n} follow below.\n"
            )
            n += 1
    return n


def words(rng: random.Random, count: int) -> str:
    """``count`` made-up words, in sentences."""
    made = ["".join(rng.choices(SYLLABLES, k=rng.randint(1, 3))) for _ in range(count)]
    return " ".join(w + ("." if i % 12 == 11 else "") for i, w in enumerate(made)).capitalize()


def note(n: int) -> str:
    """A small note (1-7 KB): a title, a preference and a project fact, and prose."""
    rng = random.Random(n)
    tool, name = rng.choice(TOOLS), words(rng, 2)
    return (
        f"# Note {n}: {name}\n\nI prefer {tool} for editing {name}. "
        f"Our {name} service runs on host-{n}.internal.\n\n"
        f"## Details\n\n{words(rng, 120 + n % 7 * 80)}\n"
    )


def _node(node_id: str, parent: str | None, role: str, text: str, at: float) -> dict[str, Any]:
    return {
        "id": node_id,
        "message": {
            "id": node_id,
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": at,
            "content": {"content_type": "text", "parts": [text]},
            "status": "finished_successfully",
            "metadata": {},
            "recipient": "all",
        },
        "parent": parent,
        "children": [],
    }


def chatgpt_export(path: Path, conversations: int, turns: int = 6) -> None:
    """A ChatGPT ``conversations.json`` of ``conversations`` conversations."""
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        for c in range(conversations):
            mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None}}
            parent = "root"
            for t in range(turns):
                node_id = f"c{c}-m{t}"
                rng = random.Random(c * 100 + t)
                habit, when = rng.choice(HABITS), rng.choice(TIMES)
                text = (
                    f"I usually {habit} of {words(rng, 2)} {when}."
                    if t % 2 == 0
                    else f"Noted: you {habit} {when}. {words(rng, 20)}"
                )
                mapping[node_id] = _node(
                    node_id, parent, "user" if t % 2 == 0 else "assistant", text, 1.7e9 + c
                )
                mapping[parent]["children"] = [node_id]
                parent = node_id
            conversation = {
                "title": f"Conversation {c}",
                "mapping": mapping,
                "current_node": parent,
                "conversation_id": f"conv-{c}",
            }
            out.write(("," if c else "") + json.dumps(conversation))
        out.write("]")
