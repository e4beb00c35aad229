"""The projects memctl knows, named as a person knows them (``memories.projects``)."""

from __future__ import annotations

from memctl.context import Context
from memctl.memories.projects import Project, labels, list_projects

__all__ = ["Project", "list_projects", "project_labels"]


def project_labels(ctx: Context, scopes: list[str]) -> dict[str, str]:
    """scope -> ``name (path)`` (or the path, or the scope) of each of ``scopes``."""
    return labels(ctx, scopes)
