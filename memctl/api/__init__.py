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
- ``maintain``: maintain, restore
- ``distil``: pending, distil (distillation by the host model)
- ``sync``: sync (and its dry run), init, status, promote, unpromote
- ``config``: the settings a door's options select, the Context on them, config edits
- ``model``: install the embedding model, where it is, re-embed the store

Errors are in the API's words: a request field is named as it is spelled here
(``budget``) and listed in the error's ``names``, so each door shows its own
spelling (the CLI ``--budget``, MCP the tool's argument). The CLI imports nothing
below this package but the error types and the data model (tests/test_architecture.py).

Import the module you need (``from memctl.api.recall import RecallRequest,
recall``): this package imports nothing, so the hook's fast lane loads only
``memctl.api.ingest``.
"""
