"""The config files memctl writes: one key set in a YAML file, keeping the rest (``memctl
config set``), and the commented template of every key at its default (``memctl config
init``). Reading them, and the keys themselves: ``config.settings``."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

from memctl.config.files import write_private
from memctl.config.keys import KEYS, PERSONAL_KEYS, key_named
from memctl.errors import ConfigError


def check_project_key(name: str) -> None:
    """ConfigError when ``name`` is a key only the person sets (``PERSONAL_KEYS``)."""
    if key_named(name).name in PERSONAL_KEYS:
        raise ConfigError(
            f"{name} is not for a project's file (it says where your data goes): "
            f"set it with `memctl config set {name} VALUE`"
        )


def write_config_value(path: Path, name: str, value: str) -> Any:
    """Set one key in a YAML config file, keeping the other keys and the comments.

    memctl writes keys flat (``recall.limit: 5``), next to the template's
    commented line for the key when there is one. A file that spells the key
    nested (``recall: {limit: 5}``) is rewritten whole, without its comments,
    so that no old spelling can still win.
    """
    import yaml

    parsed = key_named(name).parse(value)
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    tree = yaml.safe_load(text) or {} if text else {}
    entry = yaml.safe_dump({name: parsed}, default_flow_style=False).strip()
    nested = any(part != name and name.startswith(part + ".") for part in tree)
    if nested:
        _drop_key(tree, name)
        tree[name] = parsed
        text = yaml.safe_dump(tree, sort_keys=True)
    else:
        text = _set_line(text, name, entry)
    write_private(path, text)
    return parsed


def _set_line(text: str, name: str, entry: str) -> str:
    """Replace the line setting ``name``, or add one after its commented template line."""
    lines = text.splitlines()
    setting = re.compile(rf"^{re.escape(name)}\s*:")
    commented = re.compile(rf"^#\s*{re.escape(name)}\s*:")
    for index, line in enumerate(lines):
        if setting.match(line):
            lines[index] = entry
            return "\n".join(lines) + "\n"
    for index, line in enumerate(lines):
        if commented.match(line):
            lines.insert(index + 1, entry)
            return "\n".join(lines) + "\n"
    return "\n".join([*lines, entry]) + "\n"


def _drop_key(tree: dict[str, Any], name: str) -> None:
    """Remove dotted ``name`` from a YAML tree however it is spelt (flat, nested or mixed)."""
    for part in list(tree):
        if part == name:
            del tree[part]
        elif name.startswith(part + ".") and isinstance(tree[part], dict):
            _drop_key(tree[part], name[len(part) + 1 :])
            if not tree[part]:
                del tree[part]


def template(project: bool = False) -> str:
    """A commented config file listing every key at its default (a project's: every key
    but those only the person sets, ``PERSONAL_KEYS``)."""
    import yaml

    lines = ["# memctl configuration. Every key is shown at its default; uncomment to change."]
    if project:
        said = "A project's file: the keys saying where your data goes are yours alone, set in "
        said += f"your home's config.yaml, and left out here: {', '.join(sorted(PERSONAL_KEYS))}."
        lines += [f"# {line}" for line in textwrap.wrap(said, 86)]
    keys = [k for k in KEYS if not (project and k.name in PERSONAL_KEYS)]
    for key in [k for k in keys if not k.tuning] + [None] + [k for k in keys if k.tuning]:
        if key is None:
            lines += ["#", "# Tuning (advanced): the stages' constants, for experiments."]
            continue
        lines.append(f"# {key.doc} ({key.allowed()})")
        lines.append(f"# {key.name}: {yaml.safe_dump(key.default).splitlines()[0]}")
    return "\n".join(lines) + "\n"
