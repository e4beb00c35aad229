#!/usr/bin/env python3
"""Generate memctl's shell completions, man page and reference tables from the code.

    python scripts/gen_docs.py          # write completions/, man/ and the tables in docs/
    python scripts/gen_docs.py --check  # exit 1, naming the stale files, without writing

Everything is read from the command tree (``typer.main.get_command``), from
``memctl.config`` (config keys and their environment variables) and from
``memctl.errors`` (exit codes) and from the MCP server's tool listing (the
config-key table of docs/configuration.md, the tool table of docs/mcp.md,
``memctl/config/values.py``), so a new command, option, key or tool shows up
after one regeneration; tests/test_docs.py fails until it is done.
"""

from __future__ import annotations

import argparse
import enum
import inspect
import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path, PurePath
from typing import Any, get_args

ROOT = Path(__file__).resolve().parent.parent
PROG = "memctl"
REGENERATE = "python scripts/gen_docs.py"
BASH = "completions/memctl.bash"
ZSH = "completions/_memctl"
FISH = "completions/memctl.fish"
MAN = "man/memctl.1"
OUTPUTS = (BASH, ZSH, FISH, MAN)

# Environment variables memctl reads that are not config keys (memctl.config.ENV_NOT_KEYS
# names the MEMCTL_* ones; a new one there without a line here stops the generator).
OTHER_ENV = {
    "MEMCTL_HOME": "The data directory, as --home sets it (default: $XDG_DATA_HOME/memctl, "
    "else ~/.local/share/memctl).",
    "MEMCTL_DEBUG": "When set, an error shows its Python traceback instead of one line.",
    "MEMCTL_DEBUG_SQL": "When set, every SQL statement is traced to standard error.",
    "MEMCTL_CLIENTS_DIR": "Where scripts/install-clients puts the assistant CLIs the e2e "
    "tests drive (default: .cache/clients); not a config key.",
    "MEMCTL_HEADLESS": "Set by memctl in the assistant CLI it runs headless (llm claude-code "
    "or codex): memctl's hooks then do nothing, so its own runs are never sessions.",
    "MEMCTL_SESSION_ID": 'The assistant session a command runs in: asked from it, "what did '
    'we do last time?" means the session before it (CLAUDE_CODE_SESSION_ID and '
    "CODEX_THREAD_ID are read after it); not a config key.",
    "OLLAMA_HOST": "The Ollama server (host:port or a URL), used when the ollama.host key "
    "is not set in a config file, MEMCTL_OLLAMA_HOST or --config.",
}
# Exit codes memctl.cli.entry.main uses besides the MemctlError ones.
OTHER_EXITS = {
    0: "Success.",
    70: "Internal error: a bug (set MEMCTL_DEBUG=1 for the traceback).",
    130: "Interrupted (Ctrl-C).",
}
# Positional arguments with one of these names are completed as file names.
FILE_ARGUMENT_NAMES = frozenset({"path", "file", "filename"})
TYPE_NAMES = {
    "str": "TEXT",
    "int": "INTEGER",
    "float": "FLOAT",
    "bool": "BOOLEAN",
    "path": "PATH",
    "datetime": "DATETIME",
    "uuid": "UUID",
    # click's own names, under typer < 0.29 (no type descriptors): the same words
    "int range": "INTEGER",
    "float range": "FLOAT",
}
SHELL_WORD = re.compile(r"^[A-Za-z0-9_.:@%+,/=-]+$")


# --- the command tree ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    names: tuple[str, ...]  # every spelling, short ones first: ("-n", "--limit")
    negations: tuple[str, ...]  # the "off" spellings of a --flag/--no-flag pair
    help: str
    takes_value: bool
    metavar: str  # "" for a flag
    choices: tuple[str, ...]
    is_path: bool
    multiple: bool
    eager: bool  # --help, --version: nothing else on the line matters
    envvar: str
    default: str
    bounds: str

    @property
    def is_help(self) -> bool:
        return "--help" in self.names


@dataclass(frozen=True)
class Argument:
    name: str  # as shown: QUERY, MEMORY_ID
    help: str
    required: bool
    variadic: bool
    choices: tuple[str, ...]
    is_path: bool


