"""The knowledge graph: rules, storage, distillation, maintain, recall's graph stage, the
`memctl graph` and `memctl profile` commands, on real SQLite files and the real CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from memctl.api import sync as sync_api
from memctl.api.maintain import MaintainRequest, MaintainResult, maintain
from memctl.api.memory import RememberRequest, remember
from memctl.context import Context
from memctl.ingest.entities import entities, speaker, triples
from memctl.ingest.graph import Indexed, Written, index, index_pending, parse_triples, project_of
from memctl.maintain.profile import written
from memctl.memories.operations import delete, forget
from memctl.memories.projects import short_path
from memctl.memories.provenance import origin
from memctl.model import Memory, State
from memctl.retrieve.pipeline import recall, run_stages, stages_for, start
from memctl.retrieve.run import Candidate
from memctl.retrieve.session_start import layered_context
from memctl.retrieve.stages.graph import graph, is_synthetic
from memctl.store import graph as store
from memctl.store import memories as memory_store
from memctl.store.profile import profile_lines, replace_profile
from memctl.store.writes import Writer
from memctl.sync.memfile import BadFile, parse, render
from tests.conftest import run_cli
from tests.ingesting import distil
from tests.ollama_server import FakeOllama
from tests.syncing import bare_repo, machine, shared


def names(text: str) -> dict[str, str]:
    return {e.name: e.kind for e in entities(text)}


def said(text: str) -> set[tuple[str, str, str]]:
    return {(t.subject.name, t.predicate, t.object.name) for t in triples(text)}


@pytest.mark.parametrize(
    ("text", "name", "kind"),
    [
        ("Run `make test` before pushing", "make test", "command"),
        ("The handler is in memctl/retrieve/graph.py", "memctl/retrieve/graph.py", "file"),
        ("See github.com/simonw/llm for the plugin API", "simonw/llm", "repository"),
        ("We moved the orders DB to PostgreSQL 16", "PostgreSQL", "service"),
        ("Deploy with kubectl to staging", "Kubernetes", "service"),
        ("The release is on 2024-03-01", "2024-03-01", "date"),
        ("She grew up in Sweden and came here", "Sweden", "place"),
        ("Later we asked Caroline about the plan", "Caroline", "person"),
        ("the Atlas project ships on Friday", "Atlas", "project"),
        ("Alice works at Acme since May", "Acme", "organisation"),
    ],
)
def test_rules_find_each_kind_of_entity(text: str, name: str, kind: str) -> None:
    assert names(text).get(name) == kind


def test_aliases_fold_into_one_entity() -> None:
    assert names("Postgres, postgresql and PostgreSQL 16") == {"PostgreSQL": "service"}


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("我们在上海市的公司用 PostgreSQL，张三先生负责。", {"上海市", "张三", "PostgreSQL"}),
        ("田中さんはポストグレスを使う。東京都に住む。", {"田中", "東京都", "ポストグレス"}),
        ("김민수 씨는 서울에서 Redis를 사용합니다.", {"김민수", "Redis"}),
    ],
)
def test_cjk_text_still_names_its_entities(text: str, found: set[str]) -> None:
    assert found <= set(names(text))


@pytest.mark.parametrize(
    ("text", "not_found"),
    [
        ("这个测试都通过了，数据库查询都很快。", {"个测试都", "库查询都"}),  # 都: "all"
        ("Dates are written YYYY MM DD, and CI runs the tests.", {"YYYY MM DD", "CI"}),
    ],
)
def test_chinese_all_and_all_capital_words_are_no_place_or_person(
    text: str, not_found: set[str]
) -> None:
    assert not set(names(text)) & not_found
    assert names("Later Sam started at NASA") == {"NASA": "organisation", "Sam": "person"}


@pytest.mark.parametrize(
    ("text", "not_person"),
    [
        ("Created: /Users/dain/workspace/app/main.py", {"Users", "Created"}),
        ("`git commit` failed: Pre-commit validation failed", {"Pre"}),
        ("Key design points: Uses the same parser", {"Uses"}),
        ("Done. Next Steps\n- Removed the old cache and ran it in CI", {"Next Steps", "Removed"}),
        ("1. Key Methods Involved in ZIP Processing", {"Methods Involved", "ZIP Processing"}),
        ("The SessionLive module renders the transcript", {"SessionLive"}),
        ("We run the linter and the Format step; format runs first", {"Format"}),
        # from the real sessions' graph: a software name inside, capitals only, everyday words
        ("Hey Claude, can you please add a Github Action to run the tests", {"Github Action"}),
        ("Use the Explore task with the Haiku Model to read the Python CLI", {"Haiku Model"}),
        ("spotter-fum.3 (IN PROGRESS): integrate highlight.js", {"PROGRESS", "IN PROGRESS"}),
        ("Put the helpers in Always, and the rest in Never", {"Always", "Never"}),
        ("`mix test` failed: [ERROR] Cowardly refusing to install hooks", {"Cowardly"}),
        ("import MusicalEmbedding; composer = Musi…; assert 'zip' in 'Er…", {"Musi", "Er"}),
        # the README's example graph: a plural weekday, an acronym's plural (LoCoMo: "APIs")
        ("Never deploy on Fridays; we store UUIDs and ship small PRs", {"Fridays", "UUIDs", "PRs"}),
        # the real sessions' graph (rules v10): code, a digest's commands, a build file
        ("Translated `Emergency Procedures` → `비상 절차` `See Also` → `참고`", {"See"}),
        ('Ran: npm test -- --run a.test.ts -t "Compaction Config"\n', {"Compaction Config"}),
        ("Project Structure /tmp/app/ ├── Justfile ├── pyproject.toml", {"Justfile"}),
        # rules v11: a software's plan or part after it starts a cell or a clause, a title
        # quoted, what a thing is reached by
        ("| 1 | Cursor Bugbot (high) | Merge conflict markers in README.md |", {"Bugbot"}),
        ("Claude Code v2.1.52 · Claude Max (basic plan)", {"Max", "Claude Max"}),
        ('Tune it (adding a "Bass Enhancer" or "Loudness" effect)', {"Bass Enhancer"}),
        ("The icons fail to appear when rEFInd is chain-loaded via Shim.", {"Shim"}),
        ("None of PyTorch, TensorFlow >= 2.0, or Flax have been found.", {"Flax"}),
        # title case: after or starting with a participle, before a capitalised "Also"
        ("— Supported Providerの下に、リンクを追加して", {"Provider", "Supported Provider"}),
        ("docs(cli): add contribution links below Supported Providers", {"Supported Providers"}),
        ("모범 사례 참고 (See Also) 3. 유지된 요소", {"See", "See Also"}),
    ],
)
def test_developer_text_names_no_person_by_its_capitals(text: str, not_person: set[str]) -> None:
    """Paths, labels, headings, list items and code identifiers are written with capitals
    that name no one: none of them is a person, a place or an organisation."""
    people = {n for n, kind in names(text).items() if kind in {"person", "place", "organisation"}}
    assert not people & not_person


def test_people_called_or_greeted_in_conversation_are_still_found() -> None:
    assert names("Maria: Definitely, John! Let's ask Gina too.") == {
        "Maria": "person",
        "John": "person",
        "Gina": "person",
    }
    assert names("I watched LeBron on YouTube with Jon")["Jon"] == "person"
    assert names("I watched LeBron on YouTube with Jon")["YouTube"] == "tool"  # a service
    # a quoted sentence is no title: its people stay (rules v11 read a quoted title only)
    assert names('Maria said "let me ask John Smith" and left')["John Smith"] == "person"
    # names that end as participles do ("Sterling"), and that are no everyday words
    met = names("Later Sterling Archer met Alfred Hitchcock at the lake")
    assert met["Sterling Archer"] == met["Alfred Hitchcock"] == "person"
    # a list of people is no list of software (rules v11 read a name beside software only)
    listed = names("I went with Caroline and Melanie to the lake")
    assert listed["Caroline"] == listed["Melanie"] == "person"


@pytest.mark.parametrize(
    ("text", "tools"),
    [
        (
            "We queue jobs with Oban, lint with Credo and Dialyzer, all in Elixir.",
            {"Oban", "Credo", "Dialyzer", "Elixir"},
        ),
        (
            "The viewer is built on Textual. Pygments and Jinja2 colour it.",
            {"Textual", "Pygments", "Jinja"},
        ),
        ("the viewer renders with pygments and jinja2", {"Pygments", "Jinja"}),  # any case
        (
            "Tested it in Chrome on Windows and pasted it into Excel.",
            {"Chrome", "Windows", "Excel"},
        ),
        (
            "Use Haiku for format checks; Claude writes the Markdown.",
            {"Claude Haiku", "Claude", "Markdown"},
        ),
    ],
)
def test_software_names_are_tools_not_people(text: str, tools: set[str]) -> None:
    found = names(text)
    assert {n: found.get(n) for n in tools} == dict.fromkeys(tools, "tool")
    assert not {n for n, kind in found.items() if kind in {"person", "place", "organisation"}}


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("The front end is React, the API Python.", "React"),
        ("we pinned react-dom and react 18 last week", "React"),
        ("run `npm install react` first", "React"),
        ("start it with node index.js", "Node.js"),
        ("the tests run with python -m pytest", "Python"),
        ("```bash\nls -la\n```", "Bash"),
        ("I write the code in Cursor now", "Cursor"),
        ("the editor (cursor) crashed twice", "Cursor"),
        ("`pytest` failed: exit 127: /bin/bash: line 1: pytest: command not found", "Bash"),
    ],
)
def test_an_everyday_word_names_its_tool_when_written_as_a_name(text: str, tool: str) -> None:
    assert names(text).get(tool) == "tool"


def test_the_hand_written_vocabulary_wins() -> None:
    assert names("The store runs on Postgres, the jobs on Redis") == {
        "PostgreSQL": "service",
        "Redis": "service",
    }


@pytest.mark.parametrize(
    ("text", "not_tool"),
    [
        ("Open the windows and polish the chrome, then excel at it.", {"Windows", "Chrome"}),
        ("Julia moved to Phoenix with Hugo.", {"Julia", "Hugo"}),  # first names stay people
        ("Dates: the README and the JSON file.", {"ReadMe", "JSON"}),  # terms, not tools
        # the hand-written names that are everyday words, written as words
        ("Melanie: How did you react when the node of the tree moved?", {"React", "Node.js"}),
        ("Move the cursor down and bash the nail; a python ate it.", {"Cursor", "Bash", "Python"}),
    ],
)
def test_everyday_words_first_names_and_terms_are_no_tools(text: str, not_tool: set[str]) -> None:
    found = names(text)
    assert not {n for n, kind in found.items() if kind == "tool"} & not_tool
    assert found.get("Julia", "person") == "person"


@pytest.mark.parametrize(
    ("text", "person"),
    [
        ("Next Steps: run the migration and the tests", None),
        ("Key Changes: the cache moved to Redis", None),
        ("Usage: memctl recall QUERY", None),
        ("Caroline: I moved to Sweden last year", "Caroline"),
        ("Dr. Smith: the results look fine", "Dr. Smith"),
        ("[1:56 pm on 8 May, 2023] Melanie: Hey Caroline!", "Melanie"),
    ],
)
def test_a_label_of_everyday_words_is_no_speaker(text: str, person: str | None) -> None:
    assert speaker(text) == person
    people = {n for n, kind in names(text).items() if kind == "person"}
    assert (person in people) if person else not people & {"Next Steps", "Key Changes", "Usage"}


def test_title_case_glosses_in_cjk_text_name_no_one() -> None:
    text = "로그 레벨 (Log Levels) 요청 추적 (Request Tracking) 진입점 (Entry Points)"
    assert not {n for n, kind in names(text).items() if kind == "person"}


def test_triples_from_the_speaker_and_between_entities() -> None:
    assert ("Caroline", "moved from", "Sweden") in said(
        "[8 May 2023] Caroline: I moved from Sweden four years ago."
    )
    assert ("Melanie", "signed up for", "pottery class") in said(
        "Melanie: I just signed up for a pottery class yesterday."
    )
    assert ("Alice", "works at", "Acme") in said("Alice works at Acme.")
    assert ("user", "prefers", "PostgreSQL") in said("The user prefers Postgres over MySQL.")
    assert said("Thanks, that was great!") == set()


def test_llm_triples_are_taken_only_in_their_shape() -> None:
    given = [["Alice", "works at", "Acme"], {"subject": "api", "predicate": "uses", "object": "pg"}]
    bad = ["x", ["only", "two"], [1, 2, 3], ["", "a", "b"], None]
    found = parse_triples([*given, *bad])
    assert [(t.subject.name, t.predicate, t.object.name) for t in found] == [
        ("Alice", "works at", "Acme"),
        ("api", "uses", "PostgreSQL"),
    ]
    assert parse_triples("not a list") == []


def remembered(ctx: Context, text: str) -> str:
    return remember(ctx, RememberRequest(text)).memory.id


def test_maintain_reads_memories_merges_aliases_and_keeps_history(ctx: Context) -> None:
    first = remembered(ctx, "Bob lives in Paris.")
    remembered(ctx, "We use Postgres for the orders service.")
    remembered(ctx, "The reporting job uses PostgreSQL 16.")
    cache = remembered(ctx, "The session cache is Redis.")
    db = ctx.db
    with db.atomic():  # an entity named with its version, as an LLM may give it
        versioned = store.add_entity(db, "Redis 7", "redis 7", "service", "2024-01-01")
        store.add_mentions(db, [versioned], cache)
    later = remembered(ctx, "Bob lives in Berlin.")
    with db.atomic():  # a memory written before the graph existed: maintain reads it
        Writer(db).create(Memory(content="Erin works at Umbrella."), None)
    done = run_cli("maintain", "--only", "graph", "--json")
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout)["tasks"][0]["counts"]
    # Redis 7 is merged into Redis, which its scope names too
    assert counts == {"read": 1, "triples": 1, "merged": 1, "superseded": 1}
    assert [t.text for t in store.triples_touching(db, [store.entity_id(db, "erin") or 0])] == [
        "Erin → works at → Umbrella"
    ]
    assert store.get_entity(db, versioned) is None  # folded into Redis
    shown = json.loads(run_cli("graph", "bob", "--json").stdout)
    assert [(t["object"], t["sources"][0]["memory_id"]) for t in shown["relations"]] == [
        ("Berlin", later)
    ]
    assert [(t["object"], t["state"]) for t in shown["history"]] == [("Paris", "superseded")]
    assert shown["history"][0]["sources"][0]["memory_id"] == first
    postgres = json.loads(run_cli("graph", "PostgreSQL 16", "--json").stdout)
    assert postgres["entity"]["name"] == "PostgreSQL"
    assert {"Postgres", "PostgreSQL 16"} <= set(postgres["entity"]["aliases"])


def test_an_alice_of_one_project_moving_does_not_move_another_projects(ctx: Context) -> None:
    """Names are shared by every project: two projects' "Alice" are one entity. A newer
    "lives in" supersedes an older one only within one scope (or the global one)."""
    for text, scope in (
        ("Alice lives in Berlin.", "github.com/acme/app"),
        ("Alice lives in Paris.", "github.com/acme/site"),
        ("Alice lives in Oslo.", "github.com/acme/site"),
    ):
        remember(ctx, RememberRequest(text, scope=scope))
    done = run_cli("maintain", "--only", "graph", "--json")
    assert done.returncode == 0, done.stderr
    shown = json.loads(run_cli("graph", "alice", "--all-scopes", "--json").stdout)
    assert sorted(t["object"] for t in shown["relations"]) == ["Berlin", "Oslo"]
    assert [(t["object"], t["state"]) for t in shown["history"]] == [("Paris", "superseded")]


def test_forgetting_drops_what_only_that_memory_stated(ctx: Context) -> None:
    one = remembered(ctx, "Alice works at Acme.")
    two = remembered(ctx, "Alice works at Acme, on billing.")
    three = remembered(ctx, "Carol works at Initech.")
    index_pending(ctx.db)
    alice = store.entities_by_keys(ctx.db, ["alice"])["alice"].id
    carol = store.entities_by_keys(ctx.db, ["carol"])["carol"].id
    forget(ctx, one)
    (left,) = store.triples_touching(ctx.db, [alice])
    assert [s.memory_id for s in left.sources] == [two]  # still stated by the other
    delete(ctx, three, permanent=True)
    assert store.triples_touching(ctx.db, [carol], live_only=False) == []
    delete(ctx, two)
    assert store.triples_touching(ctx.db, [alice], live_only=False) == []


def test_distillation_links_triples_to_their_session_message(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx()
    distil(ctx, "user: From now on we always deploy to Kubernetes with `make deploy`.\n")
    every = store.triples_touching(ctx.db, [e.id for e in store.entities_like(ctx.db, "", 50)])
    assert every, "distillation stored no triple"
    assert all(s.message.startswith("session:s1#") for t in every for s in t.sources)
    memory = memory_store.get_memory(ctx.db, every[0].sources[0].memory_id)
    assert memory is not None and memory.session_id == "s1"


def test_a_merge_reads_the_memory_again(ctx: Context) -> None:
    kept = remembered(ctx, "Dana works at Globex.")
    index_pending(ctx.db)
    memory = memory_store.get_memory(ctx.db, kept)
    assert memory is not None
    with ctx.db.atomic():
        Writer(ctx.db).update(memory, {"content": "Dana works at Hooli."})
    assert index_pending(ctx.db) == Indexed(memories=1, stated=1, dropped=1)  # Globex goes
    dana = store.entities_by_keys(ctx.db, ["dana"])["dana"].id
    assert [t.object.name for t in store.triples_touching(ctx.db, [dana])] == ["Hooli"]


def test_graph_stage_lifts_the_memory_of_a_two_hop_path(ctx: Context) -> None:
    for text in (
        "Alice lives in Berlin.",
        "Bob moved to Berlin in 2020.",
        "Bob works as a nurse at the city hospital.",
        "The city hospital opened a new wing.",
        "A person who moved flats has to do the paperwork for work.",
        "What does a person do when work moved to another office?",
        "Every person moved their desk; the work was done by Friday.",
    ):
        remembered(ctx, text)
    index_pending(ctx.db)
    found = recall(ctx, "what does the person who moved to Berlin do for work", touch=False)
    lifted = [r for r in found.results if "works as a nurse" in r.memory.content]
    assert lifted and "graph" in lifted[0].factors and lifted[0].factors["graph"] > 1
    steps = [s for s in found.steps_of(lifted[0].memory.id) if s.stage == "graph"]
    assert "Bob → moved to → Berlin; Bob → works as → nurse" in steps[0].why


def test_a_big_projects_alice_leaves_a_small_projects_alice_its_graph_hops(ctx: Context) -> None:
    """The graph stage reads at most ``recall.graph_edges`` edges of an entity, oldest
    first, and names are shared by every project: only the edges the recall's scopes
    state count towards it, so another project's many older edges of "Alice" do not
    crowd out the one that leads this project's recall to its answer."""
    big, small = "github.com/acme/big", "github.com/acme/small"
    for i in range(6):  # older than the small project's, and more than the limit below
        remember(ctx, RememberRequest(f"Alice maintains the billing-{i} service.", scope=big))
    for text in (
        "Alice moved to Lisbon in 2021.",
        "Alice works as a nurse at the harbour clinic.",
        "The harbour clinic opened a new wing.",
        "A person who moved flats has to do the paperwork for work.",
        "What does a person do when work moved to another office?",
        "Every person moved their desk; the work was done by Friday.",
    ):
        remember(ctx, RememberRequest(text, scope=small))
    done = run_cli("maintain", "--only", "graph", "--json")
    assert done.returncode == 0, done.stderr
    question = "what does the person who moved to Lisbon do for work"
    shown = run_cli(
        "-c", "recall.graph_edges=3", "recall", question, "-s", small, "--explain", "--no-touch"
    )
    assert shown.returncode == 0, shown.stderr
    assert "Alice → moved to → Lisbon; Alice → works as → nurse" in shown.stdout
    assert "billing" not in shown.stdout  # the other project's memories stay out


