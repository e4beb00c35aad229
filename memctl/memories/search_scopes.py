"""The scopes a search covers, apart from the memory operations (``memctl.memories.
operations``, which brings the writer and its SQL, and re-exports these): a `memctl
recall` loads only this."""

from __future__ import annotations

from memctl.config.scope import GLOBAL_SCOPE, keyed_scope
from memctl.context import Context
from memctl.errors import UsageError
from memctl.memories.projects import scope_named
from memctl.store import scopes


def recall_scopes(
    ctx: Context, scope: str | None, all_scopes: bool = False
) -> tuple[str, ...] | None:
    """Scopes a search covers: by default the current project and global."""
    if all_scopes:
        return None
    if scope in (None, "", "project"):
        return (ctx.settings.project_scope, GLOBAL_SCOPE)
    return (resolve_scope(ctx, scope),)


def resolve_scope(ctx: Context, scope: str | None) -> str:
    """``project`` (or nothing) is the current project; ``global`` stays; a directory or a
    project's name is that project's scope (``memories.projects``); another name stays, or
    is the scope it became (an old ``path:`` scope of a project that got a remote, or
    as an older memctl named it: ``config.scope.keyed_scope``)."""
    if scope in (None, "", "project"):
        return ctx.settings.project_scope
    if scope == GLOBAL_SCOPE:
        return scope
    named = scope_named(ctx, scope)
    if named is None:
        _no_secret_scope(scope)
    return scopes.resolve(ctx.db, keyed_scope(named or scope, ctx.settings.scope_key))


def _no_secret_scope(scope: str) -> None:
    """Refuse a scope given by hand that holds a secret or private text: taken as typed,
    it would name the memories, the sessions and the sync repository's files (scrubbed,
    it would make different scopes one)."""
    from memctl.memories.privacy import secret_in_id

    kind = secret_in_id(scope)
    if kind:
        raise UsageError(
            f"the scope holds what looks like a secret ({kind}): give a project's path or "
            "name, global, or a scope (`memctl projects`); nothing was stored"
        )