@dataclass(frozen=True)
class Command:
    path: tuple[str, ...]  # () for memctl itself
    help: str
    options: tuple[Option, ...]
    arguments: tuple[Argument, ...]
    subcommands: tuple[Command, ...]
    is_group: bool
    subcommand_metavar: str

    @property
    def name(self) -> str:
        return " ".join((PROG, *self.path))

    @property
    def key(self) -> str:
        """The path as the completion scripts spell it: "" or "config set"."""
        return " ".join(self.path)

    @property
    def summary(self) -> str:
        """The help's first paragraph on one line."""
        return " ".join(self.help.split("\n\n")[0].split())

    def walk(self) -> Iterator[Command]:
        yield self
        for sub in self.subcommands:
            yield from sub.walk()

    def usage(self) -> list[tuple[str, bool, bool]]:
        """The usage line after the command's name: (word, optional, repeated) pieces."""
        pieces = [("OPTIONS", True, False)] if self.options else []
        pieces += [(a.name, not a.required, a.variadic) for a in self.arguments]
        if self.is_group:
            pieces += [
                (word, word.startswith("["), word.endswith("..."))
                for word in self.subcommand_metavar.split()
            ]
        return pieces


def command_tree(app: Any = None) -> Command:
    """memctl's commands, options and arguments as the Typer app declares them."""
    import typer

    if app is None:
        from memctl.cli.main import app
    tree = _command(typer.main.get_command(app), (), None)
    # Typer(help=...) wins over the root callback's docstring in --help; the man page's
    # DESCRIPTION has room for both.
    registered = getattr(app, "registered_callback", None)
    callback = getattr(registered, "callback", None)
    doc = inspect.getdoc(callback) if callback is not None else None
    if doc and doc.strip() not in tree.help:
        tree = replace(tree, help=f"{tree.help}\n\n{doc.strip()}".strip())
    return tree


def _command(cmd: Any, path: tuple[str, ...], parent: Any) -> Command:
    ctx = cmd.context_class(
        cmd, info_name=path[-1] if path else PROG, parent=parent, **cmd.context_settings
    )
    options, arguments = [], []
    for param in cmd.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        if getattr(param, "param_type_name", "") == "argument":
            arguments.append(_argument(param))
        else:
            options.append(_option(param))
    is_group = hasattr(cmd, "list_commands") and hasattr(cmd, "get_command")
    subcommands = []
    if is_group:
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is not None and not getattr(sub, "hidden", False):
                subcommands.append(_command(sub, (*path, name), ctx))
    help_text = inspect.cleandoc(cmd.help or "").partition("\f")[0].strip()
    if getattr(cmd, "deprecated", False):
        help_text += " (deprecated)"
    return Command(
        path,
        help_text,
        tuple(options),
        tuple(arguments),
        tuple(subcommands),
        is_group,
        getattr(cmd, "subcommand_metavar", None) or "COMMAND [ARGS]...",
    )


def _option(param: Any) -> Option:
    names = [*param.opts, *param.secondary_opts]
    if param.name == "help":  # its names come from a set: give them an order
        names.sort()
    names.sort(key=lambda name: len(name) - len(name.lstrip("-")))
    takes_value = not (getattr(param, "is_flag", False) or getattr(param, "count", False))
    choices = _choices(param)
    metavar = ""
    if takes_value:
        metavar = param.metavar or ("{" + "|".join(choices) + "}" if choices else _type(param))
    envvar = param.envvar if getattr(param, "show_envvar", False) else None
    default = param.default
    shown_default = ""
    if takes_value and default not in (None, "", (), []) and not callable(default):
        default = default.value if isinstance(default, enum.Enum) else default
        shown_default = str(default)
    return Option(
        names=tuple(names),
        negations=tuple(param.secondary_opts),
        help=" ".join((param.help or "").split()),
        takes_value=takes_value,
        metavar=metavar,
        choices=choices,
        is_path=_is_path(param),
        multiple=bool(getattr(param, "multiple", False)),
        eager=bool(param.is_eager and not takes_value),
        envvar=envvar if isinstance(envvar, str) else ", ".join(envvar or ()),
        default=shown_default,
        bounds=_bounds(param),
    )


def _argument(param: Any) -> Argument:
    return Argument(
        name=(param.metavar or param.name).upper(),
        help=" ".join((getattr(param, "help", None) or "").split()),
        required=bool(param.required),
        variadic=param.nargs == -1,
        choices=_choices(param),
        is_path=_is_path(param) or param.name in FILE_ARGUMENT_NAMES,
    )


def _choices(param: Any) -> tuple[str, ...]:
    descriptor = getattr(param, "type_descriptor", None)  # Typer >= 0.20 (its own click)
    found = descriptor.choices if descriptor is not None else None
    if found is None:
        found = getattr(getattr(param, "type", None), "choices", None)  # click
    return tuple(str(c.value if isinstance(c, enum.Enum) else c) for c in found or ())