def test_graph_stage_is_quiet_without_a_known_entity(ctx: Context) -> None:
    remembered(ctx, "Alice works at Acme.")
    index_pending(ctx.db)
    found = recall(ctx, "how do we release the mobile app", touch=False)
    assert all("graph" not in r.factors or r.factors["graph"] == 1 for r in found.results)


def test_cli_graph_lists_relations_with_sources_and_refuses_unknown_names(ctx: Context) -> None:
    source = remembered(ctx, "Alice works at Acme.")
    remembered(ctx, "Alicia joined the Atlas project.")
    index_pending(ctx.db)
    shown = run_cli("graph", "Acme")
    assert shown.returncode == 0, shown.stderr
    assert "Alice → works at → Acme" in shown.stdout and source[:8] in shown.stdout
    listed = run_cli("graph")
    assert "entities" in listed.stdout and "Alice (person)" in listed.stdout
    assert "--all-scopes" not in listed.stdout
    # a project with no entity of its own says where the others are
    empty = run_cli("graph", "-s", "/nowhere/else").stdout
    assert empty.startswith("0 entities") and "--all-scopes looks everywhere" in empty
    missing = run_cli("graph", "Zanzibar")
    assert missing.returncode == 3
    assert missing.stderr.strip() == (
        "memctl: error: no entity named 'Zanzibar' (memctl graph lists the known ones)"
    )
    several = run_cli("graph", "ali")
    assert several.returncode == 2 and "names several entities" in several.stderr
    blank = run_cli("graph", "  ")
    assert blank.returncode == 2 and "give an entity's name" in blank.stderr


