"""``memctl doctor``: is this machine set up? One check a line, each with its fix.

Every check reads (a missing store is reported, not created). A check
is ``ok``, ``warn`` (works, but something is missing or unused) or ``fail`` (something
a person must fix); ``memctl doctor`` exits non-zero when one fails.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from memctl.clients.codex import TRUST_FIX
from memctl.config import Settings
from memctl.config.urls import shown_url
from memctl.context import Context
from memctl.errors import MemctlError
from memctl.model import counted

OK, WARN, FAIL = "ok", "warn", "fail"
# Files memctl makes are private to their owner (docs/architecture.md, "Store"): no group
# or other bits.
PRIVATE_BITS = stat.S_IRWXG | stat.S_IRWXO


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # ok, warn or fail
    detail: str  # what was found
    fix: str = ""  # what to run when it is not ok


def doctor(
    ctx: Context, captured: dict[str, str] | None = None, quick_check: bool = True
) -> list[Check]:
    """Every check, in the order a person fixes them. ``captured``: when memctl last
    stored a session of each client (a transcript changed since is named as not captured).
    Without ``quick_check`` the store is opened but not read through (SQLite's quick check
    takes seconds on a large store: the viewer runs it when asked)."""
    settings = ctx.settings
    return [
        model_check(settings),
        store_check(ctx, quick_check),
        *forgotten_check(ctx),
        *hook_checks(settings.home, captured),
        programs_check(settings.home),
        *capture_checks(settings.home),
        resident_check(settings),
        *identity_checks(settings),
        *project_config_check(settings),
        llm_check(settings),
        sync_check(settings),
        modes_check(settings.home),
    ]


def model_check(settings: Settings) -> Check:
    """The configured embedder can embed: the local model's files are there, or Ollama
    answers; the hash embedder needs nothing."""
    if settings.embedder == "hash":
        return Check(
            "model", WARN, "embedder hash: words only", "`memctl config set embedder local`"
        )
    if settings.embedder == "ollama":
        from memctl.llm.probe import reachable

        host = shown_url(settings.ollama_host)
        if reachable(settings.ollama_host, settings.ollama_connect_timeout, settings.home, 0):
            return Check("model", OK, f"Ollama at {host} ({settings.ollama_embed_model})")
        return Check("model", FAIL, f"no Ollama at {host}", "`ollama serve`, or set embedder local")
    from memctl.embed.model_files import resolve_model_dir

    try:
        found = resolve_model_dir(settings.embed_model_path)
    except MemctlError as exc:
        return Check("model", FAIL, str(exc), "`memctl model install`")
    return Check("model", OK, f"all-MiniLM-L6-v2 in {found}")


READ_ONLY_FIX = "copy its folder where it can be written and point MEMCTL_HOME there"


def store_check(ctx: Context, quick_check: bool = True) -> Check:
    """The database opens, passes SQLite's quick check (unless not asked for), and holds
    vectors of the configured model."""
    path = ctx.settings.db_path
    if not path.exists():
        return Check("store", WARN, f"no store yet at {path}", "`memctl import` or `remember`")
    from memctl.store.maintenance import integrity_problems

    try:
        problems = integrity_problems(ctx.db, full=False) if quick_check else []
        recorded = ctx.db.vector_model()
    except MemctlError as exc:
        return Check("store", FAIL, f"{path}: {exc}", "`memctl restore BACKUP`")
    if problems:
        return Check("store", FAIL, f"{path}: {problems[0]}", "`memctl restore BACKUP`")
    configured = {"local": "local:all-MiniLM-L6-v2", "hash": "test:hash"}.get(
        ctx.settings.embedder, f"ollama:{ctx.settings.ollama_embed_model}"
    )
    if recorded is not None and recorded[0] != configured:
        return Check(
            "store", FAIL, f"vectors by {recorded[0]}, embedder is {configured}", "`memctl reembed`"
        )
    if ctx.db.frozen:  # opened read-only: it is read, nothing can be written
        said = f"{path} is on a read-only disk: read as it is, every change refused"
        return Check("store", WARN, said, READ_ONLY_FIX)
    if not quick_check:
        return Check("store", OK, f"{path} opens (quick check not run)")
    return Check("store", OK, f"{path} opens and passes the quick check")


def forgotten_check(ctx: Context) -> list[Check]:
    """A warning while the store's file may still hold forgotten text: a forget's
    compaction that a reader kept from emptying the WAL (store/forget.py ``compact``)."""
    if not ctx.settings.db_path.exists():
        return []
    from memctl.store.forget import forgotten_in_file

    try:
        since = forgotten_in_file(ctx.db)
    except MemctlError:
        return []  # the store check says why it does not open
    if since is None:
        return []
    return [
        Check(
            "forgotten",
            WARN,
            f"the store's file may still hold text forgotten at {since[:19]}: another process "
            "was reading it",
            "`memctl maintain --only upkeep` once nothing else reads the store",
        )
    ]


def hook_checks(home: Path, captured: dict[str, str] | None = None) -> list[Check]:
    """Per assistant found: its hooks installed, trusted (Codex), when they last fired, and
    whether a transcript changed after memctl last captured one of its sessions."""
    from memctl.integrations import setup

    checks = []
    for item in setup.status(setup.where(False, Path.cwd()), home, captured):
        name = f"hooks {item.client}"
        if not item.found.present:
            continue
        if not item.hooks:
            checks.append(Check(name, WARN, "not installed", f"`memctl install {item.client}`"))
        elif item.untrusted:
            skipped = f"not trusted: {', '.join(item.untrusted)} (Codex skips it)"
            checks.append(Check(name, WARN, skipped, TRUST_FIX))
        elif not item.fired:
            checks.append(Check(name, WARN, "installed, never fired", "start a session"))
        else:
            last = max(item.fired.values())
            checks.append(Check(name, OK, f"installed, last fired {setup.age(last)}"))
        checks += [Check(name, WARN, problem) for problem in item.problems]
    return checks or [Check("hooks", WARN, "no assistant found", "install one, then `memctl init`")]


# The program a hook, MCP entry or launcher memctl wrote runs: its absolute path, not
# one inside a word or after "~" (the man page's "~/.local/bin/memctl" is prose, not
# the path "/.local/bin/memctl")
PROGRAM = re.compile(r"""(?<![\w~.])(/[^\s"',;\\]+/bin/(?:memctl|python[0-9.]*))(?=[\s"',;\\]|$)""")


PROSE = (".md", ".mdc")  # the instruction files memctl writes a block into


def programs_check(home: Path) -> Check:
    """Every program named in a file memctl wrote (hooks, MCP entries, the launcher) still
    exists: a clone moved or deleted breaks every assistant without a word."""
    from memctl.clients.files import runs

    gone: dict[str, str] = {}
    for _run, manifest in runs(home):
        for entry in manifest.get("entries", []):
            path = Path(entry["path"])
            if entry.get("undone") or path.suffix in PROSE or not path.is_file():
                continue  # instructions are prose: a path there runs nothing
            text = path.read_text(encoding="utf-8", errors="replace")
            for program in PROGRAM.findall(text):
                if not Path(program).exists():
                    gone.setdefault(program, str(path))
    if not gone:
        return Check("programs", OK, "every hook and MCP entry runs a program that exists")
    program, where = next(iter(gone.items()))
    return Check(
        "programs",
        FAIL,
        f"{where} runs {program}, which is gone (moved or deleted?)"
        + (f"; {len(gone) - 1} more" if len(gone) > 1 else ""),
        "from the clone's new place: `.venv/bin/memctl init` and `.venv/bin/memctl install "
        "CLIENT` again (and `install completions`)",
    )


# A capture still running this long after its hook began was stopped (killed, or out of
# room): a hook's capture is done in well under a minute or handed to the worker.
CAPTURE_GRACE_SECONDS = 600


def capture_checks(home: Path) -> list[Check]:
    """Transcripts a capture hook marked pending that were never stored whole (a full disk,
    a killed hook), the newest named (none: no check); the next hook or `memctl maintain`
    captures them."""
    from memctl.ingest.pending import uncaptured

    waiting = uncaptured(home, CAPTURE_GRACE_SECONDS)
    if not waiting:
        return []
    first = waiting[0]
    why = f" ({first.error})" if first.error else ""
    more = f" and {len(waiting) - 1} more" if len(waiting) > 1 else ""
    return [
        Check(
            "capture",
            WARN,
            f"not captured yet: {first.path}{why}{more}",
            "free disk space; the next hook or `memctl maintain` captures it",
        )
    ]


def project_config_check(settings: Settings) -> list[Check]:
    """What of a project's config.yaml was left out: the keys only the person sets, or
    the whole file when another user owns it."""
    if not settings.refused_note:
        return []
    fix = f"remove them from {settings.project_config}"
    return [Check("config", WARN, settings.refused_note, fix)]


def identity_checks(settings: Settings) -> list[Check]:
    """Each identity file that is there (``retrieve.identity``), and what of it was left
    out or redacted: a link, a FIFO or a device is never read."""
    from memctl.retrieve.identity import identity_paths, read_identity

    checks = []
    for path in identity_paths(settings.home, settings.cwd):
        found = read_identity(path)
        if found is None:
            continue
        if not found.text:
            fix = f"make {path} a regular file of your own, or remove it"
            checks.append(Check("identity", WARN, found.note, fix))
        elif found.note:
            checks.append(Check("identity", WARN, found.note, f"edit {path}"))
        else:
            checks.append(Check("identity", OK, f"{path} is read at session start"))
    return checks


def resident_check(settings: Settings) -> Check:
    """The resident recall process (``recall.resident``): whether one serves this home.
    Not running is fine: the next session start or recall starts it."""
    if not settings.recall_resident:
        return Check("resident", OK, "off: each recall and hook loads the model itself")
    from memctl.integrations import resident

    answer = resident.tell(settings.home, "status") or {}
    if "pid" in answer:
        served = counted(answer.get("served", 0), "request")
        return Check("resident", OK, f"process {answer['pid']} serves, {served} so far")
    if "stale" in answer:
        return Check(
            "resident",
            WARN,
            "one of another memctl was running: told to stop",
            "`memctl daemon start`",
        )
    problem = resident.unsafe(settings.home)
    if problem is not None:
        return Check(
            "resident",
            WARN,
            f"not started: {problem}",
            f"remove {settings.home / resident.DIRECTORY} (memctl makes its own)",
        )
    pid = resident.loading(settings.home)
    if pid is not None:
        return Check("resident", OK, f"process {pid} is starting (loading the model)")
    return Check("resident", OK, "not running: the next session start or recall starts it")


def llm_check(settings: Settings) -> Check:
    """The LLM answers, when one is configured (``llm: none`` distils by rules)."""
    if settings.llm == "none":
        return Check("llm", OK, "none: the rules distil")
    from memctl.llm.headless import PROGRAMS

    if settings.llm in PROGRAMS:  # the assistant's own CLI, run headless by the worker
        import shutil

        program = PROGRAMS[settings.llm]
        if shutil.which(program):
            return Check("llm", OK, f"{settings.llm}: `{program}` headless (your model quota)")
        return Check("llm", FAIL, f"{program} is not on PATH", f"install {settings.llm}")
    from memctl.llm import setup_hint
    from memctl.llm.probe import reachable

    host = shown_url(settings.ollama_host)
    if reachable(settings.ollama_host, settings.ollama_connect_timeout, settings.home, 0):
        return Check("llm", OK, f"Ollama at {host} ({settings.ollama_chat_model})")
    fix = setup_hint(settings.ollama_chat_model)
    if settings.llm == "auto" and (found := _headless_found()):  # as `memctl init` offers it
        fix = f"`memctl config set llm {found}` (its own model: your quota), or {fix}"
    status = WARN if settings.llm == "auto" else FAIL
    return Check("llm", status, f"no Ollama at {host}", fix)


def _headless_found() -> str | None:
    """The first assistant whose CLI on PATH could distil headless (``llm.headless``)."""
    import shutil

    from memctl.llm.headless import PROGRAMS

    return next((name for name, program in PROGRAMS.items() if shutil.which(program)), None)


def sync_check(settings: Settings) -> Check:
    """The sync remote answers, when one is configured."""
    if not settings.sync_remote:
        return Check("sync", OK, "off (no sync.remote)")
    from memctl.sync.repo import unreachable

    why = unreachable(settings.sync_remote, settings.sync_git_timeout)
    if why is None:
        return Check("sync", OK, f"{shown_url(settings.sync_remote)} answers")
    return Check("sync", FAIL, why, "check the URL and your access (`git ls-remote URL`)")


def modes_check(home: Path) -> Check:
    """Every file and directory under the data directory is private to its owner."""
    if not home.exists():
        return Check("modes", OK, f"no data directory yet ({home})")
    loose = [
        path
        for root, dirs, names in os.walk(home)
        for path in [Path(root), *(Path(root) / n for n in names)]
        if path.exists() and not path.is_symlink() and path.stat().st_mode & PRIVATE_BITS
    ]
    if not loose:
        return Check("modes", OK, f"everything under {home} is private (0600 / 0700)")
    return Check(
        "modes",
        FAIL,
        f"{len(set(loose))} of its files and directories others can read, e.g. {loose[0]}",
        f"`chmod -R go-rwx {home}`",
    )
