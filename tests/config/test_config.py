"""Configuration layers and the errors a user sees, config files, and the project scope from git.

Everything runs on real files, real git repositories and, for what a user types, the real
``memctl`` process.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from memctl.config.keys import KEYS, USER_KEYS, key_named
from memctl.config.scope import normalise_remote, project_root, project_scope
from memctl.config.settings import PROJECT_CONFIG, load_settings, read_config_file
from memctl.config.writing import template, write_config_value
from memctl.errors import ConfigError, StoreError
from memctl.store.database import Database
from tests.conftest import run_cli

DEFAULTS = {key.name: key.default for key in KEYS}
PATH_SCOPE = re.compile(r"path:[0-9a-f]{32}")  # keyed: config.scope.keyed_path
KEY = bytes(range(32))  # a home's key (config.files.forget_key)
WIDGET = "github.com/acme/widget"
# Git must neither read nor need the machine's own configuration.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
        timeout=30,
    )


def make_repo(path: Path, remote: str | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    if remote:
        git(path, "remote", "add", "origin", remote)
    return path.resolve()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def environ(home: Path, **extra: str) -> dict[str, str]:
    return {"MEMCTL_HOME": str(home), **extra}


def one_line_error(done: subprocess.CompletedProcess[str], code: int = 2) -> str:
    """The error message of a failed run, checked to be a single line and no traceback."""
    assert done.returncode == code, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("memctl: error: ")
    return lines[0]


# --- layers -------------------------------------------------------------------------------


@pytest.fixture
def layered(home: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    """A home file and a project file at a git root; returns (home file, project file, subdir).

    list.limit is set only at home; recall.limit at home and in the project; recall.candidates
    also in the environment (by the tests); recall.spread_seeds also by a flag.
    """
    repo = make_repo(tmp_path / "repo")
    subdir = repo / "src" / "pkg"
    subdir.mkdir(parents=True)
    home_file = write(
        home / "config.yaml",
        "list:\n  limit: 7\nrecall:\n  limit: 11\n  candidates: 4\n  spread_seeds: 70\n",
    )
    project_file = write(
        repo / PROJECT_CONFIG, "recall.limit: 12\nrecall:\n  candidates: 5\n  spread_seeds: 80\n"
    )
    return home_file, project_file, subdir


def test_each_layer_overrides_the_one_below_and_says_where_it_came_from(
    home: Path, layered: tuple[Path, Path, Path]
) -> None:
    home_file, project_file, subdir = layered
    settings = load_settings(
        cwd=subdir,
        overrides={"recall.spread_seeds": "99"},
        environ=environ(home, MEMCTL_RECALL_CANDIDATES="6", MEMCTL_RECALL_SPREAD_SEEDS="90"),
    )
    assert settings.values == {
        **DEFAULTS,
        "list.limit": 7,
        "recall.limit": 12,
        "recall.candidates": 6,
        "recall.spread_seeds": 99,
    }
    assert settings.sources == {
        **dict.fromkeys(DEFAULTS, "default"),
        "list.limit": str(home_file),
        "recall.limit": str(project_file),
        "recall.candidates": "environment",
        "recall.spread_seeds": "flag",
    }
    assert (settings.list_limit, settings.recall_limit, settings.recall_candidates) == (7, 12, 6)
    assert settings.project_config == project_file


def test_config_show_json_reports_value_and_source_of_every_key(
    layered: tuple[Path, Path, Path],
) -> None:
    home_file, project_file, subdir = layered
    done = run_cli(
        "-c",
        "recall.spread_seeds=99",
        "config",
        "show",
        "--json",
        cwd=subdir,
        env={
            "MEMCTL_RECALL_CANDIDATES": "6",
            "MEMCTL_RECALL_SPREAD_SEEDS": "90",
            "OLLAMA_HOST": "gpu-box:11434",
        },
    )
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert list(shown) == list(DEFAULTS)
    assert shown["embed.batch_size"] == {"value": 32, "source": "default"}
    assert shown["list.limit"] == {"value": 7, "source": str(home_file)}
    assert shown["recall.limit"] == {"value": 12, "source": str(project_file)}
    assert shown["recall.candidates"] == {"value": 6, "source": "environment"}
    assert shown["recall.spread_seeds"] == {"value": 99, "source": "flag"}
    assert shown["ollama.host"] == {"value": "http://gpu-box:11434", "source": "OLLAMA_HOST"}


# --- unknown keys and bad values ----------------------------------------------------------


@pytest.mark.parametrize("where", ["file", "set", "flag", "env"])
def test_unknown_key_is_one_short_line_naming_it_and_the_closest(home: Path, where: str) -> None:
    if where == "file":
        write(home / "config.yaml", "recall:\n  limitt: 5\n")
        done = run_cli("config", "show")
    elif where == "set":
        done = run_cli("config", "set", "recall.limitt", "5")
    elif where == "flag":
        done = run_cli("-c", "recall.limitt=5", "config", "show")
    else:
        done = run_cli("config", "show", env={"MEMCTL_RECALL_LIMITT": "5"})
    message = one_line_error(done)
    assert done.stdout == ""
    if where == "env":
        assert "MEMCTL_RECALL_LIMITT (did you mean 'MEMCTL_RECALL_LIMIT'?)" in message
    else:
        assert "'recall.limitt' (did you mean 'recall.limit'?)" in message
    # short apart from the file's own path, which is as long as the user's home makes it
    assert "memctl config show" in message
    assert len(message.replace(str(home / "config.yaml"), "")) <= 200
    if where == "file":
        assert str(home / "config.yaml") in message
    else:
        assert not (home / "config.yaml").exists()


def test_a_key_like_none_known_suggests_nothing() -> None:
    with pytest.raises(ConfigError) as caught:
        key_named("zzzz")
    assert str(caught.value) == "unknown config key 'zzzz'; see `memctl config show --all`"


@pytest.mark.parametrize(
    ("name", "value", "allowed"),
    [
        ("recall.limit", "abc", "an integer >= 1 and <= 1000"),
        ("recall.limit", "0", "an integer >= 1 and <= 1000"),
        ("recall.limit", "2.5", "an integer >= 1 and <= 1000"),
        ("embedder", "gpt", "one of local, ollama, hash"),
        ("embedder", "Local", "one of local, ollama, hash"),
        ("ollama.timeout", "-1", "a number >= 0.1"),
        ("ollama.timeout", "nan", "a number >= 0.1"),
        ("recall.weight_vector", "inf", "a number >= 0"),
        ("remember.importance", "1.5", "a number >= 0 and <= 1"),
        (
            "remember.category",
            "hobbies",
            "one of auto, profile, preferences, entities, events, cases, patterns",
        ),
    ],
)
def test_bad_value_names_the_key_and_what_is_allowed(
    home: Path, name: str, value: str, allowed: str
) -> None:
    env_var = "MEMCTL_" + name.replace(".", "_").upper()
    for layer in ({"overrides": {name: value}}, {"environ": environ(home, **{env_var: value})}):
        with pytest.raises(ConfigError) as raised:
            load_settings(**layer)  # type: ignore[arg-type]
        assert str(raised.value) == f"bad value {value!r} for {name}: expected {allowed}"
    with pytest.raises(ConfigError, match=re.escape(f"for {name}: expected {allowed}")):
        write_config_value(home / "config.yaml", name, value)
    assert not (home / "config.yaml").exists()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("recall:\n  limit: yes\n", "bad value True for recall.limit: expected an integer"),
        ("ollama:\n  timeout: .nan\n", "bad value nan for ollama.timeout"),
        ("ollama:\n  host: [a, b]\n", "bad value ['a', 'b'] for ollama.host: expected a string"),
        ("- recall.limit\n", "expected a mapping of config keys"),
        ("recall: [limit: 5\n", "not valid YAML"),
        ("recall:\n\tlimit: 5\n", "not valid YAML"),
    ],
)
def test_a_broken_config_file_is_named_in_the_error(home: Path, text: str, problem: str) -> None:
    path = write(home / "config.yaml", text)
    with pytest.raises(ConfigError) as raised:
        read_config_file(path)
    assert str(raised.value).startswith(f"{path}: ")
    assert problem in str(raised.value)
    assert "\n" not in str(raised.value)


def test_invalid_yaml_in_the_project_file_is_one_line_naming_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    project_file = write(repo / PROJECT_CONFIG, "recall: {limit: 5\n")
    message = one_line_error(run_cli("config", "show", cwd=repo))
    assert f"{project_file}: not valid YAML" in message


def test_config_set_rejects_a_bad_value_and_leaves_the_file_alone(home: Path) -> None:
    message = one_line_error(run_cli("config", "set", "embedder", "gpt"))
    assert "bad value 'gpt' for embedder: expected one of local, ollama, hash" in message
    assert not (home / "config.yaml").exists()


# --- config files -------------------------------------------------------------------------


def uncomment_keys(text: str) -> str:
    """The template with every ``# key: value`` line uncommented, as a user would edit it."""
    return re.sub(r"^# ([a-z0-9_]+(?:\.[a-z0-9_]+)*: )", r"\1", text, flags=re.M)


