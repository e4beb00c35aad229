"""mcp: memctl as an MCP server over stdio (the SDK is imported only here)."""

from __future__ import annotations

import typer

from memctl.cli.common import new_typer, open_context

app = new_typer()


@app.command()
def mcp(ctx: typer.Context) -> None:
    """Serve memctl's tools (memory_search, memory_store, ...) and resources over MCP
    on stdio, for an assistant to start. `memctl init` registers it."""
    from memctl.integrations.mcp_server import serve

    serve(open_context(ctx))