def _is_path(param: Any) -> bool:
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None:
        annotation = descriptor.annotation
        if descriptor.is_list and get_args(annotation):
            annotation = get_args(annotation)[0]
        is_path_class = isinstance(annotation, type) and issubclass(annotation, PurePath)
        return bool(descriptor.is_path or descriptor.is_file or is_path_class)
    return getattr(getattr(param, "type", None), "name", "") in ("path", "file", "filename")


def _type(param: Any) -> str:
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None:
        name = getattr(getattr(param, "type", None), "name", "text")
    elif descriptor.is_path:
        name = "path"
    else:
        annotation = descriptor.annotation
        if descriptor.is_list and get_args(annotation):
            annotation = get_args(annotation)[0]
        name = getattr(annotation, "__name__", str(annotation))
    return TYPE_NAMES.get(name.lower(), name.upper())


def _bounds(param: Any) -> str:
    low = getattr(param, "min", None)
    high = getattr(param, "max", None)
    if low is None and high is None:
        low = getattr(getattr(param, "type", None), "min", None)
        high = getattr(getattr(param, "type", None), "max", None)
    if low is not None and high is not None:
        said = f"{low:g} to {high:g}"
        return "" if said in (param.help or "") else f"From {said}."
    if low is not None:
        return f"At least {low:g}."
    if high is not None:
        return f"At most {high:g}."
    return ""


# --- bash ---------------------------------------------------------------------------------------


def _words(words: Any) -> str:
    """Words for `compgen -W` and `case`: only the ones that need no quoting."""
    return " ".join(word for word in words if SHELL_WORD.match(word))


def render_bash(tree: Command) -> str:
    specs, choices = [], []
    for cmd in tree.walk():
        options = cmd.options
        specs.append(f'        "{cmd.key}")')
        fields = {
            "cmds": _words(sub.path[-1] for sub in cmd.subcommands),
            "opts": _words(name for option in options for name in option.names),
            "valopts": _words(n for o in options if o.takes_value for n in o.names),
            "fileopts": _words(n for o in options if o.takes_value and o.is_path for n in o.names),
        }
        for var, value in fields.items():
            if value:
                specs.append(f'            {var}="{value}"')
        if any(argument.is_path for argument in cmd.arguments):
            specs.append("            filearg=1")
        specs.append("            ;;")
        for option in options:
            if option.choices and _words(option.choices):
                pattern = "|".join(f'"{cmd.key}|{name}"' for name in option.names)
                choices.append(f'        {pattern}) choices="{_words(option.choices)}" ;;')
    return BASH_TEMPLATE.format(
        header=_header("#"),
        prog=PROG,
        specs="\n".join(specs),
        choices="\n".join(choices) or "        *) ;;",
    )


BASH_TEMPLATE = r"""{header}
#
# Source it from ~/.bashrc, or copy it to ~/.local/share/bash-completion/completions/{prog}.
# Static: completing never runs {prog}.

# _{prog}_spec PATH: what may follow the command PATH ("" is {prog} itself, else "config set"):
# cmds (its subcommands), opts (its options), valopts (those taking a value), fileopts (those
# whose value is a file), filearg (1 when a positional argument is a file).
_{prog}_spec() {{
    cmds="" opts="" valopts="" fileopts="" filearg=0
    case $1 in
{specs}
    esac
}}

# _{prog}_choices PATH OPTION: the values OPTION of command PATH accepts, in choices.
_{prog}_choices() {{
    choices=""
    case "$1|$2" in
{choices}
    esac
}}

# _{prog}_has WORDS WORD: is WORD one of the space-separated WORDS?
_{prog}_has() {{
    [[ " $1 " == *" $2 "* ]]
}}

# _{prog}_reply PREFIX COMPGEN-ARGS...: COMPREPLY is compgen's answer, one per line, each
# with PREFIX before it.
_{prog}_reply() {{
    local prefix=$1 line
    shift
    COMPREPLY=()
    while IFS= read -r line; do
        COMPREPLY+=("$prefix$line")
    done < <(compgen "$@")
}}

_{prog}() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} word opt="" prefix="" path="" ended=0 i=1
    local cmds opts valopts fileopts filearg choices
    COMPREPLY=()
    _{prog}_spec ""
    # Walk the words before the cursor: find the (sub)command, skip options and their values.
    while (( i < COMP_CWORD )); do
        word=${{COMP_WORDS[i]}}
        if (( ended )); then
            :
        elif [[ $word == -- ]]; then
            ended=1
        elif [[ $word == -* ]]; then
            if [[ $word != *=* ]] && _{prog}_has "$valopts" "$word"; then
                # bash splits --opt=value at '=' (COMP_WORDBREAKS): skip the '=' too.
                [[ ${{COMP_WORDS[i+1]}} == = ]] && (( i++ ))
                (( i++ ))
            fi
        elif [[ -n $cmds ]] && _{prog}_has "$cmds" "$word"; then
            path=${{path:+$path }}$word
            _{prog}_spec "$path"
        fi
        (( i++ ))
    done
    # The value of an option: --opt VALUE, --opt=VALUE as one word, or split at '='.
    if (( ! ended )); then
        local before=${{COMP_WORDS[COMP_CWORD-1]}}
        if [[ $cur == -*=* ]]; then
            opt=${{cur%%=*}} prefix=${{cur%%=*}}= cur=${{cur#*=}}
        elif [[ $cur == = && $before == -* ]]; then
            opt=$before cur=""
        elif (( COMP_CWORD > 2 )) && [[ $before == = ]]; then
            opt=${{COMP_WORDS[COMP_CWORD-2]}}
        elif (( COMP_CWORD > 1 )) && [[ $before == -* ]]; then
            opt=$before
        fi
        if [[ -n $opt ]] && _{prog}_has "$valopts" "$opt"; then
            _{prog}_choices "$path" "$opt"
            if [[ -n $choices ]]; then
                _{prog}_reply "$prefix" -W "$choices" -- "$cur"
            elif _{prog}_has "$fileopts" "$opt"; then
                compopt -o filenames 2>/dev/null
                _{prog}_reply "$prefix" -f -- "$cur"
            fi
            return 0
        fi
    fi
    if [[ $cur == -* ]] && (( ! ended )); then
        _{prog}_reply "" -W "$opts" -- "$cur"
    elif [[ -n $cmds ]]; then
        _{prog}_reply "" -W "$cmds" -- "$cur"
    elif (( filearg )); then
        compopt -o filenames 2>/dev/null
        _{prog}_reply "" -f -- "$cur"
    fi
    return 0
}}

complete -F _{prog} {prog}
"""


