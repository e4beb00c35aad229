"""One Settings object, layered: defaults < home config < project config < env < flags.

The keys themselves, their defaults and documentation, are ``config.keys``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from memctl.config.keys import (
    ENV_PREFIX,
    KEY_NAMES_BY_ATTR,
    KEYS,
    PERSONAL_KEYS,
    key_named,
)
from memctl.config.scope import path_scope, project_root, project_scope
from memctl.config.values import Values
from memctl.errors import ConfigError, UsageError, did_you_mean
from memctl.home import default_home

CONFIG_FILE = "config.yaml"
PROJECT_CONFIG = Path(".memctl") / CONFIG_FILE
DEFAULT_SOURCE = "default"  # Settings.sources of a key no file, variable or flag set
# Environment variables that are not config keys but are read elsewhere
# (MEMCTL_CLIENTS_DIR: where scripts/install-clients and the e2e tests keep the clients).
# Set in the environment of memctl's own headless assistant runs (``llm: claude-code`` /
# ``codex``, llm/headless.py): memctl's hooks do nothing there, so they are never sessions.
HEADLESS_ENV = "MEMCTL_HEADLESS"
# Names the assistant session a command runs in ("last time" is the one before it), for a
# client with no variable of its own (memctl's OpenCode plugin sets it for OpenCode's
# shell tool) and for scripts; then the clients' own: Claude Code's, in its hooks', MCP
# servers' and shell tool's environment (2.1.332); Codex's, in its shell tool's only
# (0.171.0: its MCP servers and hooks start without it); GitHub Copilot CLI's, in its MCP
# servers' environment (1.0.102: its hooks get the id in their payload only). The resident
# process forwards each (integrations/resident.py ENV_NAMES).
ASKING_ENV = "MEMCTL_SESSION_ID"
SESSION_VARIABLES = (
    ASKING_ENV,
    "CLAUDE_CODE_SESSION_ID",
    "CODEX_THREAD_ID",
    "COPILOT_AGENT_SESSION_ID",
)
# Names the client's own process to its hooks, by client: Claude Code's (2.1.330; its MCP
# servers are its children, and keep the session id they started with after a /clear).
# Read for that client's hooks only: another client started from its shell tool inherits it.
PROCESS_VARIABLES = {"claude-code": "CLAUDE_PID"}
# Where memctl's OpenCode plugin names the session in a memory_search call's arguments:
# OpenCode (1.18.33) sends an MCP server no ``_meta`` and starts one for all its sessions,
# but a plugin's ``tool.execute.before`` hook may add to a call's arguments before they
# are sent. No tool takes this name: the server takes it out before it checks the call
# (integrations/mcp_search.call_session).
SESSION_ARGUMENT = "memctl_session"
ENV_NOT_KEYS = frozenset(
    {
        "MEMCTL_HOME",
        "MEMCTL_DEBUG",
        "MEMCTL_DEBUG_SQL",
        "MEMCTL_CLIENTS_DIR",
        HEADLESS_ENV,
        ASKING_ENV,
    }
)


def asking_session(environ: Mapping[str, str]) -> str | None:
    """The id of the assistant session a command runs in, as its environment names it
    (``SESSION_VARIABLES``, the first set); None outside any."""
    return next((environ[name] for name in SESSION_VARIABLES if environ.get(name)), None)


@dataclass(frozen=True)
class Settings(Values):
    """Every config value, resolved, plus where memctl keeps its data.

    ``settings.recall_limit`` is the value of ``recall.limit``: typed for mypy by
    ``Values`` (generated from KEYS), looked up in ``values`` at run time.
    """

    home: Path
    cwd: Path
    values: dict[str, Any]
    sources: dict[str, str] = field(default_factory=dict)
    refused: tuple[str, ...] = ()  # PERSONAL_KEYS the project's file set: left out
    foreign: str = ""  # why the project's whole file was left out (another user's)

    if not TYPE_CHECKING:  # mypy checks attributes against Values instead

        def __getattr__(self, attr: str) -> Any:
            values = object.__getattribute__(self, "values")
            name = KEY_NAMES_BY_ATTR.get(attr)
            if name is None:
                raise AttributeError(attr)
            return values[name]

    @property
    def db_path(self) -> Path:
        return self.home / "memctl.db"

    @property
    def home_config(self) -> Path:
        return self.home / CONFIG_FILE

    @property
    def project_config(self) -> Path:
        return project_root(self.cwd) / PROJECT_CONFIG

    @property
    def refused_note(self) -> str:
        """One line naming what of the project's file was left out ('' when nothing): the
        whole file when another user owns it, else the keys it may not set."""
        if self.foreign:
            return f"{self.project_config}: {self.foreign}: left out"
        if not self.refused:
            return ""
        return (
            f"{self.project_config} sets {', '.join(self.refused)}: left out (a project's "
            "file may not say where your data goes; set them in "
            f"{self.home_config} if you mean them)"
        )

    @cached_property
    def project_scope(self) -> str:
        """Found by walking up to the git directory: once per Settings."""
        return project_scope(self.cwd, self.scope_key)

    @cached_property
    def path_scope(self) -> str:
        """The project's path scope: an alias of ``project_scope`` once it has a remote."""
        return path_scope(self.cwd, self.scope_key)

    @cached_property
    def scope_key(self) -> bytes | None:
        """The key of a ``path:`` scope (``config.scope.keyed_path``): the home's key,
        made when there is none; None when it cannot be made (a read-only disk)."""
        from memctl.config.files import forget_key, known_forget_key

        found = known_forget_key(self.home)
        if found is not None:
            return found
        try:
            return forget_key(self.home)
        except OSError:
            return None

    @property
    def embed_model_path(self) -> Path | None:
        return Path(self.embed_model_dir).expanduser() if self.embed_model_dir else None


