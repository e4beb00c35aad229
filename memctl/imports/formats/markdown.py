"""Markdown and plain text: the whole file is the document."""

from __future__ import annotations

from memctl.imports.formats.base import Kind, TextDoc, pieces
from memctl.ingest.source import Input

NAME = "markdown"
KIND = Kind.TEXT
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx", ".mdown", ".mkd")


def looks_like(name: str, head: str) -> bool:
    """Any text no other format claims is read as Markdown (plain text is Markdown too)."""
    return True


def label(name: str) -> str:
    """``markdown`` for a Markdown file name, ``text`` for any other."""
    return NAME if name.lower().endswith(MARKDOWN_SUFFIXES) else "text"


def read(source: Input) -> TextDoc:
    return TextDoc(pieces(source))