# --- zsh ----------------------------------------------------------------------------------------


def _zsh_quote(text: str) -> str:
    """Text inside a single-quoted zsh word."""
    return text.replace("'", "'\\''")


def _zsh_explanation(text: str) -> str:
    """Text inside an _arguments [explanation]."""
    return re.sub(r"([\\\[\]])", r"\\\1", text)


def _zsh_message(text: str) -> str:
    """Text in a colon-separated _arguments field."""
    return re.sub(r"([\\:])", r"\\\1", text)


def _zsh_action(choices: tuple[str, ...], is_path: bool) -> str:
    if choices:
        return "(" + " ".join(re.sub(r"([\\ ()])", r"\\\1", c) for c in choices) + ")"
    return "_files" if is_path else " "


def _zsh_function(cmd: Command) -> str:
    return "_" + "_".join(re.sub(r"\W", "_", part) for part in (PROG, *cmd.path))


def _zsh_option(option: Option) -> str:
    names = option.names
    if option.eager:
        exclude = "(- *)"
    elif option.multiple:
        exclude = "*"
    else:
        exclude = "(" + " ".join(names) + ")" if len(names) > 1 else ""
    spec = f"[{_zsh_explanation(option.help)}]" if option.help else ""
    if option.takes_value:
        action = _zsh_action(option.choices, option.is_path)
        spec += f":{_zsh_message(option.metavar)}:{action}"
    if len(names) == 1:
        return f"'{_zsh_quote(exclude + names[0] + spec)}'"
    prefix = f"'{_zsh_quote(exclude)}'" if exclude else ""
    return f"{prefix}{{{','.join(names)}}}'{_zsh_quote(spec)}'"


def _zsh_argument(argument: Argument, position: int) -> str:
    message = argument.name.lower() + (f" - {argument.help}" if argument.help else "")
    if argument.variadic:
        prefix = "*:"
    elif argument.required:
        prefix = f"{position}:"
    else:
        prefix = f"{position}::"
    action = _zsh_action(argument.choices, argument.is_path)
    return f"'{_zsh_quote(prefix + _zsh_message(message) + ':' + action)}'"