def test_cli_graph_of_a_project_lists_its_own_entities_and_relations_first(ctx: Context) -> None:
    """`memctl graph` in a project led with the names every project's memories mention
    most (Git, GitHub) and listed no relation: what the project's own memories state needed
    `memctl graph NAME`, and an entity's relations put the global memories' older ones first."""
    for project in ("shop", "blog", "wiki"):
        for n in range(3):
            text = f"The {project} code {n} is kept in Git and reviewed on GitHub."
            remember(ctx, RememberRequest(text, scope=project))
    remember(ctx, RememberRequest("Alice lives in Lisbon.", scope="global"))
    remember(ctx, RememberRequest("The shop caches carts in Redis.", scope="shop"))
    remembered(ctx, "Alice works at Acme.")
    remembered(ctx, "Our code is kept in Git and reviewed on GitHub.")
    remembered(ctx, "Redis holds the sessions.")
    remembered(ctx, "Redis holds the rate limits.")
    index_pending(ctx.db)
    listed = run_cli("graph")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    # Acme is this project's alone; Redis, named twice here, another project's too; Alice
    # the global memories' too (every project's): each sets it apart less
    assert lines[1:4] == ["  Acme (organisation)", "  Redis (service)", "  Alice (person)"]
    assert "named by most projects: Git (tool), GitHub (service)" in listed.stdout
    assert "relations:" in lines and "Alice → works at → Acme" in listed.stdout
    shown = json.loads(run_cli("graph", "--json").stdout)
    assert shown["shared"] == ["Git", "GitHub"]
    # its own memories' relation, then the global memories' (older) one
    assert [t["predicate"] for t in shown["relations"]] == ["works at", "lives in"]
    alice = run_cli("graph", "Alice").stdout
    assert alice.index("Alice → works at → Acme") < alice.index("Alice → lives in → Lisbon")
    # every scope: still the most mentioned first
    everywhere = json.loads(run_cli("graph", "--all-scopes", "--json").stdout)
    assert {e["name"] for e in everywhere["entities"][:2]} == {"Git", "GitHub"}
    assert everywhere["shared"] == [] and everywhere["relations"] == []


