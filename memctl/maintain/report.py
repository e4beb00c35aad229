"""What a maintain run reports: one entry per task, and the run (imports nothing heavy)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from memctl.store.runs import RunRecord


@dataclass
class TaskReport:
    """What one task did (or, on a dry run, would do)."""

    task: str
    status: str = "done"  # done | planned | skipped
    counts: dict[str, int] = field(default_factory=dict)
    changes: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def change(self, action: str, memory_id: str, **detail: Any) -> None:
        self.changes.append({"action": action, "id": memory_id, **detail})
        self.count(action)

    def count(self, key: str, amount: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + amount

    def skip(self, why: str) -> TaskReport:
        self.status = "skipped"
        self.notes.append(why)
        return self

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class MaintainReport:
    tasks: list[TaskReport] = field(default_factory=list)
    run: RunRecord | None = None
    dry_run: bool = False
    locked_by: str | None = None  # set when another maintain held the lock

    def task(self, name: str) -> TaskReport | None:
        return next((t for t in self.tasks if t.task == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run.id if self.run else None,
            "dry_run": self.dry_run,
            "locked_by": self.locked_by,
            "tokens": self.run.tokens if self.run else 0,
            "token_budget": self.run.token_budget if self.run else 0,
            "tasks": [t.to_dict() for t in self.tasks],
        }
