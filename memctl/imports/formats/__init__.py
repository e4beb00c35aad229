"""The file formats memctl imports, one module each, and the sniffing that picks one.

Every module has ``NAME``, ``KIND`` (what reading it gives: see ``Kind``) and
``looks_like(name, head)``, which judges a file by its name and its first
64 KiB; a format's reader is ``read`` (text), ``conversations`` (chat),
``records`` (records) or ``lines`` (native). ``detect`` tries them in
``ORDER``; an assistant's session transcript (``session``, what ``memctl ingest``
reads) is tried after every other format, and Markdown takes whatever is left. A
file that looks like JSON but is none of these is refused rather than imported as text.
"""

from __future__ import annotations

import re
from types import ModuleType

from memctl.errors import InputError
from memctl.imports.formats import (
    chatgpt,
    claude_ai,
    frontmatter,
    markdown,
    mem0,
    memctl_jsonl,
    memctl_yaml,
    session,
    slack,
    specstory,
    transcript,
    whatsapp,
)
from memctl.imports.formats.base import Kind, looks_like_json
from memctl.lazy_re import lazy

ORDER: tuple[ModuleType, ...] = (
    chatgpt,
    claude_ai,
    mem0,
    memctl_jsonl,
    memctl_yaml,
    specstory,
    slack,
    whatsapp,
    transcript,
    frontmatter,
    session,
    markdown,
)
JSON_FORMATS = (chatgpt, claude_ai, mem0, memctl_jsonl)
# Generic chat messages, ``{"role": ..., "content": ...}``: what `memctl ingest` reads as a
# ``generic`` transcript, and import does not (it may as well be data as a chat)
ROLE_CONTENT = lazy(r'"role"\s*:.*?"content"\s*:|"content"\s*:.*?"role"\s*:', re.S)


class ChatNotImportedError(InputError):
    """A JSON file of chat messages import does not take in: met in a folder, it fails (the
    user asked for it, and `memctl ingest` takes it), where other JSON is passed over."""


def detect(name: str, head: str) -> ModuleType:
    """The format of a file, from its name and head (decoded, BOM removed)."""
    found = next(module for module in ORDER if module.looks_like(name, head))
    if found is markdown and looks_like_json(name, head):
        known = ", ".join(m.NAME for m in JSON_FORMATS)
        if ROLE_CONTENT.search(head):
            raise ChatNotImportedError(
                f"{name} holds chat messages (role and content), not a format memctl imports "
                f"({known}); `memctl ingest FILE` stores them as a session"
            )
        raise InputError(
            f"{name} looks like JSON, but is not a format memctl imports ({known}); "
            "a conversation transcript goes to `memctl ingest`"
        )
    return found


def label(module: ModuleType, name: str) -> str:
    """The format's name as reports show it (Markdown says whether it is plain text)."""
    return markdown.label(name) if module is markdown else str(module.NAME)


__all__ = ["ChatNotImportedError", "Kind", "ORDER", "detect", "label"]
