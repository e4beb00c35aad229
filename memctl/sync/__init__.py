"""Moving memories between stores: the record format (``records``) used by export and
import, and the git repository of YAML files that ``memctl sync`` shares.

``memctl.sync.sync_now(ctx, request=None)`` runs one sync (``memctl sync`` and
``memctl maintain`` with ``sync.auto`` call it through ``maintain.sync_hook.synced``,
which then forgets what another machine forgot); it is loaded on first use, so importing
``memctl.sync.records`` does not load git or the sync stages.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    if name in ("sync_now", "SyncRequest", "SyncResult"):
        from memctl.sync import pipeline

        return getattr(pipeline, name)
    raise AttributeError(name)
