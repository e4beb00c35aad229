"""Taking text out of every copy memctl keeps, for a forget (``maintain.forgetting``) and a
redact (``maintain.redaction``): a change applied in one transaction to the store, then to
its file (SQLite overwrites deleted content with zeros: ``secure_delete``; the full-text
indexes merge, as a deleted row's terms linger in old segments until then; the vector
indexes are made again without the old vectors; ``VACUUM`` rewrites the file without free
pages and the WAL is emptied into it; when a reader keeps the WAL, ``maintain`` does it
later: ``store.forget.compact``), then to each backup ``maintain`` made, rewritten
the same way; the memories changed leave the work tree of the sync clone and any commit
of it not pushed yet (the next sync writes their tombstones or new text), and memctl's
logs are rewritten without the text.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memctl.config.files import open_private, write_private
from memctl.context import Context
from memctl.home import INJECTED, hook_file, injected_file
from memctl.maintain.backup import REWRITING, backups, leftovers, restoring, rewritten
from memctl.memories.operations import edit
from memctl.model import Memory
from memctl.store import forget as erase
from memctl.store.database import Database
from memctl.store.sync import TEXT_WITHDRAWN, files_of
from memctl.store.touches import apply_spooled
from memctl.store.writes import Writer

# The columns a forget and ``redact`` also rewrite: the messages (their texts and speakers),
# titles, tags, sources (a transcript's path) and directories of every session, and the
# paths of imported files.
EVERY_SESSION = (
    "messages.content",
    "messages.speaker",
    "sessions.title",
    "sessions.tags",
    "sessions.source",
    "sessions.cwd",
    "imports.path",
)
# What an update that takes text out of a memory logs: its next file says it was redacted,
# so the machines that pull it take the old text out too (``sync.outgoing``).
WITHDRAWS = {TEXT_WITHDRAWN: True}

Vectors = dict[str, bytes]  # memory id -> the vector of its new text, embedded beforehand


@dataclass
class Forgotten:
    """What a forget removed, and where."""

    target: str
    messages: int = 0
    memories: list[str] = field(default_factory=list)
    quotes: dict[str, int] = field(default_factory=dict)
    backups: list[str] = field(default_factory=list)  # rewritten
    wal_emptied: bool = True
    shared: list[str] = field(default_factory=list)  # of memories: those a sync published
    reverted: list[str] = field(default_factory=list)  # memories it had been merged into
    revived: list[str] = field(default_factory=list)  # memories it alone had superseded
    spooled: int = 0  # transcripts waiting in the spool, rewritten
    identity: list[str] = field(default_factory=list)  # identity files rewritten
    identity_left: list[str] = field(default_factory=list)  # a project's, holding it still
    logs: int = 0  # memctl's logs, rewritten (a path holding the value)
    pending: int = 0  # transcripts' pending marks removed (their path or session went)
    copies: dict[str, int] = field(default_factory=dict)  # other sessions -> messages copied
    copies_forgotten: bool = False  # those copied messages were forgotten too
    kept: dict[str, str] = field(default_factory=dict)  # of its memories: id -> a session
    # stating it too (``store.forget.restated``), now its source
    reworded: list[str] = field(default_factory=list)  # of those kept: now in its words
    # memories that lost a triple quoting the text (a predicate): their files go out again
    restated: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "messages": self.messages,
            "memories": self.memories,
            "quotes": self.quotes,
            "backups_rewritten": self.backups,
            "wal_emptied": self.wal_emptied,
            "shared": self.shared,
            "reverted": self.reverted,
            "revived": self.revived,
            "spooled_rewritten": self.spooled,
            "identity_rewritten": self.identity,
            "identity_left": self.identity_left,
            "logs_rewritten": self.logs,
            "pending_dropped": self.pending,
            "copies": self.copies,
            "copies_forgotten": self.copies_forgotten,
            "kept": self.kept,
            "reworded": self.reworded,
            "restated": self.restated,
        }

    def add(self, other: Forgotten) -> None:
        """Count what another target's forget in the same run took out."""
        self.messages += other.messages
        self.memories = sorted({*self.memories, *other.memories})
        for name, count in other.quotes.items():
            self.quotes[name] = self.quotes.get(name, 0) + count
        self.reverted = sorted({*self.reverted, *other.reverted})
        self.revived = sorted({*self.revived, *other.revived})
        self.kept = {k: v for k, v in {**self.kept, **other.kept}.items() if k not in self.memories}
        self.reworded = sorted({*self.reworded, *other.reworded} & set(self.kept))

    @property
    def took_text(self) -> bool:
        """Whether it took text out of the store: a message, a memory, a quote (a forget of
        what was forgotten already takes none)."""
        return bool(
            self.messages
            or self.memories
            or self.reverted
            or self.reworded
            or any(self.quotes.values())
        )

    def file_note(self) -> str:
        """What a reader kept in the file, said when it did ("" when the WAL was emptied):
        the next maintain finishes the compaction (``upkeep.compact_forgotten``)."""
        if self.wal_emptied:
            return ""
        return (
            "another process is reading the store, so its WAL still holds old pages until "
            "the next `memctl maintain`"
        )

    def history_note(self) -> str:
        """What a forget cannot reach, said when it matters: a memory a sync published
        leaves its old text in the repository's git history ("" when none was shared)."""
        if not self.shared:
            return ""
        count = len(self.shared)
        return (
            f"{count} of these memories {'was' if count == 1 else 'were'} shared through sync: "
            "the next `memctl sync` replaces the text, but the repository's git history (the "
            "remote's and the clone in the data directory) keeps it; rotate a secret it held"
        )