def render_zsh(tree: Command) -> str:
    functions = []
    for cmd in tree.walk():
        specs = [_zsh_option(option) for option in cmd.options]
        name = _zsh_function(cmd)
        if not cmd.is_group:
            specs += [_zsh_argument(a, n) for n, a in enumerate(cmd.arguments, start=1)]
            body = ["  _arguments -s \\", *(f"    {spec} \\" for spec in specs)]
            body[-1] = body[-1].removesuffix(" \\")
            functions.append("\n".join([f"{name}() {{", *body, "}"]))
            continue
        specs += ["': :->command'", "'*:: :->argument'"]
        items = [
            f"    '{_zsh_quote(_zsh_message(sub.path[-1]) + ':' + sub.summary)}'"
            for sub in cmd.subcommands
        ]
        cases = [
            f"        {_zsh_quote(sub.path[-1])}) {_zsh_function(sub)} && ret=0 ;;"
            for sub in cmd.subcommands
        ]
        what = f"{cmd.name} command"
        context = "-".join((PROG, *cmd.path))
        functions.append(
            "\n".join(
                [
                    f"{name}() {{",
                    "  local curcontext=$curcontext state state_descr line ret=1",
                    "  typeset -A opt_args",
                    "  _arguments -C -s \\",
                    *(f"    {spec} \\" for spec in specs[:-1]),
                    f"    {specs[-1]} && ret=0",
                    "  case $state in",
                    "    command)",
                    "      local -a commands=(",
                    *(f"  {item}" for item in items),
                    "      )",
                    f"      _describe -t commands '{_zsh_quote(what)}' commands && ret=0",
                    "      ;;",
                    "    argument)",
                    f"      curcontext=${{curcontext%:*:*}}:{context}-$words[1]:",
                    "      case $words[1] in",
                    *cases,
                    "      esac",
                    "      ;;",
                    "  esac",
                    "  return ret",
                    "}",
                ]
            )
        )
    return "\n".join(
        [
            f"#compdef {PROG}",
            _header("#"),
            "#",
            f"# Put it in a directory of $fpath (as _{PROG}) before compinit runs, or source it.",
            "",
            "\n\n".join(functions),
            "",
            "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then",
            f'  _{PROG} "$@"',
            "else",
            f"  compdef _{PROG} {PROG}",
            "fi",
            "",
        ]
    )


# --- fish ---------------------------------------------------------------------------------------


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish_condition(cmd: Command, for_subcommands: bool) -> str:
    """Where completions for cmd's options (or, with for_subcommands, its subcommands) apply."""
    if not cmd.path:
        return "__fish_use_subcommand"
    parts = [f"__fish_seen_subcommand_from {word}" for word in cmd.path]
    if for_subcommands:
        names = " ".join(sub.path[-1] for sub in cmd.subcommands)
        parts.append(f"not __fish_seen_subcommand_from {names}")
    return "; and ".join(parts)


def _fish_option(option: Option) -> str:
    flags = []
    for name in option.names:
        if name.startswith("--"):
            flags.append(f"-l {name[2:]}")
        elif len(name) == 2:
            flags.append(f"-s {name[1:]}")
        else:
            flags.append(f"-o {name[1:]}")
    if option.takes_value:
        if option.choices:
            flags.append("-x -a " + _fish_quote(" ".join(option.choices)))
        elif option.is_path:
            flags.append("-r -F")
        else:
            flags.append("-x")
    return " ".join(flags)


def render_fish(tree: Command) -> str:
    lines = [
        _header("#"),
        "#",
        f"# Copy it to ~/.config/fish/completions/{PROG}.fish.",
        "",
        f"complete -c {PROG} -f",
    ]
    for cmd in tree.walk():
        lines += ["", f"# {cmd.name}"]
        # A group's own options apply before its subcommand, as click parses them.
        condition = _fish_quote(_fish_condition(cmd, for_subcommands=bool(cmd.subcommands)))
        for option in cmd.options:
            lines.append(
                f"complete -c {PROG} -n {condition} {_fish_option(option)} "
                f"-d {_fish_quote(option.help)}"
            )
        if any(argument.is_path for argument in cmd.arguments):
            lines.append(f"complete -c {PROG} -n {condition} -F")
        for argument in cmd.arguments:
            if argument.choices:
                lines.append(
                    f"complete -c {PROG} -n {condition} "
                    f"-a {_fish_quote(' '.join(argument.choices))}"
                )
        if cmd.subcommands:
            sub_condition = _fish_quote(_fish_condition(cmd, for_subcommands=True))
            for sub in cmd.subcommands:
                lines.append(
                    f"complete -c {PROG} -n {sub_condition} "
                    f"-a {_fish_quote(sub.path[-1])} -d {_fish_quote(sub.summary)}"
                )
    return "\n".join(lines) + "\n"


# --- man page -----------------------------------------------------------------------------------


def roff(text: str) -> str:
    """Text safe as a roff input line: backslashes, option hyphens, non-ASCII, a leading dot."""
    text = text.replace("\\", "\\e")
    # A hyphen that starts a word is an option's or a minus: \- keeps it an ASCII '-' when
    # rendered and copy-pasted. Hyphens inside words (long-term) stay hyphens.
    text = re.sub(r"(?<![\w\\])-+", lambda m: "\\-" * len(m.group()), text)
    text = "".join(c if ord(c) < 128 else f"\\[u{ord(c):04X}]" for c in text)
    return "\\&" + text if text.startswith((".", "'")) else text


