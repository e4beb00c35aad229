"""Commands whose output is a credential, and commands that store one.

A command printing a credential keeps its outcome, no line of its output; one storing a
credential keeps the words naming where it went, never the value it stored.

A credentials file is known by its name (``common.SECRET_FILE``); some commands print a
credential with no file named: a password manager's or a vault's read (``op read``,
``vault kv get``, ``pass show``), a cloud CLI's token or secret (``gh auth token``,
``aws configure export-credentials``, ``gcloud auth print-access-token``, ``az keyvault
secret show``), a Kubernetes secret's data (``kubectl get secret -o yaml``), a shell
printing a variable whose name says it holds one (``echo $GITHUB_TOKEN``). The scanner
knows a secret by its shape or its label, and such output is often neither: ``op read``
prints the bare password, ``vault kv get`` a table (``password    tr0ub4dor``), ``kubectl``
the base64 of the values, ``echo $DB_PASSWORD`` the value alone. And a command storing a
credential holds it on its own line, where no label the scanner knows says what it is:
``gh secret set SIGNING --body tr0ub4dor``, ``vault kv put secret/app signing=tr0ub4dor``,
``echo -n tr0ub4dor | wrangler secret put SIGNING``; and ``memctl redact VALUE``, whose
value the person wants out of memctl.
"""

from __future__ import annotations

import re

from memctl.lazy_re import lazy


def _start(opens: str) -> str:
    """Where a command starts on a line: its beginning, after one of ``opens`` (a separator,
    a pipe, backquotes), inside ``$(...)``, after ``sudo`` or ``env`` and variables set for
    it, or a shell's ``-c`` (Codex runs each command as ``bash -lc "..."``)."""
    return (
        rf"(?:^|{opens}|\$\(|\b(?:ba|z|da)?sh\s+-[a-z]*c\s+['\"]?)\s*"
        r"(?:(?:sudo|env|command|exec)\s+(?:-\S+\s+)*)*(?:[A-Za-z_]\w*=\S*\s+)*"
    )


_OPENS = r"[;&|({`]"  # what a command follows on its line
# The rest of the same command (no separator or pipe): where an option stands.
_ARGS = r"[^\n;&|]*?"
# An environment variable's name that says it holds a credential (the words of the
# scanner's dotenv rule, memories/privacy.py ``_ENV_TELLS``), as a shell expands it.
_CREDENTIAL_VARIABLE = (
    r"\$\{?[A-Za-z0-9_]*(?i:pass(?:word|wd|phrase)?|secret|token|api_?key|private_?key|"
    r"access_?key|credentials?)[A-Za-z0-9_]*\b"
)
# The commands, from their makers' documentation of what each prints.
_PRINTS = (
    # GitHub CLI: the token, or the status with the token shown
    r"gh\s+auth\s+token\b|gh\s+auth\s+status\b" + _ARGS + r"\s(?:-t|--show-token)\b",
    # kubectl: a secret's data (any output format but the table), a kubeconfig with its
    # keys (``--raw``), a service account's token
    r"kubectl\b"
    + _ARGS
    + r"\s(?:get\s+(?:[\w.-]+,)*secrets?\b(?:/\S+)?"
    + _ARGS
    + r"\s(?:-o|--output)\b|describe\s+secrets?\b|view-secret\b|create\s+token\b"
    r"|config\s+view\b" + _ARGS + r"\s--(?:raw|flatten)\b)",
    # AWS CLI: the profile's keys, temporary credentials, a registry password, a secret
    r"aws\b" + _ARGS + r"\s(?:configure\s+(?:export-credentials|get)\b|sts\s+(?:"
    r"get-session-token|assume-role[\w-]*|get-federation-token)\b|ecr(?:-public)?\s+"
    r"get-login-password\b|secretsmanager\s+get-secret-value\b|ssm\s+get-parameters?(?:-by-path)?"
    r"\b" + _ARGS + r"\s--with-decryption\b|codeartifact\s+get-authorization-token\b|"
    r"iam\s+create-access-key\b)",
    # 1Password (``signin`` prints a session token), HashiCorp Vault, pass / gopass,
    # macOS's keychain (``-w``: the password)
    r"op\s+(?:read|inject|signin|item\s+get|document\s+get)\b",
    r"vault\s+(?:kv\s+get|read|login|token\s+create)\b",
    r"(?:pass|gopass)\s+(?:show|cat)\b",
    r"security\s+find-(?:generic|internet)-password\b" + _ARGS + r"\s-[a-z]*w",
    # Google Cloud, Azure CLI
    r"gcloud\b" + _ARGS + r"\s(?:auth\s+(?:application-default\s+)?print-(?:access|identity)"
    r"-token|secrets\s+versions\s+access)\b",
    r"az\b" + _ARGS + r"\s(?:account\s+get-access-token|keyvault\s+secret\s+(?:show|download)"
    r"|ad\s+sp\s+(?:create-for-rbac|credential\s+reset)|storage\s+account\s+keys\s+list)\b",
    # Heroku's token and its apps' config vars, Doppler's secrets, Terraform's outputs
    # with their sensitive values (``-raw``, ``-json``), git's credential helper, npm's
    r"heroku\s+(?:auth:token|config(?::get)?(?=\s|$))",
    r"doppler\s+secrets\b(?!\s+(?:set|delete|upload)\b)",
    r"terraform\s+output\b" + _ARGS + r"\s-(?:raw|json)\b",
    r"git\s+credential\s+fill\b|npm\s+token\s+create\b",
    # a shell printing a variable named for a credential
    r"(?:echo|printf)\b" + _ARGS + r"[\s\"']" + _CREDENTIAL_VARIABLE,
    r"printenv\s+[A-Za-z0-9_]*(?i:pass|secret|token|key|credential)",
)
# A command printing one may also run on another machine, quoted (``ssh prod 'vault kv
# get secret/db'``).
SECRET_COMMAND = lazy(
    _start(_OPENS + r"|\bssh\b[^\n'\"]*['\"]") + "(?:" + "|".join(_PRINTS) + ")", re.M
)