def test_profile_is_written_with_sources_and_loses_lines_with_them(ctx: Context) -> None:
    role = remember(ctx, RememberRequest("The user is a backend engineer", category="profile"))
    rule = remember(ctx, RememberRequest("Always run ruff before committing", "preferences"))
    remembered(ctx, "We use PostgreSQL for the orders service.")
    remembered(ctx, "The billing job reads PostgreSQL replicas.")
    # katakana loanwords ("table", "link", "commit") are things, not the stack's tools
    remembered(ctx, "テーブルの直後にリンクを追加してコミットした。")
    done = run_cli("maintain", "--only", "graph,profile")
    assert done.returncode == 0, done.stderr
    lines = {(x.section, x.text): x.sources for x in profile_lines(ctx.db, None)}
    assert lines[("role", "The user is a backend engineer")] == (role.memory.id,)
    assert lines[("conventions", "Always run ruff before committing")] == (rule.memory.id,)
    assert len(lines[("stack", "PostgreSQL")]) == 2
    assert not {"テーブル", "リンク", "コミット"} & {text for _, text in lines}
    shown = run_cli("profile")
    assert f"The user is a backend engineer [{role.memory.id[:8]}]" in shown.stdout
    headings = [line for line in shown.stdout.splitlines() if line[:1].isupper()]
    here = short_path(ctx.settings.cwd)
    assert "Role (global)" in headings and f"Stack ({here})" in headings  # a path, not a hash
    start = run_cli("context")
    assert "role: The user is a backend engineer" in start.stdout
    forget(ctx, role.memory.id)
    assert ("role", "The user is a backend engineer") not in {
        (x.section, x.text) for x in profile_lines(ctx.db, None)
    }
    assert "backend engineer" not in run_cli("profile").stdout


def test_a_software_name_lands_in_the_stack_not_among_people(ctx: Context) -> None:
    remembered(ctx, "The billing app is written in Elixir; jobs run on Oban.")
    remembered(ctx, "Next Steps: move the Oban queues to Elixir 1.17.")
    done = run_cli("maintain", "--only", "graph,profile")
    assert done.returncode == 0, done.stderr
    stack = {x.text for x in profile_lines(ctx.db, None) if x.section == "stack"}
    assert {"Elixir", "Oban"} <= stack
    kinds = {e.name: e.kind for e in store.entities_by_keys(ctx.db, ["elixir", "oban"]).values()}
    assert kinds == {"Elixir": "tool", "Oban": "tool"}
    assert store.entities_by_keys(ctx.db, ["next steps"]) == {}


