"""memctl's core API: one function per user-facing operation, for every front door.

Each operation takes the ``Context`` and a typed request (a frozen dataclass
whose defaults are the product's defaults) and returns a typed result. The CLI,
the hooks and the MCP server are thin callers of these functions; tests call
them without Typer.

- ``memory``: remember, get, list, update, forget, delete, purge, link, unlink,
  status, events
- ``recall``: recall (with the context block and ``why_not``), profile
- ``ingest``: ingest (the hook's fast path and ``--wait``), import, export,
  runs, undo
- ``maintain``: maintain
- ``distil``: pending, distil (distillation by the host model)
- ``sync``: sync (and its dry run), init, status, promote, unpromote

Import the module you need (``from memctl.api.recall import RecallRequest,
recall``): this package imports nothing, so the hook's fast lane loads only
``memctl.api.ingest``.
"""