def prints_secret(line: str) -> bool:
    """Whether a command line runs a command that prints a credential (``SECRET_COMMAND``)."""
    return SECRET_COMMAND.search(line) is not None


# A shell reading a heredoc's body as its commands (``bash <<EOF``, ``cat <<EOF | sudo sh``,
# ``ssh prod <<'EOF'``, ``kubectl exec -i web -- sh <<EOF``): that body runs, as a ``-c``'s
# text does, where any other command's (``cat <<EOF > notes.md``, ``git commit -F -``) is text.
SHELL_RUN = lazy(
    _start(_OPENS + r"|\s--\s|\b(?:docker|podman|kubectl)\s+exec\b" + _ARGS + r"\s")
    + r"(?:\S*/)?(?:(?:ba|z|da|k)?sh|ssh)(?![\w.-])",
    re.M,
)


def runs_shell(line: str) -> bool:
    """Whether a command line runs a shell that reads its standard input (``SHELL_RUN``)."""
    return SHELL_RUN.search(line) is not None


# The commands that store a credential, from their makers' documentation, up to the words
# naming where it goes (the secret's name or path): the value follows them, in an
# argument, an option, an assignment, standard input or a here-string.
_STORES = (
    r"gh\s+secret\s+set\s+[\w-]+",
    r"vault\s+(?:kv\s+(?:put|patch)|write)\s+[\w./-]+",
    r"kubectl\b" + _ARGS + r"\screate\s+secret\s+[\w-]+\s+[\w.-]+",
    r"heroku\s+config:set\b",
    r"(?:fly|flyctl)\s+secrets\s+(?:set|import)\b",
    r"doppler\s+secrets\s+(?:set|upload)\b",
    r"aws\b" + _ARGS + r"\s(?:secretsmanager\s+(?:put-secret-value|create-secret|update-secret)"
    r"|ssm\s+put-parameter)\b",
    r"(?:npx\s+)?wrangler\s+(?:pages\s+)?secret\s+put\s+[\w-]+",
    r"docker\s+secret\s+create\s+[\w.-]+",
    r"op\s+item\s+(?:create|edit)\b",
    r"gcloud\b" + _ARGS + r"\ssecrets\s+(?:create|versions\s+add)\s+[\w-]+",
    r"az\b" + _ARGS + r"\skeyvault\s+secret\s+set\b",
    r"vercel\s+env\s+add\s+[\w-]+",
    r"(?:pass|gopass)\s+insert\b",
    r"railway\s+variables\s+(?:--)?set\b|supabase\s+secrets\s+set\b|netlify\s+env:set\s+[\w-]+",
    r"firebase\s+functions:secrets:set\s+[\w-]+",
    # memctl's own redact: the value it takes out of every place memctl keeps text, run by
    # the assistant (an argument, or piped into ``redact -``), was stored again at once
    r"(?:(?:\S*/)?python[\d.]*\s+-m\s+)?(?:\S*/)?memctl(?:\s+-c\s+\S+|\s+--?[\w-]+)*\s+redact\b",
)
# A call running one is noted by these words alone: the rest of its line goes, what
# stands before them too (the value piped in: ``echo -n tr0ub4dor | wrangler ...``).
SECRET_STORE = lazy(_start(_OPENS) + "(" + "|".join(_STORES) + ")", re.M)


def stores_secret(line: str) -> tuple[str, str] | None:
    """The words naming where a command storing a credential puts it (``SECRET_STORE``)
    and the rest of the line after them, or None when the line runs no such command."""
    found = SECRET_STORE.search(line)
    return (found.group(1), line[found.end() :]) if found else None
