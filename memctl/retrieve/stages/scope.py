"""Scope: memories of the current project, or of a project the question names, x 1.0;
global ones x scope_global; other projects' (searched only with --all-scopes) x scope_other."""

from __future__ import annotations

from memctl.config.scope import GLOBAL_SCOPE
from memctl.retrieve.run import Candidate, Run, rescore

STAGE = "scope"


def scope(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    p = run.params

    def factor(candidate: Candidate) -> tuple[float, str]:
        where = candidate.memory.scope
        if where == run.home_scope:
            return 1.0, "this project"
        if where in run.named_projects:
            return 1.0, "the project the question names"
        if where == GLOBAL_SCOPE:
            return p.scope_global, "global"
        return p.scope_other, f"another scope ({where})"

    return rescore(run, STAGE, candidates, factor)
