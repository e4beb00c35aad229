"""Typer commands: parse arguments, call one core function, render the result."""
