"""ui: the local viewer."""

from __future__ import annotations

from typing import Annotated

import typer

from memctl.cli.common import new_typer, settings_for

app = new_typer()


@app.command()
def ui(
    ctx: typer.Context,
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="Port on 127.0.0.1 (0: a free one).")
    ] = 0,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the sign-in URL in the web browser.")
    ] = False,
) -> None:
    """A local viewer of projects, sessions and memories, on 127.0.0.1 until Ctrl-C; it prints
    a one-time sign-in URL."""
    from memctl.ui.server import serve, sign_in_page  # Starlette and Jinja load only here

    settings = settings_for(ctx)

    def ready(url: str) -> None:
        typer.echo(f"memctl ui: open {url}")
        typer.echo("(the link signs in once; Ctrl-C stops the viewer)")
        if open_browser:  # a page that sends the browser on: no token on its command line
            import webbrowser

            webbrowser.open(sign_in_page(settings.home, url).as_uri())

    serve(settings, port, ready)
