"""`memctl mcp` as a real subprocess, driven by the MCP SDK's own client over stdio."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import Implementation

from memctl.api.ingest import undo
from memctl.api.memory import Filters, ListRequest, list_memories
from memctl.config import load_settings
from memctl.context import Context
from memctl.embed.hashed import HashEmbedder
from tests.conftest import memctl_command, run_cli, server_env
from tests.ingesting import claude_work_session

TOOLS = {
    "memory_search",
    "memory_store",
    "memory_get",
    "memory_list",
    "memory_update",
    "memory_forget",
    "memory_link",
    "memory_ingest",
    "memory_profile",
    "memory_stats",
    "memory_distill_tasks",
    "memory_distill_apply",
    "memory_profile_task",
    "memory_profile_write",
    "session_search",
    "session_expand",
}


# The server starts a resident recall process when none runs: none here (the SDK's client
# passes the server only the environment it is given).
NO_RESIDENT = {"MEMCTL_RECALL_RESIDENT": "off"}


def text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def server(home: Path, project: Path, *config: str) -> StdioServerParameters:
    """``memctl mcp`` for host distillation, and ``-c KEY=VALUE`` for each of config."""
    settings = ["ingest.spawn_worker=false", "llm=none", "ingest.host_distil=true", *config]
    return stdio(home, project, *settings)


def stdio(home: Path, project: Path, *settings: str) -> StdioServerParameters:
    """``memctl mcp`` in ``project`` with ``home``, and ``-c KEY=VALUE`` for each setting
    (forked: ``memctl_command``)."""
    env = server_env(home, **NO_RESIDENT)
    command, *args = memctl_command(
        [*(a for c in settings for a in ("-c", c)), "mcp"], env, mcp=True
    )
    return StdioServerParameters(command=command, args=args, env=env, cwd=project)


async def session(home: Path, project: Path) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    async with Client(server(home, project)) as client:
        listed = await client.list_tools()
        seen["tools"] = {tool.name: tool.description for tool in listed.tools}
        stored = await client.call_tool(
            "memory_store", {"text": "The shop deploys with make release.", "tags": ["ops"]}
        )
        seen["stored"] = stored.structured_content
        seen["search"] = await client.call_tool("memory_search", {"query": "how to deploy"})
        seen["context"] = await client.call_tool(
            "memory_search", {"query": "deploy", "format": "context"}
        )
        seen["missing"] = await client.call_tool("memory_get", {"id": "abcdef12"})
        seen["bad_mode"] = await client.call_tool("memory_search", {"query": "x", "mode": "odd"})
        seen["bad_budget"] = await client.call_tool("memory_search", {"query": "x", "budget": 0})
        seen["ingest"] = await client.call_tool(
            "memory_ingest", {"text": "user: I like rye bread.\nassistant: Noted."}
        )
        tasks = await client.call_tool("memory_distill_tasks", {})
        seen["tasks"] = tasks.structured_content
        task = seen["tasks"]["tasks"][0]
        fact = {
            "content": "The user likes rye bread.",
            "l0_abstract": "Likes rye bread",
            "category": "preferences",
            "source_message": 1,
        }
        seen["applied"] = await client.call_tool(
            "memory_distill_apply",
            {
                "session_id": task["session_id"],
                "through_seq": task["through_seq"],
                "stamp": task["stamp"],
                "answer": {"facts": [fact]},
            },
        )
        seen["grep"] = await client.call_tool("session_search", {"query": 'rye "bread'})
        seen["expand"] = await client.call_tool(
            "session_expand", {"ref": seen["grep"].structured_content["matches"][0]["ref"]}
        )
        seen["out_of_bounds"] = await client.call_tool(
            "session_expand", {"ref": task["session_id"] + "#1-99"}
        )
        seen["both"] = await client.call_tool("memory_ingest", {})
        seen["stats"] = await client.call_tool("memory_stats", {})
        seen["profile"] = await client.read_resource("memctl://profile")
    return seen


def test_an_mcp_client_lists_stores_searches_and_gets_clear_errors(
    home: Path, tmp_path: Path
) -> None:
    seen = anyio.run(session, home, tmp_path / "project")
    assert set(seen["tools"]) == TOOLS
    assert all(len(description or "") > 40 for description in seen["tools"].values())
    stored = seen["stored"]
    assert stored["content"] == "The shop deploys with make release." and stored["tags"] == ["ops"]
    assert stored["category"] == "entities"  # classified by the rules: a project fact
    found = seen["search"].structured_content["results"]
    assert found[0]["id"] == stored["id"]
    assert found[0]["said_by"] == "assistant"  # stored by the assistant through MCP
    edits = json.loads(run_cli("runs", "--kind", "edit", "--json").stdout)
    assert [r["door"] for r in edits] == ["mcp"]  # its run names the door it came through
    assert "The shop deploys with make release." in seen["context"].structured_content["context"]
    assert seen["missing"].is_error and "no memory" in text(seen["missing"])
    assert seen["bad_mode"].is_error and "mode" in text(seen["bad_mode"])
    bad_budget = text(seen["bad_budget"])  # the tool's argument name, not a CLI flag
    assert seen["bad_budget"].is_error and "budget takes a number of tokens" in bad_budget
    assert "--budget" not in bad_budget
    assert seen["ingest"].structured_content["messages_new"] == 2
    match = seen["grep"].structured_content["matches"][0]
    assert match["lines"] == ["I like rye bread."] and match["after"][0]["line"] == "Noted."
    passage = seen["expand"].structured_content
    assert (passage["first"], passage["last"], passage["total"]) == (1, 1, 2)
    assert ">[1] user" in passage["text"] and "Noted." in passage["text"]
    assert seen["out_of_bounds"].is_error and "out of bounds" in text(seen["out_of_bounds"])
    assert seen["both"].is_error and "either transcript_path or text" in text(seen["both"])
    assert seen["stats"].structured_content["sessions"] == 1
    assert "[1] user: I like rye bread." in seen["tasks"]["tasks"][0]["conversation"]
    assert seen["tasks"]["schema"]["required"] == ["facts"] and seen["tasks"]["instructions"]
    assert seen["applied"].structured_content["status"] == "done", text(seen["applied"])
    assert seen["stats"].structured_content["total"] == 2
    profile = "".join(getattr(c, "text", "") for c in seen["profile"].contents)
    assert "The shop deploys with make release." not in profile  # a project fact, not a taste
    assert "The user likes rye bread." in profile
    # The host model's facts are a run that `memctl undo` reverts like any other.
    with Context(load_settings(), embedder=HashEmbedder()) as ctx:
        undo(ctx, seen["applied"].structured_content["run_id"])
        facts = ctx.db.tuples("SELECT state FROM memories WHERE content LIKE '%rye bread%'")
    assert facts == [("deleted",)]


async def hosting(home: Path, project: Path) -> dict[str, Any]:
    """A host model distilling a real-shaped Claude Code session through the SDK client."""
    seen: dict[str, Any] = {}
    transcript = "\n".join(json.dumps(line) for line in claude_work_session())
    async with Client(server(home, project)) as client:
        await client.call_tool("memory_ingest", {"text": transcript, "client": "claude-code"})
        seen["tasks"] = (await client.call_tool("memory_distill_tasks", {})).structured_content
        task = seen["tasks"]["tasks"][0]
        fact = {
            "content": "The shop's tests need vitest (pnpm add -D vitest); pnpm test passes.",
            "l0_abstract": "tests: pnpm test, needs vitest",
            "category": "cases",
            "source_message": 5,
        }
        where = {k: task[k] for k in ("session_id", "through_seq", "stamp")}
        wrong = {"facts": [fact, {**fact, "category": "decision"}]}
        seen["wrong"] = await client.call_tool("memory_distill_apply", {**where, "answer": wrong})
        seen["waiting"] = (await client.call_tool("memory_distill_tasks", {})).structured_content
        right = {"facts": [fact]}
        seen["right"] = await client.call_tool("memory_distill_apply", {**where, "answer": right})
        seen["after"] = (await client.call_tool("memory_distill_tasks", {})).structured_content
        seen["found"] = await client.call_tool(
            "memory_search", {"query": "vitest tests", "scope": task["scope"]}
        )
    return seen


def test_a_host_model_distils_a_session_from_its_words_and_tool_outcomes(
    home: Path, tmp_path: Path
) -> None:
    seen = anyio.run(hosting, home, tmp_path / "project")
    (task,) = seen["tasks"]["tasks"]
    assert task["project"] == "shop" and task["client"] == "claude-code"
    conversation = task["conversation"]
    assert conversation.startswith("[1] user: Add a CLAUDE.md with our conventions")
    assert "[3] tool: Write /home/ann/shop/CLAUDE.md → refused" in conversation
    assert "ran `pnpm test` → error: exit 1" in conversation
    assert "user: We always deploy with make ship, never by hand." in conversation
    assert "memory_distill_apply" in seen["tasks"]["instructions"]
    assert seen["wrong"].is_error
    assert "fact 2: category 'decision' is not one of" in text(seen["wrong"])
    assert [t["through_seq"] for t in seen["waiting"]["tasks"]] == [task["through_seq"]]
    assert not seen["right"].is_error and seen["right"].structured_content["facts"] == 1
    assert seen["after"]["tasks"] == []
    found = [r["content"] for r in seen["found"].structured_content["results"]]
    assert "The shop's tests need vitest (pnpm add -D vitest); pnpm test passes." in found


async def curating(home: Path, project: Path) -> dict[str, Any]:
    """The tools a model curates memories with, and its mistakes, through the SDK client."""
    params = stdio(home, project, "llm=none", "embedder=hash")
    seen: dict[str, Any] = {}
    async with Client(params) as client:

        async def call(tool: str, **arguments: Any) -> Any:
            return await client.call_tool(tool, arguments)

        deploy = (
            await call("memory_store", text="We deploy with make release.")
        ).structured_content
        tabs = (
            await call("memory_store", text="The user prefers tabs.", category="preferences")
        ).structured_content
        seen["listed"] = (await call("memory_list", limit=10)).structured_content
        seen["updated"] = (
            await call("memory_update", id=deploy["id"][:8], text="We deploy with make ship.")
        ).structured_content
        seen["linked"] = (
            await call("memory_link", source=deploy["id"], target=tabs["id"], type="related")
        ).structured_content
        seen["got"] = (await call("memory_get", id=deploy["id"])).structured_content
        seen["profile"] = (await call("memory_profile")).structured_content
        seen["forgot"] = (await call("memory_forget", id=tabs["id"])).structured_content
        seen["message"] = await call("memory_forget", id="s1#2")  # the user's call alone
        seen["after"] = (await call("memory_list", state="active")).structured_content
        seen["context"] = await client.read_resource("memctl://context")
        seen["misspelt"] = await call("memory_search", qury="deploy")
        seen["extra"] = await call("memory_get", id=deploy["id"], verbose=True)
        seen["missing"] = await call("memory_update")
        seen["mistyped"] = await call("memory_list", limit="many")
        seen["still"] = (await call("memory_stats")).structured_content
        seen["ids"] = (deploy["id"], tabs["id"])
    return seen


def test_an_mcp_client_curates_memories_and_a_wrong_argument_is_one_line(
    home: Path, tmp_path: Path
) -> None:
    seen = anyio.run(curating, home, tmp_path / "project")
    deploy, tabs = seen["ids"]
    assert {m["id"] for m in seen["listed"]["memories"]} == {deploy, tabs}
    assert seen["updated"]["content"] == "We deploy with make ship."
    assert (seen["linked"]["src_id"], seen["linked"]["dst_id"]) == (deploy, tabs)
    assert [r["dst_id"] for r in seen["got"]["relations"]] == [tabs]
    assert "The user prefers tabs." in str(seen["profile"])
    assert seen["forgot"]["state"] == "archived"
    assert seen["message"].is_error and "only the user forgets one" in text(seen["message"])
    assert [m["id"] for m in seen["after"]["memories"]] == [deploy]
    block = "".join(getattr(c, "text", "") for c in seen["context"].contents)
    assert "We deploy with make ship." in block
    for key, said in (
        ("misspelt", "memory_search: unknown argument 'qury' (did you mean 'query'?)"),
        ("extra", "memory_get: unknown argument 'verbose'"),
        ("missing", "memory_update: missing argument 'id'"),
        ("mistyped", "memory_list: argument 'limit': Input should be a valid integer"),
    ):
        message = text(seen[key])
        assert seen[key].is_error and message.startswith(said) and "\n" not in message, message
    assert seen["still"]["total"] == 2  # the server kept running after every mistake
    # each edit, through MCP or the CLI, is a run `memctl undo` takes back, newest first
    typed = run_cli("remember", "A note typed at the terminal.").stdout.strip()
    first, second = run_cli("undo"), run_cli("undo")
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert f"(remember {typed[:8]})" in first.stdout and f"(forget {tabs[:8]})" in second.stdout
    with Context(load_settings(), embedder=HashEmbedder()) as ctx:
        states = {m.content: m.state for m in list_memories(ctx, ListRequest(Filters()))}
    assert states == {"We deploy with make ship.": "active", "The user prefers tabs.": "active"}


PARALLEL = 200  # benchmarks/attacks.py makes 1,000


async def hostile(home: Path, project: Path, allowed: Path) -> dict[str, Any]:
    seen: dict[str, Any] = {"parallel": []}
    params = server(home, project, f"mcp.ingest_paths={allowed}")
    params.env = {**(params.env or {}), "MEMCTL_EMBEDDER": "hash"}  # no model: quick calls
    async with Client(params) as client:

        async def one(n: int) -> None:
            if n % 2:
                call = client.call_tool("memory_store", {"text": f"Parallel fact number {n}."})
            else:
                call = client.call_tool("memory_search", {"query": f"fact number {n}"})
            seen["parallel"].append(await call)

        async with anyio.create_task_group() as group:
            for n in range(PARALLEL):
                group.start_soon(one, n)
        seen["huge"] = await client.call_tool("memory_search", {"query": "x" * (10 << 20)})
        seen["huge_ingest"] = await client.call_tool(
            "memory_ingest", {"text": "user: hello\n" * ((10 << 20) // 12)}
        )
        seen["tags"] = await client.call_tool("memory_store", {"text": "t", "tags": ["a"] * 51})
        seen["limit"] = await client.call_tool("memory_list", {"limit": 10**12})
        seen["passwd"] = await client.call_tool("memory_ingest", {"transcript_path": "/etc/passwd"})
        seen["allowed"] = await client.call_tool(
            "memory_ingest", {"transcript_path": str(allowed / "t.jsonl")}
        )
        seen["stats"] = await client.call_tool("memory_stats", {})
    return seen


def test_parallel_calls_limits_and_only_transcripts(home: Path, tmp_path: Path) -> None:
    allowed = tmp_path / "transcripts"
    allowed.mkdir()
    (allowed / "t.jsonl").write_text('{"role": "user", "content": "I like rye bread."}\n')
    seen = anyio.run(hostile, home, tmp_path / "project", allowed)
    failed = [text(r) for r in seen["parallel"] if r.is_error]
    assert len(seen["parallel"]) == PARALLEL and failed == []
    assert seen["stats"].structured_content["total"] == PARALLEL // 2
    for name, says in [
        ("huge", "query is 10,485,760 characters: at most 4,000"),
        ("huge_ingest", "text is 10,485,756 characters: at most 1,048,576"),
        ("tags", "tags has 51 items"),
        ("limit", "limit is out of range"),
        ("passwd", "reads transcripts only: /etc/passwd"),
    ]:
        assert seen[name].is_error and says in text(seen[name]), text(seen[name])
        assert "\n" not in text(seen[name])
    assert seen["allowed"].structured_content["messages_new"] == 1


ROTATION = "On-call rotates weekly, handover Mondays 10:00 CET."


async def paraphrased(home: Path, project: Path) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    async with Client(server(home, project)) as client:
        for fact in (ROTATION, "The frontend uses pnpm.", "Backups run nightly at 02:00 UTC."):
            await client.call_tool("memory_store", {"text": fact})
        for key, query in (
            ("other_words", "when does pager duty pass to the next person?"),
            ("unrelated", "how long do I boil an egg for a runny yolk?"),
        ):
            seen[key] = (
                await client.call_tool("memory_search", {"query": query})
            ).structured_content
    return seen


def test_a_model_asking_in_other_words_gets_the_memory_first_labelled_possible(
    home: Path, tmp_path: Path
) -> None:
    # The question shares no word with the memory and too little cosine to show it is
    # about the store; the model that asked reads it first, labelled possible, and judges.
    seen = anyio.run(paraphrased, home, tmp_path / "project")
    first = seen["other_words"]["results"][0]
    assert (first["content"], first["match"]) == (ROTATION, "possible")
    assert "unconfirmed" not in seen["other_words"]
    # a question about nothing stored: answered, never with a clear match
    unrelated = seen["unrelated"]["results"]
    assert unrelated and {r["match"] for r in unrelated} == {"possible"}


async def store_with_questions(home: Path, project: Path) -> dict[str, Any]:
    """memory_store with questions through the real server and model, then a search in the
    questions' words."""
    params = stdio(home, project, "llm=none")
    seen: dict[str, Any] = {}
    async with Client(params) as client:
        listed = await client.list_tools()
        seen["description"] = next(t for t in listed.tools if t.name == "memory_store").description
        seen["stored"] = (
            await client.call_tool(
                "memory_store",
                {
                    "text": "Sam prefers small pull requests (under 400 lines) and squash merges.",
                    "questions": ["how big should a PR be?", "what is the capital of France?"],
                },
            )
        ).structured_content
        seen["search"] = (
            await client.call_tool("memory_search", {"query": "how big should a PR be?"})
        ).structured_content
        seen["too_many"] = await client.call_tool(
            "memory_store", {"text": "Deploys go out on Tuesdays.", "questions": ["a?"] * 4}
        )
        seen["stats"] = (await client.call_tool("memory_stats", {})).structured_content
    return seen