def test_template_uncommented_loads_to_exactly_the_defaults(home: Path) -> None:
    text = template()
    assert all(line.startswith("#") for line in text.splitlines())
    settings, tuning = text.split("# Tuning (advanced)")  # the settings first, then the tuning
    assert all((f"\n# {key.name}: " in tuning) == key.tuning for key in KEYS)
    for key in KEYS:
        assert f"\n# {key.name}: " in text
        assert f"({key.allowed()})" in text
    path = write(home / "config.yaml", uncomment_keys(text))
    assert sum(not line.startswith("#") for line in path.read_text().splitlines()) == len(KEYS)
    assert read_config_file(path) == DEFAULTS
    settings = load_settings(environ=environ(home, OLLAMA_HOST="elsewhere:1"))
    assert settings.values == DEFAULTS
    assert set(settings.sources.values()) == {str(path)}


def test_config_set_wins_over_a_line_uncommented_from_the_template(home: Path) -> None:
    path = write(home / "config.yaml", uncomment_keys(template()))
    assert write_config_value(path, "recall.limit", "5") == 5
    assert write_config_value(path, "ollama.host", "http://gpu:11434") == "http://gpu:11434"
    settings = load_settings(environ=environ(home))
    assert settings.values == {**DEFAULTS, "recall.limit": 5, "ollama.host": "http://gpu:11434"}
    # a nested spelling and a flat one of the same key: set replaces both
    write(path, "recall:\n  limit: 3\nrecall.limit: 4\n")
    write_config_value(path, "recall.limit", "6")
    assert read_config_file(path) == {"recall.limit": 6}