Apply = Callable[[Database, Forgotten, "Context | None"], None]


def _indexes_rebuilt(db: Database, memories: bool) -> None:
    """The vector indexes made again now, so their files keep no copy of a forgotten
    vector: the messages' (a removed message vector marks it rewritten, m018), the stored
    questions' and, when memories were deleted or rewritten, the memories' (a replaced or
    removed vector of either is otherwise kept, marked dead, in its segment until a
    compaction)."""
    from memctl.store.message_vectors import message_vector_index
    from memctl.store.questions import all_questions_rewritten
    from memctl.store.vector_index import QUESTION_VECTORS, vector_index

    with db.atomic():
        all_questions_rewritten(db)
        if memories:
            db.note_vector_write(everything=True)
    if memories:
        vector_index(db)
    message_vector_index(db)
    vector_index(db, QUESTION_VECTORS)


def apply_everywhere(ctx: Context, done: Forgotten, apply: Apply) -> None:
    """``apply`` to the store, then to its file (zeroed, merged, compacted, the WAL
    emptied), then to every backup; never while a sync runs (``_no_sync``)."""
    with _no_sync(ctx):
        _apply_to_every_copy(ctx, done, apply)


@contextlib.contextmanager
def _no_sync(ctx: Context) -> Iterator[None]:
    """The sync lock, when there is a sync clone: a sync that read a memory before the
    forget would otherwise write its file, and push it, after (and the forget could not
    say so). A SyncError when a sync holds it past ``sync.lock_wait``: nothing forgotten."""
    from memctl.sync.pipeline import clone_path, lock_path  # sync's YAML and git: only here

    if not (clone_path(ctx.settings) / ".git").exists():
        yield
        return
    from memctl.sync.lock import sync_lock

    with sync_lock(lock_path(ctx.settings), ctx.settings.sync_lock_wait):
        yield


def _apply_to_every_copy(ctx: Context, done: Forgotten, apply: Apply) -> None:
    """``apply`` to the store and its file, then to each backup, rewritten in place."""
    apply_spooled(ctx.db)  # recall's waiting touches counted first: none outlives the forget
    erase.mark_forgotten_in_file(ctx.db)  # until compacted: a later maintain finishes it
    _erased(ctx.db, lambda db: apply(db, done, ctx))
    _indexes_rebuilt(ctx.db, bool(done.memories or done.reverted or done.reworded))
    changed = [*done.memories, *done.reverted, *done.reworded, *done.restated]
    done.shared = _out_of_the_clone(ctx, changed)
    done.wal_emptied = erase.compact(ctx.db)
    _leftovers_removed(ctx)

    def erased(backup: Database) -> None:
        _erased(backup, lambda db: apply(db, Forgotten(""), None))

    for path in backups(ctx.settings):
        rewritten(ctx.settings, path, erased).replace(path)
        done.backups.append(path.name)