def test_a_brand_named_in_chat_is_no_stack_but_beside_code_it_is(ctx: Context) -> None:
    """YouTube, Netflix and Nike are simple-icons' brands: a chat naming them gives no
    stack; Sentry, a brand too, earns its line where a memory names it beside a file, and
    cites that memory; a language (linguist) needs no code beside it."""
    for text in (
        "Caroline: I watched the whole series on Netflix last night!",
        "Melanie: I found the video on YouTube, and my new Nike shoes are great.",
        "Caroline: YouTube has the best cooking channels.",
        "Melanie: We learn Python together on weekends.",
        "We also use Sentry for alerts.",
    ):
        remembered(ctx, text)
    coded = remembered(ctx, "Errors go to Sentry, set up in app/monitoring.py.")
    done = run_cli("maintain", "--only", "graph,profile")
    assert done.returncode == 0, done.stderr
    stack = {x.text: x.sources for x in profile_lines(ctx.db, None) if x.section == "stack"}
    assert set(stack) == {"Python", "Sentry"}
    assert stack["Sentry"] == (coded,)
    kinds = store.entities_by_keys(ctx.db, ["youtube", "netflix", "nike"]).values()
    assert {e.kind for e in kinds} == {"tool"}  # still tools in the graph, and not people


def test_profile_dynamic_lines_come_from_the_latest_digests(ctx: Context) -> None:
    digest = (
        "Session of 2024-05-01 (claude-code) — port\n"
        "Asked: port the parser to Rust\n"
        "Decided: keep the Python CLI as the front end\n"
        "Left open: `cargo test` still failing: 2 tests"
    )
    memory = remember(ctx, RememberRequest(digest, category="events", tags=("digest",))).memory
    here = memory.scope  # a digest is its project's: it feeds that project's profile
    with ctx.db.atomic():
        replace_profile(ctx.db, here, written(ctx.db, here, "2024-05-02T00:00:00Z"))
    lines = {(x.section, x.text, x.sources) for x in profile_lines(ctx.db, (here,))}
    assert ("focus", "port the parser to Rust", (memory.id,)) in lines
    assert ("decisions", "keep the Python CLI as the front end", (memory.id,)) in lines
    assert ("open problems", "`cargo test` still failing: 2 tests", (memory.id,)) in lines
    assert State.ACTIVE == memory.state


def test_focus_is_what_was_asked_once_not_a_command_a_paste_or_a_go_ahead(ctx: Context) -> None:
    """Lines the real sessions' profiles had: a go-ahead, a command typed into the prompt,
    a pasted shell prompt, and a request repeated as its open problem or its convention."""
    digest = (
        "Session of 2024-05-01 (claude-code) — port\n"
        "Asked: port the parser to Rust; continue implementation; python bench.py --rows 10; "
        "(venv) jim@box:/mnt/c/app$ claude -c No conversation found; "
        "Good. From now on, never log a token in plain text; "
        "scrolling in the viewer still does not work under tmux; "
        # rules of the real sessions' profiles: a chore, a pasted banner, a plan with "; "
        "commit and push; did you push?; plz fix ▐▛███▜▌ Claude Code v2.1.52; "
        "Implement the plan (uses XML; Rule statement 1; Rule statement 2)\n"
        "Left open: unanswered: scrolling in the viewer still does not work under tmux; "
        "`$sh = New-Object X; $s = $…` still failing: rejected\n"
        "Decided: │ Path must be within the workspace │"
    )
    memory = remember(ctx, RememberRequest(digest, category="events", tags=("digest",))).memory
    rule = remember(
        ctx,
        RememberRequest(
            "Never log a token in plain text.", category="preferences", scope=memory.scope
        ),
    )
    with ctx.db.atomic():
        replace_profile(ctx.db, memory.scope, written(ctx.db, memory.scope, "2024-05-02T00:00Z"))
    lines = {(x.section, x.text) for x in profile_lines(ctx.db, (memory.scope,))}
    plan = "Implement the plan (uses XML; Rule statement 1; Rule statement 2)"
    assert {t for s, t in lines if s == "focus"} == {"port the parser to Rust", plan}
    assert {t for s, t in lines if s == "open problems"} == {
        "unanswered: scrolling in the viewer still does not work under tmux",
        "`$sh = New-Object X; $s = $…` still failing: rejected",
    }
    assert not {t for s, t in lines if s == "decisions"}
    assert ("conventions", rule.memory.content) in lines


def _digest(ctx: Context, scope: str, day: str, asked: str, decided: str) -> Memory:
    text = f"Session of {day} (claude-code) — work\nAsked: {asked}\nDecided: {decided}"
    memory = Memory(
        content=text,
        category="events",
        kind="episodic",
        tags=["digest"],
        scope=scope,
        created_at=f"{day}T10:00:00.000Z",
    )
    with ctx.db.atomic():
        return Writer(ctx.db).create(memory, None)


def test_focus_is_the_current_work_and_a_one_off_instruction_no_convention(ctx: Context) -> None:
    """A walk's project: a six-month-old request was focus, and replies to the assistant's
    plan ("great, but ...") and pointers into the task ("the new file") were conventions."""
    scope = "github.com/acme/shop"
    old = _digest(
        ctx,
        scope,
        "2026-05-11",
        "raise the default context limit to 90 in the env var",
        "we always use uv for Python dependencies",
    )
    new = _digest(
        ctx,
        scope,
        "2026-11-29",
        "OK, write a file listing the HBO shows of the 90s; great, but sort them by year",
        "great, but keep in mind that the new file goes in the same folder as the old one",
    )
    for text in ("never log a token in plain text", "don't touch this file until step 3"):
        with ctx.db.atomic():
            Writer(ctx.db).create(Memory(content=text, category="patterns", scope=scope), None)
    with ctx.db.atomic():
        replace_profile(ctx.db, scope, written(ctx.db, scope, "2026-11-30T00:00:00.000Z"))
    lines = {(x.section, x.text): x.sources for x in profile_lines(ctx.db, (scope,))}
    focus = {(t, sources) for (s, t), sources in lines.items() if s == "focus"}
    # the first request opens the session however it starts; a later "great, but" replies
    assert focus == {("OK, write a file listing the HBO shows of the 90s", (new.id,))}
    assert lines[("decisions", "we always use uv for Python dependencies")] == (old.id,)
    assert not any("new file" in t for _, t in lines)
    assert {t for s, t in lines if s == "conventions"} == {"never log a token in plain text"}
    block = layered_context(ctx, scope, "shop", 2000).text()
    assert "never log a token" in block and "this file" not in block  # nor as a project fact


