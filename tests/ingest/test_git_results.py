"""A session's digest says which commits it made and where it pushed them, from git's own
output: "which commit added X?" and "where is the code pushed?" are answered there."""

from __future__ import annotations

from memctl.ingest.git_results import commits, pushes
from tests.ingest.test_ingest_digest import cc, digest_text, result, use

COMMIT_OUTPUT = (
    "[main 5c1b231] Add AI music generation and project setup\n"
    " 14 files changed, 3289 insertions(+), 1 deletion(-)\n create mode 100644 CLAUDE.md\n"
)
PUSH_OUTPUT = "To github.com:ann/ai-music.git\n   6eea407..5c1b231  main -> main\n"


def test_git_output_names_the_commit_and_where_it_went() -> None:
    joined = COMMIT_OUTPUT.replace("\n", " · ")  # as a result's note joins its lines
    assert commits(joined) == ["5c1b231 on main: Add AI music generation and project setup"]
    assert commits("[feat/x (root-commit) 1a2b3c4] first") == ["1a2b3c4 on feat/x: first"]
    assert commits("[tool result Bash: nothing to commit, working tree clean]") == []
    assert pushes(PUSH_OUTPUT.replace("\n", " · ")) == [
        "main to github.com:ann/ai-music.git (6eea407..5c1b231)"
    ]
    # a password in the address is never kept; a new branch has no range
    new = "To https://ann:s3cret@git.example.com/ann/shop · * [new branch]      feat -> feat"
    assert pushes(new) == ["feat to https://git.example.com/ann/shop"]
    assert pushes("Everything up-to-date") == []


def test_a_digest_lists_the_commits_and_pushes_that_succeeded() -> None:
    command = "git add . && git commit -m \"$(cat <<'EOF'\nAdd AI music\nEOF\n)\""
    records = [
        cc("user", "push to github", 1),
        cc("assistant", use(2, "Bash", command=command), 2),
        cc("user", result(2, COMMIT_OUTPUT), 3),
        cc("assistant", use(4, "Bash", command="git push origin main"), 4),
        cc("user", result(4, PUSH_OUTPUT), 5),
        cc("assistant", use(6, "Bash", command='git commit -m "wip"'), 6),
        cc("user", result(6, "[main 9d8e7f6] wip\nhook failed", error=True), 7),
        cc("assistant", "Pushed.", 8),
    ]
    text = digest_text(records)
    assert "Committed: 5c1b231 on main: Add AI music generation and project setup\n" in text
    assert "Pushed: main to github.com:ann/ai-music.git (6eea407..5c1b231)\n" in text
    assert "wip" not in text.split("\nPushed")[0]  # a commit command that failed made nothing


def test_a_long_digest_cuts_its_commits_before_its_requests() -> None:
    """Six commits took the room of the requests between the first and the last, which said
    where the code went (a real session, fresh's f15): commits lose items before requests do."""
    records = [cc("user", "Move the token counter into a repository of its own", 1)]
    for n in range(2, 14, 2):
        command = f'git commit -m "step {n}"'
        records += [
            cc("assistant", use(n, "Bash", command=command), n),
            cc("user", result(n, f"[main {n:07x}] Step {n} of the move, with its tests"), n + 1),
        ]
    records += [
        cc("user", "I created github.com/ann/token-counter, push it there please", 20),
        cc("user", "And fill in its README", 21),
        cc("assistant", "Done.", 22),
    ]
    text = digest_text(records, max_chars=400)
    assert "I created github.com/ann/token-counter" in text
    assert "Committed: 0000002 on main: Step 2 of the move, with its tests; 0000004 on main" in text
    assert "000000c" not in text  # the last commits went first