@pytest.mark.fresh
def test_config_init_refuses_to_overwrite_and_config_set_shows_up(home: Path) -> None:
    path = home / "config.yaml"
    done = run_cli("config", "init")
    assert done.returncode == 0, done.stderr
    assert path.read_text(encoding="utf-8") == template()

    edited = write(path, "recall:\n  limit: 3\n").read_text()
    message = one_line_error(run_cli("config", "init"))
    assert str(path) in message and "--force" in message
    assert path.read_text() == edited

    assert run_cli("config", "init", "--force").returncode == 0
    assert path.read_text(encoding="utf-8") == template()

    done = run_cli("config", "set", "recall.limit", "5")
    assert done.returncode == 0, done.stderr
    assert "recall.limit = 5" in done.stdout
    shown = json.loads(run_cli("config", "show", "--json", real_model=True).stdout)
    assert shown["recall.limit"] == {"value": 5, "source": str(path)}
    tests_set = {"recall.resident"}  # off in every test's environment (conftest.isolated)
    set_here = {name for name, item in shown.items() if item["source"] != "default"}
    assert set_here - tests_set == {"recall.limit"}


def test_project_variants_write_at_the_git_root(home: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", "git@github.com:Acme/Widget.git")
    subdir = repo / "docs" / "api"
    subdir.mkdir(parents=True)
    project_file = repo / ".memctl" / "config.yaml"

    assert run_cli("config", "init", "--project", cwd=subdir).returncode == 0
    assert project_file.read_text(encoding="utf-8") == template(project=True)
    done = run_cli("config", "set", "--project", "recall.limit", "7", cwd=subdir)
    assert done.returncode == 0, done.stderr

    assert not (subdir / ".memctl").exists()
    assert not (home / "config.yaml").exists()
    settings = load_settings(cwd=subdir, environ=environ(home))
    assert settings.recall_limit == 7
    assert settings.sources["recall.limit"] == str(project_file)
    # the project file applies only inside its project
    assert load_settings(cwd=tmp_path / "project", environ=environ(home)).recall_limit == 10


# --- OLLAMA_HOST --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ollama_host", "url"),
    [
        ("gpu-box:11434", "http://gpu-box:11434"),
        ("10.0.0.5:8080", "http://10.0.0.5:8080"),
        ("gpu-box", "http://gpu-box:11434"),  # ollama's default port, not http's 80
        ("0.0.0.0", "http://0.0.0.0:11434"),
        (":56789", "http://127.0.0.1:56789"),
        ("[::1]:8080", "http://[::1]:8080"),
        ("https://ollama.example.com", "https://ollama.example.com"),
        ("http://[::1]:11434", "http://[::1]:11434"),
    ],
)
def test_ollama_host_is_used_when_the_key_is_not_set(
    home: Path, ollama_host: str, url: str
) -> None:
    settings = load_settings(environ=environ(home, OLLAMA_HOST=ollama_host))
    assert settings.ollama_host == url
    assert settings.sources["ollama.host"] == "OLLAMA_HOST"


