"""The doors assistants use: detection and set-up of Claude Code, Codex, OpenCode and
Cursor, their hook entry points, and the MCP server."""
