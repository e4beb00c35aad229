"""The projects memctl knows, named as a person knows them (``memories.projects``)."""

from __future__ import annotations

from memctl.context import Context
from memctl.memories.projects import Project, labels, list_projects

__all__ = ["Project", "list_projects", "project_labels"]


def project_labels(ctx: Context) -> dict[str, str]:
    """scope -> ``name (path)`` (or the path, or the scope) of every known project."""
    return labels(ctx)