def test_ollama_host_loses_to_any_setting_of_the_key(home: Path, tmp_path: Path) -> None:
    assert load_settings(environ=environ(home, OLLAMA_HOST="")).ollama_host == (
        "http://127.0.0.1:11434"
    )
    with_env = environ(home, OLLAMA_HOST="gpu-box:11434")
    project = tmp_path / "project"
    write(project / PROJECT_CONFIG, "ollama:\n  host: http://project:1\n")
    from_project = load_settings(environ=with_env)  # a cloned repository's server: left out
    assert from_project.ollama_host == "http://gpu-box:11434"
    assert from_project.refused == ("ollama.host",)
    home_file = write(home / "config.yaml", "ollama.host: http://home:2\n")
    (project / PROJECT_CONFIG).unlink()
    settings = load_settings(environ=with_env)
    assert settings.ollama_host == "http://home:2"
    assert settings.sources["ollama.host"] == str(home_file)
    with_env["MEMCTL_OLLAMA_HOST"] = "http://env:3"
    assert load_settings(environ=with_env).ollama_host == "http://env:3"
    assert (
        load_settings(overrides={"ollama.host": "http://flag:4"}, environ=with_env).ollama_host
        == "http://flag:4"
    )


def test_a_data_directory_another_user_owns_or_every_user_may_write_in_is_refused(
    tmp_path: Path,
) -> None:
    """MEMCTL_HOME=/tmp/memctl, a folder another local user made first: their config.yaml
    would say where this user's sessions go (an LLM endpoint, a sync remote), and a
    memctl.db of theirs what this user's assistants are told. Refused, as the resident
    process's folder is, before anything is read or written."""
    home = tmp_path / "shared"
    home.mkdir()
    (home / "config.yaml").write_text("recall:\n  limit: 1\n", encoding="utf-8")
    home.chmod(0o777)
    with pytest.raises(ConfigError, match="may be written by every user"):
        load_settings(home=home)
    with pytest.raises(StoreError, match="may be written by every user"):
        Database.open(home / "memctl.db")
    assert not (home / "memctl.db").exists()
    home.chmod(0o755)
    assert load_settings(home=home).recall_limit == 1  # the user's own
    if os.geteuid() == 0:  # only root can give a folder to another user
        os.chown(home, 65534, 65534)
        with pytest.raises(ConfigError, match="belongs to user 65534"):
            load_settings(home=home)


# --- scope --------------------------------------------------------------------------------


def test_git_remote_names_the_scope_from_any_subdirectory(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "Widget", "git@github.com:Acme/Widget.git")
    deep = repo / "src" / "widget" / "core"
    deep.mkdir(parents=True)
    assert project_scope(repo, KEY) == WIDGET
    assert project_scope(deep, KEY) == WIDGET
    assert project_root(deep) == repo
    assert load_settings(cwd=deep).project_scope == WIDGET