def test_memory_store_keeps_the_questions_about_the_memory(home: Path, tmp_path: Path) -> None:
    seen = anyio.run(store_with_questions, home, tmp_path)
    assert "questions" in seen["description"]
    stored = seen["stored"]
    assert stored["questions"] == {
        "kept": ["how big should a PR be?"],
        "dropped": ["what is the capital of France?"],
    }
    search = seen["search"]
    found = search["results"]
    assert found[0]["id"] == stored["id"]
    assert "how big should a PR be?" not in json.dumps(found)  # never shown
    assert seen["too_many"].is_error
    assert text(seen["too_many"]).strip().endswith("questions: at most 3, got 4")
    assert "\n" not in text(seen["too_many"]).strip()
    # nothing was stored for the refused call
    assert run_cli("list", "--json").stdout.count("Tuesdays") == 0


async def profiling(home: Path, project: Path) -> dict[str, Any]:
    """A host model writing the project's profile: a line citing a memory that is not
    there, none, or a forgotten one, then lines citing real ones."""
    params = stdio(home, project, "llm=none", "embedder=hash")
    seen: dict[str, Any] = {}
    async with Client(params) as client:

        async def call(tool: str, **arguments: Any) -> Any:
            return await client.call_tool(tool, arguments)

        role = await call(
            "memory_store",
            text="The user is the shop's backend lead.",
            category="profile",
            scope="project",
        )
        tabs = await call(
            "memory_store",
            text="The user prefers tabs in Go files.",
            category="preferences",
            scope="project",
        )
        seen["ids"] = [role.structured_content["id"], tabs.structured_content["id"]]
        seen["scopes"] = [role.structured_content["scope"], tabs.structured_content["scope"]]
        seen["task"] = (await call("memory_profile_task")).structured_content
        line = {"section": "role", "text": "Backend lead of the shop", "sources": seen["ids"][:1]}
        wrong = {"lines": [line, {**line, "section": "conventions", "sources": ["0" * 32]}]}
        seen["wrong"] = await call("memory_profile_write", answer=wrong)
        seen["empty"] = await call("memory_profile_write", answer={"lines": []})
        old = await call("memory_store", text="The user used Perl at work.", scope="project")
        await call("memory_forget", id=old.structured_content["id"])
        unsourced = {"section": "stack", "text": "Perl", "sources": []}
        forgotten = {**unsourced, "sources": [old.structured_content["id"]]}
        seen["unsourced"] = await call("memory_profile_write", answer={"lines": [unsourced]})
        seen["forgotten"] = await call("memory_profile_write", answer={"lines": [forgotten]})
        right = {
            "lines": [
                line,
                {
                    **line,
                    "section": "conventions",
                    "text": "Tabs in Go",
                    "sources": seen["ids"][1:],
                },
            ]
        }
        seen["right"] = await call("memory_profile_write", answer=right)
        seen["profile"] = (await call("memory_profile")).structured_content
    return seen