def flatten(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"recall": {"limit": 5}}`` -> ``{"recall.limit": 5}``."""
    flat: dict[str, Any] = {}
    for name, value in tree.items():
        dotted = f"{prefix}{name}"
        if isinstance(value, dict):
            flat.update(flatten(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat


# A config file is a few keys: more than this is no config file (a project's is read as
# untrusted input, ``config.files.read_untrusted``).
CONFIG_MAX_BYTES = 1 << 20


def read_config_file(path: Path, untrusted: bool = False) -> dict[str, Any]:
    """The keys set in one YAML config file, validated; {} when the file does not exist.
    An ``untrusted`` one (a project's, which came with the repository) is read only as a
    regular file, never through a link, never waiting on a FIFO."""
    from memctl.config.files import NotOwned, read_untrusted

    if not untrusted and not path.is_file():
        return {}
    from memctl.config.safe_load import yaml_value

    try:
        data = read_untrusted(path, CONFIG_MAX_BYTES + 1) if untrusted else path.read_bytes()
    except FileNotFoundError:
        return {}
    except NotOwned:
        raise
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror}") from None
    if len(data) > CONFIG_MAX_BYTES:
        raise ConfigError(f"{path}: over {CONFIG_MAX_BYTES:,} bytes: no config file")
    try:
        tree = yaml_value(data.decode("utf-8")) or {}
    except ValueError as exc:  # UnicodeDecodeError is a ValueError
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"{path}: not valid YAML ({first_line})") from None
    if not isinstance(tree, dict):
        raise ConfigError(f"{path}: expected a mapping of config keys")
    parsed = {}
    for name, value in flatten(tree).items():
        try:
            parsed[name] = key_named(name).parse(value)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None
    return parsed


def read_env(environ: dict[str, str]) -> dict[str, Any]:
    """Keys set through ``MEMCTL_*`` variables, validated."""
    by_env = {key.env: key for key in KEYS}
    parsed: dict[str, Any] = {}
    for var, value in environ.items():
        if not var.startswith(ENV_PREFIX) or var in ENV_NOT_KEYS:
            continue
        key = by_env.get(var)
        if key is None:
            raise ConfigError(
                f"unknown environment variable {var}{did_you_mean(var, by_env)}; "
                "see `memctl config show --all` (MEMCTL_ and the key, dots as _)"
            )
        parsed[key.name] = key.parse(value)
    return parsed


def _ollama_url(host: str) -> str:
    """OLLAMA_HOST as the ollama CLI reads it: a URL, or ``host``, ``host:port`` or ``:port``
    without a scheme, whose missing parts are http, 127.0.0.1 and port 11434 (not 80)."""
    host = host.strip()
    if "://" in host:
        return host
    try:
        parts = urlsplit("http://" + host)
        name, port = parts.hostname or "127.0.0.1", parts.port or 11434
    except ValueError:
        return f"http://{host}"
    name = f"[{name}]" if ":" in name else name
    return f"http://{name}:{port}{parts.path.rstrip('/')}"


def load_settings(
    home: Path | None = None,
    cwd: Path | None = None,
    overrides: dict[str, Any] | None = None,
    environ: dict[str, str] | None = None,
) -> Settings:
    """Resolve every key through the layers; ``overrides`` are the command-line flags."""
    environ = dict(os.environ if environ is None else environ)
    cwd = (cwd or Path.cwd()).resolve()
    if home is None:
        home = Path(environ["MEMCTL_HOME"]).expanduser() if environ.get("MEMCTL_HOME") else None
    home = home or default_home()
    values = {key.name: key.default for key in KEYS}
    sources = dict.fromkeys(values, DEFAULT_SOURCE)
    if environ.get("OLLAMA_HOST"):
        values["ollama.host"] = _ollama_url(environ["OLLAMA_HOST"])
        sources["ollama.host"] = "OLLAMA_HOST"
    project_file = project_root(cwd) / PROJECT_CONFIG
    from memctl.config.files import NotOwned, home_problem

    problem = home_problem(home)
    if problem:
        raise ConfigError(problem)

    try:
        project, foreign = read_config_file(project_file, untrusted=True), ""
    except NotOwned as exc:  # another user's /tmp/.memctl: tunes nothing of this user's
        project, foreign = {}, exc.strerror or "owned by another user"
    refused = tuple(sorted(PERSONAL_KEYS.intersection(project)))
    layers = [
        (str(home / CONFIG_FILE), read_config_file(home / CONFIG_FILE)),
        (str(project_file), {k: v for k, v in project.items() if k not in PERSONAL_KEYS}),
        ("environment", read_env(environ)),
        ("flag", {name: key_named(name).parse(v) for name, v in (overrides or {}).items()}),
    ]
    for source, layer in layers:
        for name, value in layer.items():
            values[name] = value
            sources[name] = source
    return Settings(
        home=home, cwd=cwd, values=values, sources=sources, refused=refused, foreign=foreign
    )


def split_assignments(pairs: Iterable[str]) -> dict[str, str]:
    """``["recall.limit=5"]`` -> ``{"recall.limit": "5"}``: the ``-c KEY=VALUE`` flags."""
    values = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"-c takes KEY=VALUE, not {pair!r}")
        values[key.strip()] = value
    return values


def settings_from_flags(
    home: str | Path | None,
    assignments: Iterable[str] | dict[str, str] = (),
    cwd: Path | None = None,
) -> Settings:
    """The settings a command line selects: ``--home`` and each ``-c KEY=VALUE`` (as
    written, or already split), for every entry point (Typer, the fast lane, hooks, the
    MCP server, the worker)."""
    overrides = assignments if isinstance(assignments, dict) else split_assignments(assignments)
    return load_settings(
        home=Path(home).expanduser() if home else None, cwd=cwd, overrides=overrides
    )