def _roff_arg(text: str) -> str:
    """A quoted macro argument."""
    return '"' + roff(text).removeprefix("\\&").replace('"', "\\(dq") + '"'


def _bold(text: str) -> str:
    return f"\\fB{roff(text)}\\fR"


def _italic(text: str) -> str:
    return f"\\fI{roff(text)}\\fR"


def _man_usage(cmd: Command) -> str:
    pieces = [_bold(cmd.name)]
    for word, optional, repeated in cmd.usage():
        piece = _italic(word.strip("[]."))
        piece = f"[{piece}]" if optional else piece
        pieces.append(piece + ("..." if repeated else ""))
    return " ".join(pieces)


def _man_paragraphs(text: str) -> list[str]:
    lines: list[str] = []
    for paragraph in text.split("\n\n"):
        if paragraph.strip():
            lines += [".PP"] if lines else []
            lines.append(roff(" ".join(paragraph.split())))
    return lines


def _man_option(option: Option) -> list[str]:
    on = [name for name in option.names if name not in option.negations]
    head = ", ".join(_bold(name) for name in on)
    if option.negations:
        head += " / " + ", ".join(_bold(name) for name in option.negations)
    if option.takes_value:
        head += " " + _italic(option.metavar)
    notes = [option.help]
    if option.multiple and "repeat" not in option.help.lower():
        notes.append("Repeatable.")
    notes += [option.bounds]
    if option.default:
        notes.append(f"Default: {option.default}.")
    if option.envvar:
        notes.append(f"Environment: {option.envvar}.")
    return [".TP", head, roff(" ".join(note for note in notes if note))]


def _man_argument(argument: Argument) -> list[str]:
    notes = [argument.help, "" if argument.required else "Optional."]
    if argument.choices:
        notes.append("One of: " + ", ".join(argument.choices) + ".")
    head = _italic(argument.name) + ("..." if argument.variadic else "")
    return [".TP", head, roff(" ".join(note for note in notes if note))]


def _exit_statuses() -> dict[int, list[str]]:
    from memctl import errors

    statuses: dict[int, list[str]] = {}
    for value in vars(errors).values():
        if isinstance(value, type) and issubclass(value, errors.MemctlError):
            doc = inspect.getdoc(value) or value.__name__
            if value is errors.MemctlError:
                doc = "Any other error memctl reports."
            statuses.setdefault(value.exit_code, []).append(" ".join(doc.split()))
    for code, text in OTHER_EXITS.items():
        statuses.setdefault(code, []).append(text)
    return dict(sorted(statuses.items()))


def _environment() -> list[tuple[str, str]]:
    from memctl import config

    missing = set(config.ENV_NOT_KEYS) - set(OTHER_ENV)
    if missing:
        raise SystemExit(f"gen_docs.py: describe {', '.join(sorted(missing))} in OTHER_ENV")
    entries = list(OTHER_ENV.items())
    for key in config.KEYS:
        if key.tuning:
            continue
        default = "empty" if key.default == "" else str(key.default)
        entries.append(
            (
                key.env,
                f"Sets the config key {key.name}: {key.doc} "
                f"Allowed: {key.allowed()}; default: {default}.",
            )
        )
    tuning = ", ".join(key.env for key in config.KEYS if key.tuning)
    entries.append(
        (
            "MEMCTL_<TUNING KEY>",
            "Sets a tuning key, a stage's constant (the Tuning table of docs/configuration.md "
            f"says what each does, its default and what is allowed): {tuning}.",
        )
    )
    return entries


def _files() -> list[tuple[str, str]]:
    from memctl import config

    home = config.Settings(home=Path("$MEMCTL_HOME"), cwd=Path("."), values={})
    return [
        (str(home.db_path), "The database: memories, their vectors, relations and events."),
        (str(home.home_config), "The home config file (`memctl config init` writes one)."),
        (
            str(config.PROJECT_CONFIG),
            "The project config file, in the git work tree's root "
            "(else the current directory); it overrides the home one.",
        ),
    ]