def test_a_host_model_writes_the_profile_citing_real_memories(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    seen = anyio.run(profiling, home, project)
    role, tabs = seen["ids"]
    notes = seen["task"]["notes"]
    assert {
        "section": "role",
        "text": "The user is the shop's backend lead.",
        "sources": [role],
    } in notes  # the rules' lines, with their memories
    assert seen["task"]["schema"]["required"] == ["lines"]
    assert "memory_profile_write" in seen["task"]["instructions"]
    assert seen["wrong"].is_error and "line 2: ['0000" in text(seen["wrong"])
    assert "no active memory of this scope" in text(seen["wrong"])
    assert seen["empty"].is_error and "at least one line" in text(seen["empty"])
    # a line citing nothing, or only a forgotten memory, is refused: no profile line
    # lacks a live source
    assert seen["unsourced"].is_error and "line 1: cites no memory" in text(seen["unsourced"])
    assert seen["forgotten"].is_error and "no active memory" in text(seen["forgotten"])
    assert not seen["right"].is_error, text(seen["right"])
    written = [
        (x["section"], x["text"], x["sources"], x["written_by"])
        for x in seen["profile"]["written"]
        if x["scope"] != "global"
    ]
    assert written == [
        ("role", "Backend lead of the shop", [role], "host"),
        ("conventions", "Tabs in Go", [tabs], "host"),
    ]
    # maintain keeps the host's profile while its sources stand, and writes it anew by
    # the rules once one is forgotten
    run_cli("maintain", "--only", "profile", cwd=project)
    shown = json.loads(run_cli("profile", "--json", cwd=project).stdout)["written"]
    assert {x["written_by"] for x in shown if x["scope"] != "global"} == {"host"}
    run_cli("forget", tabs[:8], cwd=project)
    run_cli("maintain", "--only", "profile", cwd=project)
    shown = json.loads(run_cli("profile", "--json", cwd=project).stdout)["written"]
    mine = [x for x in shown if x["scope"] != "global"]
    assert mine and {x["written_by"] for x in mine} == {"rules"}
    assert all(tabs not in x["sources"] for x in mine)


# Words no memory holds, marked private in a query
SECRET = "Quokkaville Zebrafinch Marmalade Hollowbrook"


async def private_search(home: Path, project: Path, log: Path) -> dict[str, Any]:
    """A memory stored, then searched for with a ``<private>`` part, and with one alone, the
    server's statements traced (``MEMCTL_DEBUG_SQL``) into ``log``, its standard error."""
    params = stdio(home, project, "embedder=hash", "llm=none")
    params.env = {**(params.env or {}), "MEMCTL_DEBUG_SQL": "1"}
    seen: dict[str, Any] = {}
    with log.open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                await client.call_tool(
                    "memory_store", {"text": "The shop deploys with make release."}
                )
                query = f"<private>{SECRET} owes {SECRET}</private> how does the shop deploy?"
                seen["search"] = await client.call_tool("memory_search", {"query": query})
                alone = {"query": f"<private>{SECRET}</private>"}
                seen["alone"] = await client.call_tool("memory_search", alone)
                seen["grep"] = await client.call_tool("session_search", {"query": query})
                seen["grep_alone"] = await client.call_tool("session_search", alone)
    return seen


def test_memory_search_leaves_a_private_part_out(home: Path, tmp_path: Path) -> None:
    """``memory_search`` searched a query's ``<private>`` part and said it back: its words
    reached the store's statements and the answer. Now the rest is asked; the private words
    are in no answer, statement or file of the home."""
    log = tmp_path / "server.err"
    seen = anyio.run(private_search, home, tmp_path, log)
    answer = seen["search"].structured_content
    assert answer["query"] == "how does the shop deploy?"
    assert answer["results"][0]["content"] == "The shop deploys with make release."
    assert seen["alone"].is_error and "nothing else is asked" in text(seen["alone"])
    grep = seen["grep"].structured_content  # session_search likewise (s37-leak)
    assert grep["query"] == "how does the shop deploy?"
    assert seen["grep_alone"].is_error and "nothing else is asked" in text(seen["grep_alone"])
    statements = log.read_text()
    assert "SQL: " in statements  # the tracer ran
    said = json.dumps(answer) + text(seen["alone"]) + json.dumps(grep) + statements
    said += text(seen["grep_alone"])
    kept = b"".join(path.read_bytes() for path in home.rglob("*") if path.is_file())
    for word in SECRET.split():
        assert word not in said and word.encode() not in kept


# A GitHub token's shape, given where a call names its client and its session
TOKEN = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


async def stored_by_a_named_client(home: Path, project: Path) -> dict[str, Any]:
    """Two memories stored by a client naming itself with a token and a private part, each
    call naming its session the same way (``memctl_session``, the model's to write)."""
    params = stdio(home, project, "embedder=hash", "llm=none")
    name = Implementation(name=f"bot {TOKEN} <private>{SECRET}</private>", version="1")
    seen: dict[str, Any] = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, client_info=name) as client:
            await client.initialize()
            for n, session in enumerate((f"s-{TOKEN}", f"<private>{SECRET}</private>")):
                text = f"The shop deploys with make release {n + 1}."
                arguments = {"text": text, "memctl_session": session}
                seen[session] = await client.call_tool("memory_store", arguments)
    return seen


def test_a_call_s_client_name_and_session_keep_no_secret(home: Path, tmp_path: Path) -> None:
    """``memory_store`` kept the client's name from the handshake as the memory's agent and
    the session a call named as its session, verbatim: a token or a private part in either
    reached the store (s36-clients made both recorded). Either now holding one is left
    out: the memory is stored, naming no agent or session."""
    seen = anyio.run(stored_by_a_named_client, home, tmp_path)
    assert all(not answer.is_error for answer in seen.values())
    ctx = Context(load_settings(home=home), embedder=HashEmbedder())
    stored = list_memories(ctx, ListRequest(Filters()))
    ctx.close()
    assert len(stored) == 2 and all(m.agent_id is None and m.session_id is None for m in stored)
    kept = b"".join(path.read_bytes() for path in home.rglob("*") if path.is_file())
    assert TOKEN.encode() not in kept and SECRET.split()[0].encode() not in kept