def test_clones_with_https_and_scp_urls_share_a_scope(tmp_path: Path) -> None:
    https = make_repo(tmp_path / "one", "https://user:token@github.com/acme/widget.git")
    scp = make_repo(tmp_path / "two", "git@github.com:Acme/Widget.git")
    assert project_scope(https, KEY) == project_scope(scp, KEY) == WIDGET
    other = make_repo(tmp_path / "three", "git@github.com:acme/widget-cli.git")
    assert project_scope(other, KEY) == "github.com/acme/widget-cli"


def test_origin_is_preferred_to_other_remotes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "fork")
    git(repo, "remote", "add", "aaa-upstream", "git@github.com:upstream/widget.git")
    assert project_scope(repo, KEY) == "github.com/upstream/widget"
    git(repo, "remote", "add", "origin", "git@github.com:me/widget.git")
    assert project_scope(repo, KEY) == "github.com/me/widget"


def test_without_a_remote_the_scope_is_a_hash_of_the_directory(tmp_path: Path) -> None:
    no_remote = make_repo(tmp_path / "no-remote")
    (no_remote / "sub").mkdir()
    plain_a = tmp_path / "plain-a"
    plain_b = tmp_path / "plain-b"
    plain_a.mkdir()
    plain_b.mkdir()
    scopes = [project_scope(where, KEY) for where in (no_remote, plain_a, plain_b)]
    assert all(PATH_SCOPE.fullmatch(scope) for scope in scopes)
    assert len(set(scopes)) == 3
    assert project_scope(no_remote / "sub", KEY) == scopes[0]
    assert project_scope(plain_a, KEY) == scopes[1]  # stable


@pytest.mark.parametrize("remote", ["git@github.com:Acme/Widget.git", None])
def test_a_worktree_shares_the_scope_of_its_main_repository(
    tmp_path: Path, remote: str | None
) -> None:
    main = make_repo(tmp_path / "main", remote)
    git(main, "commit", "-q", "--allow-empty", "-m", "start")
    git(main, "worktree", "add", "-q", str(tmp_path / "feature"))
    feature = (tmp_path / "feature").resolve()
    (feature / "src").mkdir()
    assert (feature / ".git").is_file()
    assert project_scope(feature / "src", KEY) == project_scope(main, KEY)
    if remote:
        assert project_scope(feature, KEY) == WIDGET
    assert project_root(feature / "src") == feature  # its own project config


@pytest.mark.parametrize(
    ("url", "scope"),
    [
        ("git@github.com:Acme/Widget.git", WIDGET),
        ("git@github.com:acme/widget", WIDGET),
        ("github.com:acme/widget.git", WIDGET),
        ("  git@github.com:acme/widget.git\n", WIDGET),
        ("https://github.com/acme/widget.git", WIDGET),
        ("https://github.com/acme/widget", WIDGET),
        ("https://github.com/acme/widget/", WIDGET),
        ("https://github.com/acme/widget.git/", WIDGET),
        ("https://user:token@github.com/acme/widget.git", WIDGET),
        ("https://user@github.com:443/acme/widget", WIDGET),
        ("HTTPS://GitHub.com/Acme/Widget.GIT", WIDGET),
        ("http://github.com/acme/widget", WIDGET),
        ("ssh://git@github.com/acme/widget.git", WIDGET),
        ("ssh://git@github.com:22/acme/widget.git", WIDGET),
        ("git+ssh://git@github.com/acme/widget.git", WIDGET),
        ("git://github.com/acme/widget.git", WIDGET),
        ("https://gitlab.example.com:8443/group/sub/proj.git", "gitlab.example.com/group/sub/proj"),
        ("git@gitlab.example.com:group/sub/proj.git", "gitlab.example.com/group/sub/proj"),
        ("ssh://git@gitlab.example.com:2222/group/sub/proj", "gitlab.example.com/group/sub/proj"),
        ("git@host:/srv/git/proj.git", "host/srv/git/proj"),
        ("ssh://host/srv/git/proj.git", "host/srv/git/proj"),
        ("/srv/git/widget.git", "file:/srv/git/widget"),
        ("/srv/git/widget/", "file:/srv/git/widget"),
        ("/srv/git/widget/.git", "file:/srv/git/widget"),
        ("file:///srv/git/widget.git", "file:/srv/git/widget"),
        ("/srv/Git/Widget", "file:/srv/Git/Widget"),
    ],
)
def test_normalise_remote(url: str, scope: str) -> None:
    assert normalise_remote(url) == scope