def _leftovers_removed(ctx: Context) -> None:
    """Remove the copies a killed backup, forget or restore left; a restore under way (it
    holds the maintain lock) keeps the copy it is making."""
    from memctl.maintain.lock import maintain_lock

    with maintain_lock(ctx.settings) as holder:
        for left in leftovers(ctx.settings, REWRITING):
            if holder is None or left != restoring(ctx.settings):
                left.unlink(missing_ok=True)


def _out_of_the_clone(ctx: Context, memory_ids: list[str]) -> list[str]:
    """Remove the memories' files from the sync clone in the data directory (the next sync
    writes their tombstones or new text: ``sync.outgoing``): from its work tree, and, when
    a commit not pushed yet wrote one, from its history too (those commits are dropped with
    every copy git keeps: the next sync makes the other files again). The memories whose
    old text the remote's history keeps (a push carried it)."""
    from memctl.sync.pipeline import clone_path  # sync's YAML and git: only here
    from memctl.sync.repo import Clone, clone_errors

    root = clone_path(ctx.settings)
    shared = files_of(ctx.db, memory_ids)
    paths = sorted({file.path for files in shared.values() for file in files})
    if not paths or not (root / ".git").exists():
        return sorted(shared)
    pushed = set(shared)  # what git cannot tell (a broken clone) is said to be in its history
    errors = clone_errors()
    try:
        clone = Clone.open(root, ctx.settings.sync_git_timeout)
        if clone.unpushed_touch(paths):
            clone.forget_unpushed()
        pushed = {m for m, files in shared.items() if any(clone.pushed(f.path) for f in files)}
    except errors:
        pass
    for path in paths:
        (root / path).unlink(missing_ok=True)
    return sorted(pushed)


def _erased(db: Database, apply: Callable[[Database], None]) -> None:
    """``apply`` while SQLite zeroes what is deleted, then the full-text indexes merged (a
    deleted row's terms linger in old segments until they are) and the words' message
    counts taken again (a word is a key there)."""
    erase.secure_delete(db, True)
    try:
        apply(db)
        erase.merge_indexes(db)
        erase.recount_message_terms(db)
    finally:
        erase.secure_delete(db, False)


@contextlib.contextmanager
def edit_run(
    db: Database, live: Context | None, verb: str, memories: list[Memory], what: str = ""
) -> Any:
    """The live store's edit run (``memctl runs`` lists it, naming ``what``: never text),
    or a bare writer for a backup."""
    if live is None:
        yield Writer(db)
        return
    with edit(live, verb, memories, what) as writer:
        yield writer


def drop_started(home: Path, gone: Callable[[str], bool]) -> None:
    """Take the sessions ``gone`` picks out of the clients' records of the sessions they
    started (``hooks/started/<pid>``: ``hooks_state.add_started``), which would otherwise
    keep their ids for ``INJECTED_DAYS``; a record left empty goes."""
    folder = hook_file(home, "started", "pid").parent
    for record in sorted(folder.iterdir()) if folder.is_dir() else []:
        started = record.read_text("utf-8").split()
        kept = [each for each in started if not gone(each)]
        if kept == started:
            continue
        if kept:
            write_private(record, "".join(f"{each}\n" for each in kept))
        else:
            record.unlink(missing_ok=True)


def drop_injected(home: Path, values: list[str]) -> None:
    """Remove the hooks' records of the memories a session was given whose name holds one
    of ``values`` (``hooks/injected/session.<id>``: a session id its client chose, in the
    file's name, made safe as ``hook_file`` makes it), and take those sessions out of the
    records of the sessions a client started; such a session is given its memories again."""
    folder = injected_file(home, "x").parent
    safe = [hook_file(home, INJECTED, value).name for value in values]
    for record in sorted(folder.iterdir()) if folder.is_dir() else []:
        if any(value in record.name for value in safe):
            record.unlink(missing_ok=True)
    drop_started(home, lambda started: any(value in started for value in values))