def test_no_answer_sign_off_bug_report_or_replaced_check_is_a_profile_line(ctx: Context) -> None:
    """The real sessions' profiles (s34): a later "no, ..." / "いや..." / "어 ..." answering the
    assistant and a stop hook's "Stop now." as focus; a bug report, "don't stop until ..."
    and a type checker a later one replaced as conventions."""
    scope = "github.com/acme/port"
    asked = (
        "port the parser to Rust\\ \\; no, set the working dir to /srv/app; "
        "いや別にシンボリックリンクなくても読み込まれるよ; "
        "어 그렇게 해줘. 그리고 가이드도 수정해줘; "
        "I've reviewed my work and it's complete. Stop now.; 違うファイルを使ってテストを書いて"
    )
    digest = _digest(ctx, scope, "2026-11-29", asked, "keep the CLI in Python")
    rules = (
        "Don't stop until all functions are ported, tests pass, and you have 100% coverage.",
        "导出的 Excel 里日期格式也不对，应该是 YYYY-MM-DD，现在是美国格式。",
        "以后数据库查询都要用 selectinload 预加载关联，不要在循环里查询。",
        "type checks run with `uv run pyright` (passed on 2026-10-14)",
        "type checks run with `uv run ty check` (passed on 2026-11-13)",
        "tests run with `pytest` (passed on 2026-11-10)",
        "tests run with `npm test` (passed on 2026-11-12)",
    )
    for text in rules:
        with ctx.db.atomic():
            Writer(ctx.db).create(Memory(content=text, category="patterns", scope=scope), None)
    with ctx.db.atomic():
        replace_profile(ctx.db, scope, written(ctx.db, scope, "2026-11-30T00:00:00.000Z"))
    lines = {(x.section, x.text): x.sources for x in profile_lines(ctx.db, (scope,))}
    assert {t for s, t in lines if s == "focus"} == {
        "port the parser to Rust",  # the first request opens its session however it starts
        "違うファイルを使ってテストを書いて",  # "a different file": no answer
    }
    assert lines[("focus", "port the parser to Rust")] == (digest.id,)
    assert {t for s, t in lines if s == "conventions"} == {
        "以后数据库查询都要用 selectinload 预加载关联，不要在循环里查询。",  # "from now on"
        "type checks run with `uv run ty check` (passed on 2026-11-13)",
        "tests run with `pytest` (passed on 2026-11-10)",  # two of one week both hold
        "tests run with `npm test` (passed on 2026-11-12)",
    }


def test_a_languages_command_names_it_and_a_tool_of_most_projects_comes_last(
    ctx: Context,
) -> None:
    """The real sessions' stacks (s34): spotter's had no Elixir (it runs `mix test`), repiq's
    no Go (`go test ./...`), and Git, which most projects name, came first."""
    texts = {
        "github.com/acme/billing": [
            "We commit with Git.",
            "Git hooks run the formatter.",
            "Pushed the branch with Git.",
            "tests run with `mix test` (passed on 2026-11-20)",
            "lint runs with `mix credo --strict` (passed on 2026-11-20)",
            "Jobs run on Oban. Go ahead and mix the two queues.",
        ],
        "github.com/acme/api": ["We commit with Git.", "tests run with `go test ./...`"],
        "github.com/acme/web": ["We commit with Git."],
        "github.com/acme/docs": ["We commit with Git."],
    }
    for scope, said in texts.items():
        for text in said:
            with ctx.db.atomic():
                Writer(ctx.db).create(Memory(content=text, category="patterns", scope=scope), None)
    index_pending(ctx.db)
    stacks = {
        scope: [
            x.text for x in written(ctx.db, scope, "2026-11-30T00:00:00Z") if x.section == "stack"
        ]
        for scope in texts
    }
    assert stacks["github.com/acme/billing"] == ["Elixir", "Oban", "Git"]
    assert stacks["github.com/acme/api"] == ["Go", "Git"]
    assert {e.name for e in entities("Go ahead and mix the two; we go on")} == set()


def test_every_projects_profile_is_read_latest_work_first(ctx: Context) -> None:
    """The viewer's Profile page and `profile --all-scopes` listed projects in the order
    maintain wrote them: the global profile first, then the latest work's project."""
    from memctl.retrieve.profile import build_profile

    days = {"github.com/acme/old": "2026-01-05", "github.com/acme/new": "2026-11-20"}
    for scope, day in [*days.items(), ("global", "2026-06-01")]:
        _digest(ctx, scope, day, "port the parser to Rust", "keep the CLI in Python")
    for scope in ("github.com/acme/old", "global", "github.com/acme/new"):  # as maintain may
        with ctx.db.atomic():
            replace_profile(ctx.db, scope, written(ctx.db, scope, "2026-11-30T00:00:00Z"))
    shown = build_profile(ctx, None, 20).written
    assert list(dict.fromkeys(x.scope for x in shown)) == [
        "global",
        "github.com/acme/new",
        "github.com/acme/old",
    ]
    assert [x.section for x in shown if x.scope == "global"] == ["focus", "decisions"]


def test_index_is_idempotent(ctx: Context) -> None:
    memory_id = remembered(ctx, "Erin works at Umbrella.")
    item = Written(memory_id, "Erin works at Umbrella.")
    with ctx.db.atomic():
        index(ctx.db, [item])
        index(ctx.db, [item])
    assert store.graph_counts(ctx.db) == {"entities": 2, "triples": 1, "superseded": 0}


def test_triples_travel_with_their_memory_and_bad_ones_are_refused(tmp_path: Path) -> None:
    remote = bare_repo(tmp_path)
    a, b = machine(tmp_path, "a", remote), machine(tmp_path, "b", remote)
    try:
        sync_api.init(a, str(remote))
        sync_api.init(b, str(remote))
        memory = shared(a, "The billing service moved off the old cluster.")
        given = parse_triples([["billing service", "runs on", "Nomad"]])  # as an LLM gives it
        with a.db.atomic():
            index(a.db, [Written(memory.id, memory.content, extra=given)])
        sync_api.sync(a, sync_api.SyncRequest())
        sync_api.sync(b, sync_api.SyncRequest())
        nomad = store.entities_by_keys(b.db, ["nomad"])["nomad"].id
        (came,) = store.triples_touching(b.db, [nomad])
        assert came.text == "billing service → runs on → Nomad"
        assert [(s.memory_id, s.origin) for s in came.sources] == [(memory.id, store.SYNC)]
    finally:
        a.close()
        b.close()
    text = render(Memory(content="fine", id="a" * 32), [], [("api", "uses", "x")], home_key=b"k")
    assert "triples:\n- - api\n  - uses\n  - x" in text
    assert parse(text, "a" * 32, "h", "global").triples == [("api", "uses", "x")]
    for bad, why in (
        ("triples: [[a, b]]", "a triple must be a list of 3 short strings"),
        ("triples: [[a, b, ghp_" + "x1Y2z3" * 6 + "]]", "secret"),
    ):
        with pytest.raises(BadFile, match=why):
            parse(text.split("triples:")[0] + bad + "\n", "a" * 32, "h", "global")