def render_man(tree: Command) -> str:
    from memctl import __version__

    name, _, rest = tree.summary.partition(":")
    whatis = rest.strip().rstrip(".") if name.strip() == PROG else tree.summary.rstrip(".")
    helps = [o for o in tree.options if o.is_help]
    out = [
        _header('.\\"'),
        f'.TH {PROG.upper()} 1 "" {_roff_arg(f"{PROG} {__version__}")} "User Commands"',
        ".SH NAME",
        f"{PROG} \\- {roff(whatis)}",
        ".SH SYNOPSIS",
        _man_usage(tree),
        ".SH DESCRIPTION",
        *_man_paragraphs(tree.help),
        ".PP",
        f"Run {_bold(PROG)} {_italic('COMMAND')} {_bold('--help')} for a command's usage.",
        ".SH GLOBAL OPTIONS",
        roff(f"Global options come before the command: {PROG} [OPTIONS] COMMAND."),
    ]
    for option in tree.options:
        out += _man_option(option)
    out += [".SH COMMANDS"]
    if helps:
        out.append(
            roff("Every command also accepts " + ", ".join(helps[0].names) + " to print its usage.")
        )
    for cmd in tree.walk():
        if not cmd.path:
            continue
        out += [f".SS {_roff_arg(cmd.name)}", _man_usage(cmd), ".PP", *_man_paragraphs(cmd.help)]
        if cmd.subcommands:
            out += [
                ".PP",
                roff("Commands: " + ", ".join(s.path[-1] for s in cmd.subcommands) + "."),
            ]
        for argument in cmd.arguments:
            out += _man_argument(argument)
        for option in cmd.options:
            if not option.is_help:
                out += _man_option(option)
    out += [".SH ENVIRONMENT"]
    for var, text in _environment():
        out += [".TP", _bold(var), roff(text)]
    out += [".SH FILES"]
    for path, text in _files():
        out += [".TP", _italic(path), roff(text)]
    out += [".SH EXIT STATUS"]
    for code, texts in _exit_statuses().items():
        out += [".TP", _bold(str(code)), roff(" ".join(texts))]
    out += [
        ".SH SEE ALSO",
        roff(f"{PROG} --help, {PROG} COMMAND --help, and the README.md and docs/ of memctl."),
    ]
    return "\n".join(out) + "\n"


# --- all of it ----------------------------------------------------------------------------------


def _header(comment: str) -> str:
    return (
        f"{comment} Generated by scripts/gen_docs.py from the {PROG} command tree; "
        f"do not edit.\n{comment} Regenerate with: {REGENERATE}"
    )


RENDERERS: dict[str, Callable[[Command], str]] = {
    BASH: render_bash,
    ZSH: render_zsh,
    FISH: render_fish,
    MAN: render_man,
}


CONFIG_DOC = "docs/configuration.md"
KEYS_START, KEYS_END = "<!-- config-keys:start -->", "<!-- config-keys:end -->"
TUNING_START, TUNING_END = "<!-- tuning-keys:start -->", "<!-- tuning-keys:end -->"
MCP_DOC = "docs/mcp.md"
TOOLS_START, TOOLS_END = "<!-- mcp-tools:start -->", "<!-- mcp-tools:end -->"


def replace_between(path: str, text: str, start: str, end: str, rows: list[str]) -> str:
    """``text`` with the lines between its ``start`` and ``end`` markers made ``rows``."""
    head, found_start, rest = text.partition(start)
    _, found_end, tail = rest.partition(end)
    if not found_start or not found_end:
        raise SystemExit(f"{path} lacks the {start} ... {end} markers")
    return f"{head}{start}\n" + "\n".join(rows) + f"\n{end}{tail}"


def render_config_doc(text: str) -> str:
    """docs/configuration.md with its two key tables, the settings and the tuning (each with
    its source, memctl.config.sources), made anew from memctl.config.KEYS."""
    from memctl.config import KEYS
    from memctl.config.sources import SOURCES

    def rows(keys: list[Any], sources: dict[str, str] | None = None) -> list[str]:
        columns = ["key", "default", "allowed", "meaning", *(["source"] if sources else [])]
        table = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
        for key in keys:
            default = f"`{key.default}`" if key.default != "" else "(empty)"
            cells = [f"`{key.name}`", default, key.allowed(), key.doc]
            if sources is not None:
                if key.name not in sources:
                    raise SystemExit(
                        f"tuning key {key.name} has no source: add one to memctl/config/sources.py"
                    )
                cells.append(sources[key.name])
            table.append("| " + " | ".join(cells) + " |")
        return table

    text = replace_between(
        CONFIG_DOC, text, KEYS_START, KEYS_END, rows([k for k in KEYS if not k.tuning])
    )
    tuning = [k for k in KEYS if k.tuning]
    return replace_between(CONFIG_DOC, text, TUNING_START, TUNING_END, rows(tuning, SOURCES))