# The hooks' records of why their last run captured nothing (``integrations.hooks_state``).
MISSED = "missed"


def rewrite_missed(home: Path, kept: Callable[[str], str]) -> int:
    """The hooks' records of why their last run captured nothing (``hooks/missed/<client>.
    <event>``: "no transcript of session 'ID' found", which `memctl doctor` shows until that
    hook captures again), each rewritten as ``kept`` keeps its text; how many changed."""
    folder = hook_file(home, MISSED, "x").parent
    changed = 0
    for record in sorted(folder.iterdir()) if folder.is_dir() else []:
        reason = record.read_text("utf-8", errors="replace")
        if kept(reason) != reason:
            write_private(record, kept(reason))
            changed += 1
    return changed


def rewrite_logs(folder: Path, needle: str, mark: str) -> int:
    """Replace ``needle`` by ``mark`` in memctl's logs (the hooks', the worker's, the
    resident process's: a transcript's path holding it, an error quoting it), once the
    rewrites a crash cut short are finished; how many changed."""
    changed = _finish_rewrites(folder)
    for path in sorted(folder.glob("*.log")):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if needle in text:
            _rewrite_in_place(path, text.replace(needle, mark))
            changed += 1
    return changed


# Where `memctl init` and `memctl install` keep each assistant file as it was before they
# changed it (``clients.files``: ``backups/<time>-<command>/<n>.bak``, beside a manifest)
FILE_BACKUPS = "backups"


def rewrite_file_backups(home: Path, values: list[str], mark: str) -> list[str]:
    """Replace each of ``values`` (as written, and as a JSON string spells it) by ``mark``
    in the copies of the assistants' files `init` and `install` kept (``~/.claude.json``
    keeps Claude Code's prompt history, an MCP server's entry its token); the copies
    rewritten, relative to ``home``. Undoing the install puts a copy back as it now reads."""
    import json

    forms = {
        form.encode("utf-8")
        for value in values
        for form in (value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1])
    }
    rewritten = []
    for copy in sorted((home / FILE_BACKUPS).glob("*/*.bak")):
        try:
            data = copy.read_bytes()
        except OSError:
            continue
        new = data
        for form in sorted(forms, key=len, reverse=True):
            new = new.replace(form, mark.encode("utf-8"))
        if new != data:
            write_private(copy, new)
            rewritten.append(str(copy.relative_to(home)))
    return rewritten


# Beside a log rewritten in place, its new text whole (``.NAME.log.rewrite``) until the
# log holds it: a crash in the middle leaves the new text over the start of the old and
# the old one's end after it, the end of a value in it that no later search finds whole.
JOURNAL = ".rewrite"


def _rewrite_in_place(path: Path, text: str) -> None:
    """``path`` holding ``text`` now, the same file: a process writing to it (the worker's
    stdout and stderr, cron's ``maintain.log``) goes on writing there. Replaced by a new
    file, the old one stayed theirs, the old text in it readable through /proc until they
    exited, and their later lines went to no file anyone could find. The new text is on
    disk whole first (``JOURNAL``), so a crash midway is finished by the next rewrite."""
    journal = path.with_name(f".{path.name}{JOURNAL}")
    write_private(journal, text)
    _overwrite(path, text)
    journal.unlink()


def _finish_rewrites(folder: Path) -> int:
    """Each log whose rewrite a crash cut short given the whole text it was to hold (a
    line written to it since is lost: a log's, not a memory's); how many."""
    finished = 0
    for journal in sorted(folder.glob(f".*.log{JOURNAL}")):
        _overwrite(journal.with_name(journal.name[1 : -len(JOURNAL)]), journal.read_text("utf-8"))
        journal.unlink()
        finished += 1
    return finished


def _overwrite(path: Path, text: str) -> None:
    """``path``'s content replaced by ``text`` in place, on disk when it returns."""
    with os.fdopen(open_private(path, os.O_WRONLY | os.O_CREAT), "w", encoding="utf-8") as out:
        out.write(text)
        out.truncate()
        out.flush()
        os.fsync(out.fileno())