def test_different_repositories_keep_different_scopes() -> None:
    urls = [
        "git@github.com:acme/widget.git",
        "git@gitlab.com:acme/widget.git",
        "git@github.com:acme/widget-cli.git",
        "git@github.com:other/widget.git",
        "git@github.com:acme/group/widget.git",
        "/srv/git/widget",
        "/srv/git/widget2",
    ]
    assert len({normalise_remote(url) for url in urls}) == len(urls)


# --- end to end ---------------------------------------------------------------------------


def test_a_memory_remembered_in_one_clone_is_recalled_in_another(tmp_path: Path) -> None:
    here = make_repo(tmp_path / "laptop" / "widget", "git@github.com:Acme/Widget.git")
    there = make_repo(
        tmp_path / "server" / "widget", "https://user:token@github.com/acme/widget.git"
    )
    (there / "src").mkdir()
    text = "Release builds of the widget are signed with the hardware key kept in the safe"
    done = run_cli("remember", "--json", text, cwd=here)
    assert done.returncode == 0, done.stderr
    memory = json.loads(done.stdout)
    assert memory["scope"] == WIDGET

    done = run_cli("recall", "--json", "how are release builds signed?", cwd=there / "src")
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]
    assert results and results[0]["id"] == memory["id"]
    assert results[0]["content"] == text

    # another project never sees it; a directory in no project, holding nothing, asks
    # every project and says so
    other = make_repo(tmp_path / "gadget", "git@github.com:acme/gadget.git")
    done = run_cli("recall", "--json", "how are release builds signed?", cwd=other)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"] == []
    (tmp_path / "scratch").mkdir()
    done = run_cli("recall", "--json", "how are release builds signed?", cwd=tmp_path / "scratch")
    assert done.returncode == 0, done.stderr
    widened = json.loads(done.stdout)
    assert widened["results"][0]["id"] == memory["id"]
    assert any("every project searched" in w for w in widened["warnings"])


def test_config_set_keeps_the_template_comments(home: Path) -> None:
    path = home / "config.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(template(), encoding="utf-8")
    write_config_value(path, "recall.limit", "5")
    write_config_value(path, "recall.limit", "6")
    text = path.read_text(encoding="utf-8")
    assert text.count("recall.limit: 6") == 1 and "recall.limit: 5" not in text
    assert text.startswith(template().splitlines()[0])
    assert (
        text.splitlines().index("recall.limit: 6")
        == text.splitlines().index("# recall.limit: 10") + 1
    )
    assert load_settings().recall_limit == 6


# --- settings a person chooses, tuning constants apart ------------------------------------


def test_about_25_settings_and_every_other_key_is_tuning() -> None:
    names = {key.name for key in KEYS}
    assert USER_KEYS <= names and 20 <= len(USER_KEYS) <= 35
    assert sum(key.tuning for key in KEYS) == len(KEYS) - len(USER_KEYS)


def test_config_show_lists_the_settings_and_the_tuning_keys_set(home: Path) -> None:
    """A tuning key still works everywhere a setting does (no config breaks); the table
    shows it once it is set, and --all shows every key."""
    write(home / "config.yaml", "recall:\n  cap: 3\n")
    shown = run_cli("-c", "maintain.lsh_bits=12", "config", "show")
    rows = {line.split("│")[1].strip() for line in shown.stdout.splitlines() if "│" in line}
    assert rows - {"key"} == set(USER_KEYS) | {"recall.cap", "maintain.lsh_bits"}
    assert f"{len(KEYS) - len(USER_KEYS) - 2} tuning keys at their defaults" in shown.stdout
    every = run_cli("config", "show", "--all").stdout
    assert all(f"│ {key.name} " in every for key in KEYS)
    assert len(json.loads(run_cli("config", "show", "--json").stdout)) == len(KEYS)
