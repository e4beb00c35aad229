"""The scopes a search covers, apart from the memory operations (``memctl.memories.
operations``, which brings the writer and its SQL): a `memctl recall` over the default
scopes, or every scope, loads only this."""

from __future__ import annotations

from memctl.config.scope import GLOBAL_SCOPE
from memctl.context import Context


def recall_scopes(
    ctx: Context, scope: str | None, all_scopes: bool = False
) -> tuple[str, ...] | None:
    """Scopes a search covers: by default the current project and global."""
    if all_scopes:
        return None
    if scope in (None, "", "project"):
        return (ctx.settings.project_scope, GLOBAL_SCOPE)
    from memctl.memories.operations import resolve_scope

    return (resolve_scope(ctx, scope),)
