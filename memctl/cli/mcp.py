"""mcp: memctl as an MCP server over stdio (the SDK is imported only here)."""

from __future__ import annotations

import typer

from memctl.cli.common import new_typer, settings_for

app = new_typer()


@app.command()
def mcp(ctx: typer.Context) -> None:
    """Serve memctl's tools (memory_search, memory_store, ...) and resources over MCP
    on stdio, for an assistant to start. `memctl init` registers it."""
    from memctl.integrations.mcp_search import open_context
    from memctl.integrations.mcp_server import serve

    context = open_context(settings_for(ctx))
    ctx.call_on_close(context.close)
    serve(context)