def mcp_listing() -> tuple[list[Any], list[Any]]:
    """The MCP server's tools and resources, as a client lists them (no store is opened)."""
    import tempfile

    import anyio

    from memctl.config.settings import load_settings
    from memctl.context import Context
    from memctl.integrations.mcp_server import build

    async def listing(server: Any) -> tuple[list[Any], list[Any]]:
        return list(await server.list_tools()), list(await server.list_resources())

    with tempfile.TemporaryDirectory() as home:
        settings = load_settings(home=Path(home), environ={}, overrides={"embedder": "hash"})
        with Context(settings) as ctx:
            return anyio.run(listing, build(ctx))


def schema_type(schema: dict[str, Any]) -> str:
    """A JSON-schema property's type in words: "integer", "string or null"."""
    if "type" in schema:
        return str(schema["type"])
    return " or ".join(schema_type(option) for option in schema.get("anyOf", []))


def render_mcp_doc(text: str) -> str:
    """docs/mcp.md with its tool and resource tables made anew from the server's listing."""
    tools, resources = mcp_listing()
    rows = ["| tool | parameters | what it does |", "| --- | --- | --- |"]
    for tool in tools:
        schema = tool.input_schema
        required = set(schema.get("required", []))
        parameters = [
            f"`{name}` ({schema_type(prop)}, "
            + ("required)" if name in required else f"default `{json.dumps(prop.get('default'))}`)")
            for name, prop in schema.get("properties", {}).items()
        ]
        summary = " ".join((tool.description or "").split("\n\n")[0].split()).replace("|", "\\|")
        rows.append(f"| `{tool.name}` | {', '.join(parameters) or '(none)'} | {summary} |")
    rows += ["", "| resource | what it holds |", "| --- | --- |"]
    rows += [f"| `{resource.uri}` | {resource.description} |" for resource in resources]
    return replace_between(MCP_DOC, text, TOOLS_START, TOOLS_END, rows)


# The hand-written documents with generated sections, and what makes each section anew.
DOCS_WITH_TABLES: dict[str, Callable[[str], str]] = {
    CONFIG_DOC: render_config_doc,
    MCP_DOC: render_mcp_doc,
}


VALUES = "memctl/config/values.py"


def render_values() -> str:
    """The typed view of every config key that mypy checks ``settings.<attr>`` against."""
    from memctl.config import KEYS

    lines = [
        '"""Every config key as a typed attribute of Settings, for mypy.',
        "",
        "Generated by scripts/gen_docs.py from memctl.config.KEYS; do not edit.",
        f"Regenerate with: {REGENERATE}",
        '"""',
        "",
        "from dataclasses import dataclass",
        "",
        "",
        "class Values:",
        '    """The value of each key, by its name with dots as underscores."""',
        "",
    ]
    lines += [f"    {key.attr}: {type(key.default).__name__}" for key in KEYS]
    lines += [
        "",
        "",
        "@dataclass(frozen=True)",
        "class RecallValues:",
        '    """The `recall.*` keys without their prefix: the fields of one recall\'s Params."""',
        "",
    ]
    lines += [
        f"    {key.name.removeprefix('recall.')}: {type(key.default).__name__}"
        for key in KEYS
        if key.name.startswith("recall.")
    ]
    return "\n".join(lines) + "\n"


def render_all(app: Any = None) -> dict[str, str]:
    """Every generated file: path relative to the repository -> its content."""
    tree = command_tree(app)
    files = {path: RENDERERS[path](tree) for path in OUTPUTS}
    for path, render in DOCS_WITH_TABLES.items():
        files[path] = render((ROOT / path).read_text(encoding="utf-8"))
    files[VALUES] = render_values()
    return files


def stale_files(root: Path = ROOT) -> list[str]:
    """The generated files that are missing or differ from what render_all() makes."""
    stale = []
    for path, content in render_all().items():
        target = root / path
        if not target.is_file() or target.read_text(encoding="utf-8") != content:
            stale.append(path)
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when a generated file is stale; write nothing"
    )
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files()
        for path in stale:
            print(f"stale: {path}")
        if stale:
            print(f"run: {REGENERATE}")
            return 1
        print("generated docs are up to date")
        return 0
    for path, content in render_all().items():
        target = ROOT / path
        if target.is_file() and target.read_text(encoding="utf-8") == content:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("w", encoding="utf-8", newline="\n") as stream:
            stream.write(content)
        print(f"wrote {path}")
    return 0


if str(ROOT) not in sys.path:  # run as a script: import memctl from this checkout
    sys.path.insert(0, str(ROOT))

if __name__ == "__main__":
    sys.exit(main())
