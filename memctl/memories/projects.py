"""Projects as a person names them: a directory (shortened from home) and a repository name.

The scope stays the stable id (``github.com/a/b``, ``path:<hash>``): JSON carries it beside
the path. Where a command takes a scope it also takes a project's path (``~/src/app``,
``.``) or its name (``app``), resolved here to the scope a session there would have.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memctl.config.scope import (
    GLOBAL_SCOPE,
    LOCAL_REMOTE,
    PATH_SCOPE,
    project_root,
    project_scope,
)
from memctl.context import Context
from memctl.errors import UsageError
from memctl.model import HIDDEN_STATES
from memctl.store.projects import ProjectRow, project_dirs, project_rows, scope_known

PATH_STARTS = ("/", "~", ".")  # a scope given as a directory


@dataclass(frozen=True)
class Project:
    """A project memctl knows of: its scope, name, place, what it holds and when it last ran."""

    scope: str  # the stable id
    name: str  # the repository's name, else the directory's; '' when unknown
    path: str  # the directory, ~ for home; '' when no session said where it ran
    sessions: int
    memories: int
    last_activity: str
    clients: tuple[str, ...]
    current: bool  # the project the command runs in

    @property
    def label(self) -> str:
        """How a person reads it: ``name (path)``, or the scope when nothing else is known."""
        if self.scope == GLOBAL_SCOPE:
            return GLOBAL_SCOPE
        if self.path and self.name and Path(self.path).name != self.name:
            return f"{self.name} ({self.path})"
        return self.path or self.name or self.scope

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "clients": list(self.clients), "label": self.label}


def short_path(path: str | Path) -> str:
    """``path`` with the home directory written ``~``."""
    text, home = str(path), str(Path.home())
    if text == home:
        return "~"
    return "~" + text[len(home) :] if text.startswith(home + "/") else text


def repo_name(scope: str) -> str:
    """The repository a remote scope names (``github.com/a/b`` -> ``b``); '' for others."""
    if scope == GLOBAL_SCOPE or scope.startswith(PATH_SCOPE):
        return ""
    return scope.removeprefix(LOCAL_REMOTE).rstrip("/").rsplit("/", 1)[-1]


def _root(cwd: str) -> Path:
    """The work tree of the directory a session ran in, when it is on this machine (a
    relative one, as some transcripts hold, is never looked up from where memctl runs)."""
    where = Path(cwd)
    return project_root(where) if where.is_absolute() and where.is_dir() else where


def _named(ctx: Context, scope: str, cwd: str) -> tuple[str, str]:
    """(name, path) of a project: its repository's name, else its directory's; its
    directory shortened from home (the current project's is where the command runs)."""
    if scope == ctx.settings.project_scope:
        root: Path | None = project_root(ctx.settings.cwd)
    else:
        root = _root(cwd) if cwd else None
    name = repo_name(scope) or (root.name if root else "")
    return name, short_path(root) if root else ""


def project_of(ctx: Context, row: ProjectRow) -> Project:
    name, path = _named(ctx, row.scope, row.cwd)
    return Project(
        row.scope,
        name,
        path,
        row.sessions,
        row.memories,
        row.last_activity,
        row.clients,
        row.scope == ctx.settings.project_scope,
    )


def list_projects(ctx: Context) -> list[Project]:
    """Every project holding sessions or memories, latest activity first."""
    hidden = tuple(str(s) for s in HIDDEN_STATES)
    return [project_of(ctx, row) for row in project_rows(ctx.db, hidden)]


def labels(ctx: Context, scopes: list[str]) -> dict[str, str]:
    """scope -> how a person reads it (``name (path)``, the path, or the scope), for
    ``scopes``: without counting anything, so a page of rows can name their projects."""
    wanted = sorted(set(scopes))
    dirs = project_dirs(ctx.db, wanted)
    found = {}
    for scope in wanted:
        name, path = _named(ctx, scope, dirs.get(scope, ""))
        found[scope] = Project(scope, name, path, 0, 0, "", (), False).label
    return found


def scope_named(ctx: Context, text: str) -> str | None:
    """The scope ``text`` names as a directory or a project's name; None when it names
    neither (it is then a scope as written)."""
    if text.startswith(PATH_STARTS):
        return project_scope(Path(text).expanduser().resolve(), ctx.settings.scope_key)
    if scope_known(ctx.db, text):
        return None
    found = [p for p in list_projects(ctx) if p.name.lower() == text.lower()]
    if len(found) > 1:
        where = ", ".join(p.path or p.scope for p in found)
        raise UsageError(f"{len(found)} projects are named {text!r} ({where}): give its path")
    return found[0].scope if found else None