def test_a_two_hop_path_no_candidate_states_is_one_synthetic_result(ctx: Context) -> None:
    moved = remembered(ctx, "Bob moved to Berlin in 2020.")
    works = remembered(ctx, "Bob works as a nurse.")
    remembered(ctx, "Berlin has many parks.")
    run = start(ctx, "what work does the person who moved to Berlin do")
    before = run_stages(run, stages_for(run.params)[: stages_for(run.params).index(graph)])
    kept = [c for c in before if c.id not in {moved, works}]
    assert kept, "the test needs another candidate"
    after = graph(run, kept)
    (made,) = [c for c in after if is_synthetic(c.memory)]
    assert made.memory.content == (
        f"Bob → moved to → Berlin; Bob → works as → nurse (from memories {moved[:8]}, {works[:8]})"
    )
    found = recall(ctx, "what work does the person who moved to Berlin do")
    assert all(not is_synthetic(r.memory) for r in found.results)  # both are candidates here
    assert store.graph_counts(ctx.db)["triples"] == 2
    assert origin(made.memory) == "knowledge graph"


def test_a_superseded_memory_keeps_its_triple_as_history(ctx: Context) -> None:
    old = remembered(ctx, "Dana uses Emacs.")
    new = remembered(ctx, "Dana uses Vim.")
    memory = memory_store.get_memory(ctx.db, old)
    assert memory is not None
    with ctx.db.atomic():
        Writer(ctx.db).supersede(memory, new, "dedup")
    assert run_cli("maintain", "--only", "graph").returncode == 0
    shown = json.loads(run_cli("graph", "Dana", "--json").stdout)
    assert [t["object"] for t in shown["relations"]] == ["Vim"]
    (was,) = shown["history"]
    assert (was["object"], was["state"]) == ("Emacs", "superseded")
    assert was["superseded_by"] == shown["relations"][0]["id"]
    assert was["sources"] == [
        {"memory_id": old, "message": "", "state": "superseded", "origin": "rules"}
    ]


def test_coding_facts_relate_their_project_commands_and_fixes(
    make_ctx: Callable[..., Context],
) -> None:
    assert said_of("tests run with `mix test` (passed on 2026-02-12)", "spotter") == {
        ("spotter", "tests run with", "mix test")
    }
    fixed = (
        "`python run.py` failed: ModuleNotFoundError → fixed by editing run.py, "
        "setup.cfg and `pip install -r requirements.txt`"
    )
    assert said_of(fixed, "demo") == {
        ("python run.py", "fixed by", "run.py"),
        ("python run.py", "fixed by", "setup.cfg"),
        ("python run.py", "fixed by", "pip install -r requirements.txt"),
    }
    ctx = make_ctx()
    places = {"ruff check": "github.com/acme/billing", "ruff check --fix": "path:0123456789abcdef"}
    places["ruff check ."] = "global"
    with ctx.db.atomic():
        for command, scope in places.items():
            memory = Memory(content=f"lint runs with `{command}`", scope=scope)
            Writer(ctx.db).create(memory, None)
    index_pending(ctx.db)
    (triple,) = store.triples_touching(ctx.db, [store.entity_id(ctx.db, "ruff check") or 0])
    assert triple.text == "billing → lint run with → ruff check"
    # a directory's hash or the global scope is no project a person would ask about
    for name in ("0123456789abcdef", "global"):
        assert store.entity_id(ctx.db, name) is None
    for command in ("ruff check --fix", "ruff check ."):
        found = store.entity_id(ctx.db, command)
        assert found is not None and not store.triples_touching(ctx.db, [found])


def test_a_command_the_digest_cut_short_names_nothing() -> None:
    """ "`git commit -m "feat: instrument hoo…` failed": no entity of that name, no triple."""
    cut = (
        '`git add -A && git commit -m "feat: instrument hoo…` failed: Pre-commit validation '
        "failed → fixed by `mix format` and `mix credo --stric…`"
    )
    assert said_of(cut, "spotter") == set()
    assert [e.name for e in entities(cut) if e.kind == "command"] == ["mix format"]


def test_a_digest_relates_its_project_to_its_files_and_commands_not_its_heading() -> None:
    digest = (
        "Session of 2026-02-12 (claude-code) — Work on bead spotter-4te\n"
        "Asked: add tracing\n"
        "Created: lib/otel.ex\n"
        "Edited: mix.exs; lib/app.ex\n"
        'Ran: mix test; git commit -m "feat: add OTEL depen…\n'
        "Edited: lib/cut_at_the_end.ex"
    )
    assert said_of(digest, "spotter") == {
        ("spotter", "created", "lib/otel.ex"),
        ("spotter", "edited", "mix.exs"),
        ("spotter", "edited", "lib/app.ex"),
        ("spotter", "ran", "mix test"),
    }
    # a path inside the project is the file its relative paths name: one entity, not two
    absolute = "Edited: /home/ann/src/spotter/lib/app.ex; /tmp/spotter-notes/x.md\n"
    assert said_of(absolute, "spotter") == {
        ("spotter", "edited", "lib/app.ex"),
        ("spotter", "edited", "/tmp/spotter-notes/x.md"),
    }
    # ... and so is one a memory's prose names (rules v11), the absolute path its alias
    prose = (
        "Outcome: fixed /home/ann/src/spotter/lib/app.py (see `/home/ann/src/spotter/lib/app.py`)"
    )
    named = {e.name: e for e in entities(prose, "spotter")}
    assert named["lib/app.py"].kind == "file" and len(named) == 1
    assert named["lib/app.py"].spelled == ("/home/ann/src/spotter/lib/app.py",)
    assert {e.name for e in entities(prose)} == {"/home/ann/src/spotter/lib/app.py"}
    # a "; " inside a command's brackets is the command's own, as in the profile's items
    subshell = "Ran: (cd web; npm test); mix test\n"
    assert said_of(subshell, "spotter") == {
        ("spotter", "ran", "(cd web; npm test)"),
        ("spotter", "ran", "mix test"),
    }
    # the heading's day and client are memctl's template: the graph lists neither
    named = {(e.name, e.kind) for e in entities(digest.replace("claude-code", "codex"))}
    assert not {k for _, k in named} & {"date"} and ("Codex", "tool") not in named


def test_code_is_at_most_a_thing_and_a_name_owning_something_no_place() -> None:
    """Rules v10, from the real sessions' graph: a heading quoted in code named the tool
    Things, "├── Justfile" a person, "in Steve Yegge's own writing" a place, and a clone
    URL one repository twice."""
    assert "Things" not in names("Translate `Things to Avoid` → `피해야 할 것`")
    assert names("It runs `mount SessionLive` first")["SessionLive"] == "thing"
    assert names("Add a recipe to the Justfile.")["Justfile"] == "file"
    assert names("The doc grounds Beads in Steve Yegge's own writing")["Steve Yegge"] == "person"
    assert names("She grew up in Sweden")["Sweden"] == "place"
    cloned = "Pushed: main to https://github.com/ann/shop.git; see github.com/ann/shop/issues"
    assert {n for n, kind in names(cloned).items() if kind == "repository"} == {"ann/shop"}


def test_a_throwaway_or_worktree_directory_names_no_project_but_places_its_files() -> None:
    """Sessions run in Python's temporary directories named projects "tmpqwh7888i", and in
    worktrees "spotter-4te": the scope's repository names the project then, and paths
    still read as the session's."""
    assert project_of("github.com/ann/port", "/tmp/tmpqwh7888i") == ("port", "tmpqwh7888i")
    assert project_of("path:1a2b", "/tmp/tmp.Xk3j9QzA1b") == (None, "tmp.Xk3j9QzA1b")
    assert project_of("path:1a2b", "/home/ann/src/tmpfiles") == ("tmpfiles", "tmpfiles")
    # a worktree's folder is named after its branch or task, not the project
    assert (
        project_of("github.com/ann/spotter", "/src/spotter-worktrees/spotter-4te")[0] == "spotter"
    )
    assert project_of("path:1a2b", "/src/shop/.claude/worktrees/strange-driscoll-873c0f")[0] is None
    assert project_of("path:1a2b", "/src/worktrees-notes")[0] == "worktrees-notes"
    edited = "Edited: /tmp/tmpqwh7888i/Cargo.toml\n"
    assert triples(edited, project="port", folder="tmpqwh7888i")[0].object.name == "Cargo.toml"


def test_the_assistant_a_message_greets_is_no_tool_of_the_work() -> None:
    """ "Hey Claude, ..." put Claude in a project's stack; a person greeted stays a person."""
    assert "Claude" not in names("Hey Claude, can you add a CI workflow for pytest?")
    assert "Codex" not in names("thanks Codex! now build it with Docker")
    assert names("We review with Claude before merging")["Claude"] == "tool"
    assert names("Hey Mel, how are you?") == {"Mel": "person"}


def test_a_checks_day_and_a_bare_flag_are_no_entities() -> None:
    """The day memctl saw a check pass is its template, and `--no-verify` is no command:
    on the real sessions both were among the graph's most named entities."""
    fact = "tests run with `mix test` (passed on 2026-02-12); never commit with `--no-verify`"
    named = {(e.name, e.kind) for e in entities(fact)}
    assert ("mix test", "command") in named
    assert not {k for _, k in named} & {"date"}
    assert "--no-verify" not in {n for n, _ in named}
    assert ("2026-02-12", "date") in names_kinds("The release is on 2026-02-12 (passed on QA)")


def names_kinds(text: str) -> set[tuple[str, str]]:
    return {(e.name, e.kind) for e in entities(text)}


def said_of(text: str, project: str) -> set[tuple[str, str, str]]:
    return {(t.subject.name, t.predicate, t.object.name) for t in triples(text, project=project)}


def test_the_graph_stage_constants_are_settings(make_ctx: Callable[..., Context]) -> None:
    ctx = make_ctx()
    moved = remembered(ctx, "Bob moved to Berlin in 2020.")
    works = remembered(ctx, "Bob works as a nurse.")
    remembered(ctx, "Berlin has many parks.")
    index_pending(ctx.db)
    question = "what work does the person who moved to Berlin do"

    def synthetic_after(context: Context) -> list[Candidate]:
        run = start(context, question)
        order = stages_for(run.params)
        before = run_stages(run, order[: order.index(graph)])
        kept = [c for c in before if c.id not in {moved, works}]
        return [c for c in graph(run, kept) if is_synthetic(c.memory)]

    assert len(synthetic_after(ctx)) == 1  # the default: one synthetic result
    assert synthetic_after(make_ctx(recall__graph_synthetic=0)) == []
    assert synthetic_after(make_ctx(recall__graph_share=0.0)) == []
    assert synthetic_after(make_ctx(recall__graph_min_match=1.0)) == []
    assert synthetic_after(make_ctx(recall__graph_entities=0)) == []


def test_a_graph_setting_out_of_range_is_refused_in_one_line() -> None:
    done = run_cli("-c", "recall.graph_share=1.5", "recall", "who moved to Berlin")
    assert done.returncode != 0
    (line,) = done.stderr.strip().splitlines()
    assert "recall.graph_share" in line and "<= 1" in line


def test_an_llm_writes_the_profile_citing_the_memories_of_the_lines_it_used(
    make_ctx: Callable[..., Context], ollama_server: FakeOllama
) -> None:
    ctx = make_ctx(llm_url=ollama_server.url)
    role = remember(ctx, RememberRequest("The user is a backend engineer", category="profile"))
    rule = remember(ctx, RememberRequest("Always run ruff before committing", "preferences"))
    ruled = {x.text: x.sources for x in written(ctx.db, "global", "2024-05-02T00:00:00Z")}
    assert ruled["Always run ruff before committing"] == (rule.memory.id,)
    numbered = list(ruled)
    cited = [numbered.index("The user is a backend engineer") + 1]
    cited.append(numbered.index("Always run ruff before committing") + 1)
    line = {"section": "role", "text": "Backend engineer who runs ruff first", "notes": cited}
    ollama_server.script_chat({"lines": [line]}, {"lines": [line]})
    done = run_maintain(ctx, "profile")
    assert done.task("profile").counts["written by the llm"] >= 1
    (made,) = profile_lines(ctx.db, ("global",))
    assert (made.section, made.text, made.written_by) == ("role", line["text"], "llm")
    assert set(made.sources) == {role.memory.id, rule.memory.id}
    asked = ollama_server.requests_to("/api/chat")[0]["messages"][-1]["content"]
    assert "[role] The user is a backend engineer" in asked
    forget(ctx, role.memory.id)  # a line goes with any of its sources
    assert profile_lines(ctx.db, ("global",)) == []


def test_an_llm_citing_notes_that_are_not_there_leaves_the_rules_lines(
    make_ctx: Callable[..., Context], ollama_server: FakeOllama
) -> None:
    ctx = make_ctx(llm_url=ollama_server.url)
    remember(ctx, RememberRequest("The user is a backend engineer", category="profile"))
    ollama_server.chat_fn = lambda messages: {
        "lines": [{"section": "role", "text": "Invented", "notes": [99]}]
    }
    run_maintain(ctx, "profile")
    assert ollama_server.requests_to("/api/chat")  # asked, and refused
    lines = profile_lines(ctx.db, ("global",))
    assert [(x.text, x.written_by) for x in lines] == [("The user is a backend engineer", "rules")]


def run_maintain(ctx: Context, only: str) -> MaintainResult:
    return maintain(ctx, MaintainRequest(only=only))
