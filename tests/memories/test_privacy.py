"""The secret scanner: every shape of secret the attack found stored, ordinary text left alone,
secrets and ``<private>`` blocks across message and piece seams, and a property test that
sends generated secrets through every way into a real store and greps what it wrote."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from memctl.api import ingest as api
from memctl.api.ingest import ImportRequest, IngestRequest
from memctl.api.memory import RememberRequest, UpdateRequest, remember, update
from memctl.api.recall import RecallRequest, recall
from memctl.context import Context
from memctl.errors import UsageError
from memctl.imports.formats.base import PIECE_CHARS
from memctl.memories import privacy
from memctl.memories.privacy import Redactions, high_entropy, nothing_left, open_block, scrub
from memctl.memories.scrubber import scrub_messages, scrub_stream
from memctl.model import Memory
from memctl.retrieve.pipeline import Recalled
from tests.conftest import python_c, run_cli

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SLACK = "https://hooks.slack.com/services/T024BE7LD/B01ABCDEF12/aBcDeFgHiJkLmNoPqRsTuVwX"
PEM_BODY = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"

# (text, the secret in it, the kind it is redacted as)
SHAPES = [
    (f"the secret is {AWS_SECRET}", AWS_SECRET, "aws-secret"),
    (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET, "aws-secret"),
    ("AKIAIOSFODNN7EXAMPLE is the key id", "AKIAIOSFODNN7EXAMPLE", "aws-access-key"),
    ("```bash\nmysql -u root -p'Tr0ub4dor&3' shop\n```", "Tr0ub4dor&3", "password"),
    ("mysql -uroot -pSECRETpw42 shop", "SECRETpw42", "password"),
    ("mysqldump --password=Zq81kLm0 shop", "Zq81kLm0", "password"),
    (
        "an upload token: 7Hq2LmZ0pX9vR4tW8yB3nK6cJ1sD5fG2",
        "7Hq2LmZ0pX9vR4tW8yB3nK6cJ1sD5fG2",
        "high-entropy",
    ),
    (
        "take 7Hq2LmZ0pX9vR4tW8yB3nK6cJ1sD5fG2 as given",
        "7Hq2LmZ0pX9vR4tW8yB3nK6cJ1sD5fG2",
        "high-entropy",
    ),
    ("password: a,b", "a,b", "password"),
    ("password: 90210417", "90210417", "password"),
    ('{"pin": "4417"}', "4417", "password"),
    ("PGPASSWORD=hunter2 psql -h db", "hunter2", "password"),
    ("my password is swordfish", "swordfish", "password"),
    (f"post to {SLACK} when done", SLACK, "slack-webhook"),
    (
        f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----",
        PEM_BODY,
        "private-key",
    ),
    (
        "ghp_Zx8Yq1Wv2Ut3Sr4Qp5On6Ml7Kj8Ih9Gf0Ed1C",
        "Zx8Yq1Wv2Ut3Sr4Qp5On6Ml7Kj8Ih9Gf0Ed1C",
        "github-token",
    ),
    ("sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56", "Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56", "openai-key"),
    (
        "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345",
        "AbCdEfGhIjKlMnOpQrStUvWxYz012345",
        "anthropic-key",
    ),
    (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
        "dozjgNryP4J3jVmNHl0w5N",
        "jwt",
    ),
    ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc", "stripe-key"),
    (
        "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI",
        "SyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI",
        "google-api-key",
    ),
    ("postgres://app:s3cr3t-Pw@db.internal:5432/shop", "s3cr3t-Pw", "connection-string"),
    (
        "curl -H 'Authorization: Bearer abcdefghijklmnop1234567890'",
        "abcdefghijklmnop1234567890",
        "bearer-token",
    ),
    ("xoxb-1234567890-abcdefghij", "1234567890-abcdefghij", "slack-token"),
    ('client_secret: "q9Ww2-Lk_33"', "q9Ww2-Lk_33", "secret"),
    # issue 22: shapes that passed every door, and credential files by their format
    (
        "use 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",
        "pQWeRtYuIoPaSdFgHjKlZxCvBnMqWeRtYu",
        "huggingface-token",
    ),
    (
        "twilio auth token 4f3a9c2b8e1d7f6a5b4c3d2e1f0a9b8c",
        "4f3a9c2b8e1d7f6a5b4c3d2e1f0a9b8c",
        "auth-token",
    ),
    ("SMTP_PASS=hunter2horse", "hunter2horse", "secret"),
    ("SESSION_SALT=correcthorsebattery", "correcthorsebattery", "secret"),
    ("export APP_SECRET=abcdefghijkl", "abcdefghijkl", "secret"),
    ('RAILS_SECRET_KEY_BASE="plainlowercasewords"', "plainlowercasewords", "secret"),
    ("machine api.example.com\n  login bob\n  password hunterhunter", "hunterhunter", "password"),
    ("db.example.com:5432:appdb:appuser:Tr0ub4dor&3", "Tr0ub4dor&3", "password"),
    ("localhost:*:*:postgres:supersecretpw", "supersecretpw", "password"),
    (
        "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVBd",
        "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVBd",
        "private-key",
    ),
    ("sshpass -p 'hunter2!' ssh deploy@host", "hunter2!", "password"),
    # s30-leak: a program's own password option, where no label says what the value is
    ("curl -u admin:Kestrel-Plum-5521 https://x", "Kestrel-Plum-5521", "password"),
    ("docker login -u me -p Kestrel-Plum-5521 registry.io", "Kestrel-Plum-5521", "password"),
    ("redis-cli -h cache -a 'Kestrel Plum' ping", "Kestrel Plum", "password"),
    ("openssl pkcs12 -export -passout pass:Kestrel-Plum", "Kestrel-Plum", "password"),
    ("zip -P Kestrel-Plum-5521 notes.zip notes.md", "Kestrel-Plum-5521", "password"),
    ("7z a -pKestrel-Plum-5521 notes.7z notes.md", "Kestrel-Plum-5521", "password"),
    ("keytool -list -keystore k.jks -storepass Kestrel-Plum", "Kestrel-Plum", "password"),
    ("ssh-keygen -t ed25519 -N Kestrel-Plum-5521 -f k", "Kestrel-Plum-5521", "password"),
    ("gpg --batch --passphrase Kestrel-Plum -c notes.md", "Kestrel-Plum", "password"),
    ("smbclient //nas/share -U ann%Kestrel-Plum-5521", "Kestrel-Plum-5521", "password"),
    ("ldapsearch -x -D cn=admin -w Kestrel-Plum-5521", "Kestrel-Plum-5521", "password"),
    (
        "echo Kestrel-Plum-5521 | docker login -u me --password-stdin",
        "Kestrel-Plum-5521",
        "password",
    ),
    ("mongosh -u admin -p Kestrel-Plum-5521 --host db", "Kestrel-Plum-5521", "password"),
    ("sqlcmd -S db -U sa -P Kestrel-Plum-5521 -Q 'select 1'", "Kestrel-Plum-5521", "password"),
    ("htpasswd -bc .htpasswd ann Kestrel-Plum-5521", "Kestrel-Plum-5521", "password"),
    # keys by their place (rclone's pairs, mc's fourth argument) and cookies (s30-leak left them)
    ("rclone config create m mega user me pass Kestrel-Plum", "Kestrel-Plum", "secret"),
    ("rclone config update b2r key=K001zz9QmTx account=0012", "K001zz9QmTx", "secret"),
    ("rclone obscure Kestrel-Plum-5521", "Kestrel-Plum-5521", "password"),
    ("npm config set //r.example/:_authToken 7f3a9c2e-1b4d", "7f3a9c2e-1b4d", "secret"),
    ("aws configure set aws_secret_access_key Kestrel-Plum", "Kestrel-Plum", "secret"),
    ("twine upload -u ann -p Kestrel-Plum-5521 dist/*", "Kestrel-Plum", "password"),
    ("mc alias set s3 https://minio:9000 admin Kestrel-Plum-5521", "Kestrel-Plum", "secret"),
    ("curl -H 'Cookie: sid=k2j3h; csrf=x9y8' https://x", "k2j3h; csrf=x9y8", "cookie"),
    ("the reply had Set-Cookie: sid=Kestrel5521; Path=/; HttpOnly", "Kestrel5521", "cookie"),
    ('curl --cookie "sid=Kestrel5521" https://x', "Kestrel5521", "cookie"),
    # s35-leak: the turn's call a recall row shows (``from``) showed what capture kept of them
    ("rabbitmqctl add_user orders Kestrel-Plum-5521", "Kestrel-Plum-5521", "password"),
    ("echo 'Kestrel-Plum' | sudo -S systemctl restart nginx", "Kestrel-Plum", "password"),
    ("sudo -S apt-get update <<< Kestrel-Plum-5521", "Kestrel-Plum-5521", "password"),
    ("echo 'ann:Kestrel-Plum' | chpasswd", "ann:Kestrel-Plum", "password"),
    ("gh auth login --with-token <<< Kestrel-Plum-5521", "Kestrel-Plum-5521", "password"),
    ("openssl passwd -6 -salt x1 Kestrel-Plum-5521", "Kestrel-Plum-5521", "password"),
    ("mkpasswd -m sha-512 Kestrel-Plum-5521", "Kestrel-Plum-5521", "password"),
    ("openssl enc -aes-256-cbc -k Kestrel-Plum-5521 -in a", "Kestrel-Plum-5521", "password"),
    ("mosquitto_pub -u ann -P Kestrel-Plum-5521 -t x -m y", "Kestrel-Plum-5521", "password"),
    ("influx -username ann -password Kestrel-Plum-5521", "Kestrel-Plum-5521", "password"),
    ("cqlsh -u cassandra -p Kestrel-Plum-5521 db", "Kestrel-Plum-5521", "password"),
    ("xfreerdp /u:ann /p:Kestrel-Plum-5521 /v:host", "Kestrel-Plum-5521", "password"),
    ("lftp -u ann,Kestrel-Plum-5521 ftp.example.com", "Kestrel-Plum-5521", "password"),
    ("htpasswd -nb ann Kestrel-Plum-5521", "Kestrel-Plum-5521", "password"),
    ("neo4j-admin set-initial-password Kestrel-Plum-5521", "Kestrel-Plum-5521", "password"),
    ("bw unlock Kestrel-Plum-5521", "Kestrel-Plum-5521", "password"),
    ("vault login Kestrel-Plum-5521", "Kestrel-Plum-5521", "secret"),
    ("ngrok config add-authtoken Kestrel-Plum-5521", "Kestrel-Plum-5521", "secret"),
    ("mc admin user add s3 ann Kestrel-Plum-5521", "Kestrel-Plum-5521", "secret"),
    ("wp core install --admin_password=Kestrel-Plum", "Kestrel-Plum", "password"),
    ("aws rds create-db-instance --master-user-password Kestrel-Plum", "Kestrel-Plum", "password"),
    ("app --client-secret Kestrel-Plum-5521 --verbose", "Kestrel-Plum-5521", "password"),
    ("app --encryption-key Kestrel-Plum-5521", "Kestrel-Plum-5521", "password"),
    ("set -gx GITHUB_TOKEN Kestrel-Plum-5521", "Kestrel-Plum-5521", "secret"),
    ("export GITHUB_PAT=Kestrel-Plum-5521", "Kestrel-Plum-5521", "secret"),
    # s36-leak: what s35-leak left, and programs of the same kinds
    ("net use Z: \\\\fs01\\hr Kestrel-Plum-5521 /user:ann", "Kestrel-Plum-5521", "password"),
    ("net use \\\\fs01\\hr /user:ann Kestrel-Plum-5521 /persistent:no", "Kestrel-Plum", "password"),
    ("net user ann Kestrel-Plum-5521 /add", "Kestrel-Plum-5521", "password"),
    ("hydra -l admin -p Kestrel-Plum-5521 ssh://10.0.0.5", "Kestrel-Plum-5521", "password"),
    ("nxc smb 10.0.0.5 -u admin -p Kestrel-Plum-5521", "Kestrel-Plum-5521", "password"),
    ("ipmitool -H bmc -U admin -P Kestrel-Plum-5521 power on", "Kestrel-Plum", "password"),
    ("wp config create --dbname=wp --dbpass=Kestrel-Plum-5521", "Kestrel-Plum", "password"),
    ("redis-cli -h cache AUTH default Kestrel-Plum-5521", "Kestrel-Plum-5521", "password"),
    ("echo 'AUTH Kestrel-Plum-5521' | nc cache 6379", "Kestrel-Plum-5521", "password"),
    ("export REDISCLI_AUTH=Kestrel-Plum-5521", "Kestrel-Plum-5521", "secret"),
    ("kinit ann@CORP.EXAMPLE <<< Kestrel-Plum-5521", "Kestrel-Plum-5521", "password"),
    ("mysqladmin -u root password Kestrel-Plum-5521", "Kestrel-Plum-5521", "password"),
    ("cmdkey /add:fs01 /user:ann /pass:Kestrel-Plum-5521", "Kestrel-Plum-5521", "password"),
    ("impacket-psexec corp/admin:Kestrel-Plum-5521@10.0.0.5", "Kestrel-Plum-5521", "password"),
    ("sqlplus scott/Kestrel-Plum-5521@orcl", "Kestrel-Plum-5521", "password"),
    ("msfconsole -x 'set PASSWORD Kestrel-Plum-5521'", "Kestrel-Plum-5521", "password"),
    # issue 34's shapes
    (f"doctl auth init -t dop_v1_{'a1' * 32}", "a1" * 32, "digitalocean-token"),
    ("vault login hvs.CAESIJ3xv8Vq2mXlR7tZpWk4NbH3sYcQ9dF", "CAESIJ3xv8Vq2mXlR7tZ", "vault-token"),
    (f"paste {'4f3a9c2b' * 8} into the dashboard", "4f3a9c2b" * 8, "hex-key"),
    ("Mailgun: key-3z6f6t23gmqf0285exn8zksbze9idja1", "3z6f6t23gmqf0285exn8zks", "mailgun-key"),
    ("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", "bd568da9263ab812b37b35e2", "shopify-token"),
    (
        "AGE-SECRET-KEY-1LCM4YNH4EVPHXYVWL2Z24G8HSHGJZWV0JAT0YWC5NTS578UD8T47YYV4D2",
        "LCM4YNH4EVPHXYVWL2Z24G8HSHGJZWV0",
        "age-secret-key",
    ),
    ("the staging password：Kestrel-Plum-5521", "Kestrel-Plum-5521", "password"),
    ("数据库密码：Orchid-Tide-3388", "Orchid-Tide-3388", "password"),
    # s43-reread: words joined by colons are a script's name only without a digit
    ("api_token: `kestrel:plum5521`", "kestrel:plum5521", "secret"),
    ("API_KEY=Kestrel:Plum:Tide", "Kestrel:Plum:Tide", "secret"),
    # s44-leads: a URN or a name in capitals stays a secret with a made part; lowercase
    # words naming their kind may be a weak real secret, not only a test's placeholder
    ("token_type=urn:x:KxQmLpVtRwZ", "urn:x:KxQmLpVtRwZ", "secret"),
    ("secret: AB12CD_EF34GH_K9Q", "AB12CD_EF34GH_K9Q", "secret"),
    ("api_token: kestrel-plum-tide", "kestrel-plum-tide", "secret"),
    ("secret: dev-secret", "dev-secret", "secret"),
    ('subject_token: "oidc-token",', "oidc-token", "secret"),
    (
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
        "private-key",
    ),
]


@pytest.mark.parametrize(("text", "secret", "kind"), SHAPES)
def test_each_shape_of_secret_is_redacted_with_its_kind(text: str, secret: str, kind: str) -> None:
    cleaned, found = scrub(f"Note: {text} (keep it safe)")
    assert secret not in cleaned
    assert f"[REDACTED:{kind}]" in cleaned and cleaned.startswith("Note: ")
    assert found.secret_count == 1
    assert scrub(cleaned) == (cleaned, Redactions())  # idempotent, nothing counted twice


ORDINARY = [
    "max_tokens=4096 and token_budget: 20000",
    "tokenizer: bert-base-uncased",
    "def login(password: str, token: Optional[str] = None) -> bool:",
    "password = getpass.getpass()",
    "api_key = os.environ['API_KEY']",
    "password: ${DB_PASSWORD}",
    "fixed in commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    "memctl get 0123456789abcdef0123456789abcdef",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "id 123e4567-e89b-12d3-a456-426614174000",
    "class Base64HighEntropyString(getUser2FactorAuthConfig)",
    "see src/memctl/memories/privacy.py and docs/benchmarks.md",
    "the password is wrong, and the token is expired",
    "mysql -u root -p shop",
    "curl -u $USER:$TOKEN https://x and curl -u admin:${PASS} https://x",
    "docker compose run login-service -p 8080:80",
    "echo $REGISTRY_PASSWORD | docker login -u me --password-stdin",
    "ssh-keygen -t ed25519 -N '' -f key",
    "zip -r notes.zip notes",
    "htpasswd -c .htpasswd ann",
    "rclone copy remote:key /tmp/pass",
    "rclone config create gd drive scope drive",
    "rclone config create mega mega pass $MEGA_PASS",
    "mc alias list",
    "npm config set registry https://r.example/ and aws configure set region eu-west-1",
    "twine upload --repository testpypi dist/*",
    "curl -b cookies.txt -c cookies.txt https://x",
    "The Cookie: header holds name=value pairs separated by semicolons",
    "Set-Cookie: sid=; Max-Age=0",
    "<li><strong>Reading tokens:</strong> each token is shown",  # markup, no value
    "spin: 5",
    # OpenCode's ids of sessions and messages name things; they open nothing
    "opened ses_6a1f3c2b9ffeQ2mXlR7tZpWk4N and msg_95e0c3d4a001Vb2kq8H1nM3pLz",
    "Host prod\n  HostName 10.0.0.5\n  User deploy\n  IdentityFile ~/.ssh/id_ed25519",
    "started at 2026-02-12T14:48:36.948Z:done",
    "MAX_TOKENS=4096",
    "the machine learning password reset flow",
    # s36-leak: the same programs with a prompt, a file of passwords or a variable
    "net use Z: \\\\fs01\\hr * /user:ann /persistent:no",
    "net user ann /delete",
    "the net user gain reached 500 last month",
    "hydra -l admin -P rockyou.txt ssh://10.0.0.5",
    "nxc smb 10.0.0.5 -u admin -p passwords.txt",
    "ipmitool -H bmc -U admin -E chassis status",
    "redis-cli AUTH",
    "AUTH failed for user ann",
    'echo "AUTH $REDIS_PASSWORD" | nc cache 6379',
    "wp config create --dbpass=$DB_PASS",
    "cmdkey /list",
    "sqlplus / as sysdba",
    "python manage.py runserver 0.0.0.0:8000",
    "set PASSWORD to the one in the vault",
    "an md5 of the file: 5d41402abc4b2a76b9719d911017c592",
    # names Python's tempfile and Vite make, and hashes inside paths and URLs
    "wrote /tmp/tmp4p_xwg0f/out.json and /tmp/tmpx18t062q/report.txt",
    "vite.config.ts.timestamp-1718802716364-8a7b0f4c2e1d.mjs",
    "see https://github.com/acme/api/commit/d36d57c66ff031f93b4fa432e86802f84991477b",
    # a 64-digit hex named a digest on its line, or in sha256sum's output, is no key
    "the SHA-256 of the wheel is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  dist/memctl-0.9.tar.gz",
    "ghcr.io/acme/api@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "content_hash: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "a key-value store with key-based sharding and key-rotation-every-30-days-for-tenants",
    "Model1234567890abcdefghij.method.some_attribute_name_that_is_longer1",
    "the pin on the board is red, and the pin to the left of it is ground",
    # s35-leak: a value that names a file, a prompt asked for, a variable, a flag
    "ssh -i key --private-key ~/.ssh/id_ed25519 and app --encryption-key ./keys/dev.key",
    "mysql -u root -p shop; psql -W shop; sudo -S apt-get update",
    "bw unlock --passwordenv BW_PASSWORD; vault login -method=github",
    "openssl passwd -6 -stdin < pw.txt; ngrok authtoken $NGROK_TOKEN",
    "set -gx PATH $HOME/bin $PATH; set -x GITHUB_TOKEN $TOKEN",
    "echo $PASS | sudo -S ls; echo 'ann:$PW' | chpasswd",
    "gemini --max-tokens 4096 --two-pass --bypass x",
    # s43-reread: a package script named after a repository whose name holds "token"
    "- cyspbot-app-token-action: `format:check`, `typecheck`, `test`",
    # s44-leads: an OAuth URN and a secret's name (a real Codex session's)
    "token_type=urn:ietf:params:oauth:token-type:access_token",
    "requested_token_type=urn:chikachow:github-app-installation-access-token",
    'subject_token_type: "urn:ietf:params:oauth:token-type:id_token",',
    "Missing required secrets: GITHUB_APP_ID, GITHUB_APP_PRIVATE_KEY",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_code_and_prose_is_left_alone(text: str) -> None:
    assert scrub(text) == (text, Redactions())


RANDOM = "jBy2RvgEx9QQeh8WrSm7g07VkhENCfwf9BXn"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"notes/ghp_{RANDOM}.md", "notes/[REDACTED:github-token].md"),
        (f"see /home/bob/ghp_{RANDOM} now", "see /home/bob/[REDACTED:github-token] now"),
        (f"at /srv/app/{RANDOM}/cfg.yaml", "at /srv/app/[REDACTED:high-entropy]/cfg.yaml"),
        (f"https://example.com/{RANDOM}", "https://example.com/[REDACTED:high-entropy]"),
        (
            f"/Users/bob/x86_64/{RANDOM}/main.py",
            "/Users/bob/x86_64/[REDACTED:high-entropy]/main.py",
        ),
        (f"/srv/ab/{RANDOM}", "/srv/[REDACTED:high-entropy]"),  # 2 letters: as likely random
        # a token of a known shape ends where its shape does: what the random strings'
        # match ran on over either side (short folders) is hidden only if random alone
        (f"/home/d/ghp_{RANDOM}x/app/t.jsonl", "/home/d/[REDACTED:github-token]/app/t.jsonl"),
        (f"see ghp_{RANDOM}/ab", "see [REDACTED:github-token]/ab"),
        (
            f"ghp_{RANDOM}/{RANDOM[::-1]}",
            "[REDACTED:github-token]/[REDACTED:high-entropy]",
        ),
        (AWS_SECRET, "[REDACTED:aws-secret]"),  # base64's own '/' is no folder
    ],
)
def test_a_token_in_a_path_is_redacted_without_the_folders_around_it(text: str, shown: str) -> None:
    """base64 holds '/': the unlabelled token's match ran over the whole path, and the
    folders before it (and a file name after) were hidden with it."""
    assert scrub(text)[0] == shown


def test_a_long_hex_part_ending_in_a_letter_is_scanned_at_once() -> None:
    """The word test backtracked exponentially on such a part: a line of a real
    transcript (a 60-digit hex part) kept the scanner busy for hours. Run in a child with
    a bound, so the old behaviour fails here instead of hanging the suite."""
    part = "d36d57c66ff031f93b4fa432e86802f84991477e522adcdffd314454326b"
    text = f"blobs/sha256/{part}/layer.tar"
    code = f"from memctl.memories.privacy import scrub; print(scrub({text!r})[0])"
    done = python_c(code, timeout=60, check=True)
    assert done.stdout.strip() == text


def test_private_blocks_are_dropped_and_counted() -> None:
    cleaned, found = scrub("a <PRIVATE>x\ny</private> b <private>unclosed tail")
    assert cleaned == "a [REDACTED] b [REDACTED]" and found.private_blocks == 2
    assert nothing_left(scrub("<private>all</private> ")[0])


def test_a_private_block_a_client_escaped_is_still_private() -> None:
    """Cursor's and SpecStory's Markdown and Gemini CLI's recorded prompts escape a tag:
    `&lt;private&gt;` kept its inside in the messages, a digest and the sync repository."""
    cleaned, found = scrub("keep &lt;private&gt;my salary\nis 90k&lt;/private&gt; out")
    assert cleaned == "keep [REDACTED] out" and found.private_blocks == 1
    assert open_block("a &lt;private&gt;opened here") is not None


def test_a_dotted_value_after_a_label_is_a_secret_unless_its_parts_are_names() -> None:
    """s27-leak's miss: kubeadm's token (``abcdef.0123456789abcdef``) read as an attribute
    path; an attribute's parts are names (letters, digits at a part's end)."""
    for value in ("kubeadmtoken.q7w8e9r0t1y2u3i4", "a1b2c3.d4e5f6g7h8i9j0"):
        assert scrub(f"token: {value}")[0] == "token: [REDACTED:secret]"
    for reference in ("settings.api_token", "self.token_v2", "hashlib.sha256", "os.environ.pwd"):
        assert scrub(f"token: {reference}")[0] == f"token: {reference}"


def _messages(*texts: str) -> tuple[list[str], Redactions]:
    found = Redactions()
    return [t for t, _ in scrub_messages(((t, None) for t in texts), found)], found


def test_a_token_split_across_two_messages_is_redacted_on_both_sides() -> None:
    token = "ghp_Zx8Yq1Wv2Ut3Sr4Qp5On6Ml7Kj8Ih9Gf0Ed1C"
    out, found = _messages(f"here: {token[:20]}", f"{token[20:]} thanks")
    assert out == ["here: [REDACTED:github-token]", "[REDACTED:github-token] thanks"]
    assert found.secrets == {"github-token": 1}


def test_a_token_split_with_words_between_keeps_neither_half() -> None:
    token = "ghp_Zx8Yq1Wv2Ut3Sr4Qp5On6Ml7Kj8Ih9Gf0Ed1C"
    out, _ = _messages(f"here it is {token[:18]}", f"oops, the rest: {token[18:]} ok?")
    assert out[0].startswith("here it is [REDACTED:") and token[4:18] not in out[0]
    assert token[18:] not in out[1] and ", the rest: [REDACTED:" in out[1]
    out, _ = _messages(f"use {token[:22]}...", "wait, also need this part: Ed1C")
    assert "Ed1C" not in out[1]
    out, _ = _messages(f"use {token}", "and then the Deploy42 step")  # whole: nothing runs on
    assert out[1] == "and then the Deploy42 step"


def test_a_secret_found_by_its_label_is_hidden_where_a_later_message_repeats_it() -> None:
    """s30-leak left it: the tool output's ``DB_PASSWORD=...`` was redacted, and the
    assistant's "I set SIGNING to ..." kept the value bare, with no label left. A value
    that is a word, markup a label took by mistake, or a longer run is left alone."""
    out, found = _messages(
        "[tool result Bash: DB_PASSWORD=Kestrel-Plum-5521 · ok]",
        "I set SIGNING to Kestrel-Plum-5521, not Kestrel-Plum-55210.",
        "password: swordfish, <li><strong>Reading tokens:</strong> stay </strong> and swordfish",
        "curl -H 'Cookie: sid=Lark-Fennel-6620; theme=dark' https://x",
        "the session Lark-Fennel-6620 is ann's",
    )
    assert out[1] == "I set SIGNING to [REDACTED:secret], not Kestrel-Plum-55210."
    assert out[4] == "the session [REDACTED:cookie] is ann's"  # a cookie's values, each
    assert out[2].endswith("<li><strong>Reading tokens:</strong> stay </strong> and swordfish")
    assert found.secrets["secret"] == 2 and found.secrets["cookie"] == 2


def test_a_label_in_one_message_and_its_value_in_the_next() -> None:
    out, _ = _messages("the database password:", "Zq81-kLm0")
    assert out == ["the database password:", "[REDACTED:password]"]


def test_a_secret_whole_in_one_message_does_not_run_on_into_the_next() -> None:
    token = "ghp_Zx8Yq1Wv2Ut3Sr4Qp5On6Ml7Kj8Ih9Gf0Ed1C"
    out, found = _messages(f"use {token}", "Understood, thanks")
    assert out == ["use [REDACTED:github-token]", "Understood, thanks"]
    assert found.secret_count == 1


def test_a_value_closed_by_a_bracket_does_not_run_on_into_the_next_message() -> None:
    # Codex tool calls, one a message: `"max_output_tokens": 4000}]` then `[tool ...`
    call = '[tool write_stdin: {"session_id": 48230, "max_output_tokens": 4000}]'
    out, found = _messages(call, call, "[tool result write_stdin: done]")
    assert out == [call, call, "[tool result write_stdin: done]"] and found.secret_count == 0


def test_a_private_block_opened_in_one_message_hides_the_next_ones_to_its_close() -> None:
    out, found = _messages("a <private>diary", "middle", "end</private> b", "c")
    assert out == ["a [REDACTED]", "", " b", "c"] and found.private_blocks == 1
    out, _ = _messages("-----BEGIN EC PRIVATE KEY-----", PEM_BODY, "-----END EC PRIVATE KEY-----")
    assert out == ["[REDACTED:private-key]", "", ""]


def test_a_value_of_a_private_block_is_hidden_where_the_conversation_repeats_it() -> None:
    """The user's ``<private>`` block was hidden, and the assistant's reply quoting it kept
    every value: a number, an address, a name. Each value that looks made, and each word
    of 6 letters or more no word list knows, is hidden where a message repeats it (a name
    in any case); the block's everyday words stay, and a document's own text stays."""
    from memctl.ingest.entities import known_word

    found = Redactions()
    said = [
        "File it. <private>My employee number is EMP-77341, mail tav.o@quill.example, "
        "my manager Ormondroyd is leaving</private> Thanks.",
        "Done: EMP-77341 filed; I told tav.o@quill.example that Ormondroyd's manager form "
        "is filed, not EMP-773410.",
        "ORMONDROYD approved the employee form",
    ]
    out = [t for t, _ in scrub_messages(((t, None) for t in said), found, known=known_word)]
    assert out[0] == "File it. [REDACTED] Thanks."
    assert out[1] == (
        "Done: [REDACTED:private] filed; I told [REDACTED:private] that [REDACTED:private]'s "
        "manager form is filed, not EMP-773410."
    )
    assert out[2] == "[REDACTED:private] approved the employee form"
    assert found.private_blocks == 1 and found.secrets["private"] == 4
    document = "<private>account EMP-77341</private>\nWe pay account EMP-77341 monthly.\n"
    assert "".join(scrub_stream([document], Redactions())).endswith("EMP-77341 monthly.\n")


def test_a_private_block_over_many_pieces_is_hidden_to_its_close() -> None:
    found = Redactions()
    pieces = ["a\n", "<private>\n", "x" * 60 + "\n", "z</private> seen\n"]
    assert "".join(scrub_stream(pieces, found)) == "a\n[REDACTED] seen\n"
    assert found.private_blocks == 1


def test_remember_and_update_store_no_secret(ctx: Context) -> None:
    memory = remember(ctx, RememberRequest(f"deploy key: the secret is {AWS_SECRET}")).memory
    assert memory.content == "deploy key: the secret is [REDACTED:aws-secret]"
    changed = update(ctx, UpdateRequest(memory.id, text="PGPASSWORD=hunter2 psql"))
    assert changed.content == "PGPASSWORD=[REDACTED:password] psql"
    with pytest.raises(UsageError, match="nothing is left"):
        remember(ctx, RememberRequest("<private>only this</private>"))


# --- the property test ----------------------------------------------------------------
B64 = string.ascii_letters + string.digits + "+/"
ALNUM = string.ascii_letters + string.digits
PASSWORD = ALNUM + "!#%&*,.;=?@^_~-"


def _text(alphabet: str, size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=size, max_size=size)


@st.composite
def secrets(draw: st.DrawFn) -> tuple[str, str]:
    """(text holding a secret, the secret's bytes that must never be stored)."""
    shape = draw(st.integers(0, 10))
    if shape == 0:
        key = draw(_text(B64, 40))
        assume(high_entropy(key))
        return f"the secret is {key}", key
    if shape == 1:
        token = draw(_text(ALNUM, 36))
        return f"ghp_{token}", token
    if shape == 2:
        token = draw(_text(ALNUM, 48))
        return f"sk-ant-api03-{token}", token
    if shape == 3:
        tail = draw(_text(ALNUM, 24))
        return f"{SLACK.rsplit('/', 1)[0]}/{tail}", tail
    if shape == 4:
        body = "\n".join(draw(_text(B64, 64)) for _ in range(3))
        return f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----", body
    if shape == 5:
        word = draw(_text(PASSWORD.replace("'", ""), 14))
        form = draw(st.sampled_from(["mysql -u root -p'{}' shop", "mysql -uroot -p{} shop"]))
        return form.format(word), word
    if shape == 6:
        word = draw(st.one_of(_text(string.digits, 14), _text(PASSWORD, 14)))
        # after a label, `a.b_c` reads as a reference and `%s` as a format: deliberately kept
        assume(privacy._any_value(word))
        form = draw(st.sampled_from(["password: {}", "DB_PASSWORD={}", "my password is {}"]))
        return form.format(word), word
    if shape == 7:
        word = draw(_text(ALNUM, 16))
        return f"postgres://app:{word}@db.internal/shop", word
    if shape == 8:
        token = draw(st.integers(24, 48).flatmap(lambda n: _text(B64, n)))
        assume(high_entropy(token))
        return f"and {token} too", token
    if shape == 9:
        token = draw(_text(ALNUM, 32))
        return f"Authorization: Bearer {token}", token
    words = draw(_text(string.ascii_lowercase, 18))
    return f"<private>diary {words}</private>", words


def _surround(text: str, how: int) -> str:
    return [
        f"Note for later: {text} -- keep it safe.",
        f"```bash\n{text}\n```",
        json.dumps({"note": text}),
        "config:\n  note: |\n    " + text.replace("\n", "\n    "),
    ][how]


def _split(said: str, raw: str, cut: float) -> int:
    """Where to cut ``said`` in two: inside the secret."""
    return said.index(raw[:8]) + max(1, min(len(raw) - 1, int(len(raw) * cut)))


@settings(max_examples=300, deadline=None)
@given(secret=secrets(), how=st.integers(0, 3), cut=st.floats(0.05, 0.95))
def test_no_generated_secret_survives_the_scanner_whole_or_cut_in_two(
    secret: tuple[str, str], how: int, cut: float
) -> None:
    text, raw = secret
    assume(len(set(raw)) > 6)  # a run of one character is padding, not a secret
    said = _surround(text, how)
    at = _split(said, raw, cut)
    found = Redactions()
    assert raw not in scrub(said)[0]
    messages = [t for t, _ in scrub_messages([(said[:at], 1), (said[at:], 2)], found)]
    assert raw not in "".join(messages) and raw not in " ".join(messages)
    filler = "lorem ipsum " * 20
    pieces = list(scrub_stream([filler + said[:at], said[at:] + "\n"], found))
    assert raw not in "".join(pieces)


SK_TAIL = "000000000000LM000000000RS000cde0000mno000qr00wxz"
# the field names of a recalled memory as recall --json writes them
RECALLED_KEYS = list(Recalled(Memory(content="x"), 0.0, {}, {}, {}).to_dict())


def _everything_written(ctx: Context, home: Path, log: Path) -> bytes:
    """The database, its WAL and every other file in the home; an export; the runs; the log."""
    files = [p for p in home.rglob("*") if p.is_file() and "models" not in p.parts]
    written = b"".join(p.read_bytes() for p in files)
    export = "\n".join(api.export(ctx)).encode()
    runs = json.dumps([r.to_dict() for r in api.runs(ctx, 1000)]).encode()
    return written + export + runs + log.read_bytes()


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(secret=secrets(), how=st.integers(0, 3), cut=st.floats(0.05, 0.95))
# found by this test: recall's reason quoted the token's tail as a name no memory mentions
@example(secret=(f"sk-ant-api03-{SK_TAIL}", SK_TAIL), how=0, cut=0.5)
def test_no_secret_reaches_the_store_the_wal_the_logs_or_an_export(
    make_ctx, home: Path, tmp_path: Path, secret: tuple[str, str], how: int, cut: float
) -> None:
    text, raw = secret
    assume(len(set(raw)) > 6)
    ctx = make_ctx(ingest__spawn_worker=False)
    log = tmp_path / "log"
    log.touch()
    # a "password" such as invalidated_at is also a column's name: in every store and
    # every recalled memory's JSON whatever the scanner does, so it proves nothing here
    fresh = _everything_written(ctx, home, log) + json.dumps(RECALLED_KEYS).encode()
    assume(raw.encode() not in fresh)
    work = tmp_path / "in"
    work.mkdir(exist_ok=True)
    said = _surround(text, how)
    at = _split(said, raw, cut)
    name = f"{abs(hash(said)):032x}"
    # ingest: whole in one message, and cut in two inside the secret across two messages
    lines = [
        {"role": "user", "content": said},
        {"role": "user", "content": said[:at]},
        {"role": "assistant", "content": said[at:]},
    ]
    transcript = work / "t.jsonl"
    transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    api.ingest(ctx, IngestRequest(str(transcript), session_id=name))
    with log.open("a") as out:
        api.drain_jobs(ctx, "ingest", lambda line: print(line, file=out))
    # a document whose one long line is cut into 8 KiB pieces inside the secret
    doc = work / f"{name}.md"
    filler = "lorem ipsum " * (PIECE_CHARS // 12 + 1)
    doc.write_text(filler[: PIECE_CHARS - at] + said + "\n\nMore text.\n")
    # memctl's JSONL export and sync YAML, read back in
    (work / "m.jsonl").write_text(json.dumps({"content": said, "l0_abstract": said}) + "\n")
    yaml = f"id: {name}\ncategory: cases\ncontent: {json.dumps(said)}\ntags: [{json.dumps(said)}]\n"
    (work / "m.yaml").write_text(yaml)
    paths = (str(doc), str(work / "m.jsonl"), str(work / "m.yaml"))
    api.import_files(ctx, api.plan_import(ImportRequest(paths, force=True)))
    memory = remember(ctx, RememberRequest(said, tags=(said,))).memory
    update(ctx, UpdateRequest(memory.id, text=said + " (updated)"))
    recalled = recall(ctx, RecallRequest(said, limit=20, all_scopes=True))
    assert raw not in json.dumps([r.to_dict() for r in recalled.result.results])
    assert raw.encode() not in _everything_written(ctx, home, log)


def test_an_imported_document_s_title_is_scrubbed(ctx: Context, tmp_path: Path) -> None:
    token = "ghp_Zx8Yq1Wv2Ut3Sr4Qp5On6Ml7Kj8Ih9Gf0Ed1C"
    doc = tmp_path / "notes.md"
    doc.write_text(f"# Deploy with {token}\n\nWe deploy on Fridays.\n")
    report = api.import_files(ctx, api.plan_import(ImportRequest((str(doc),))))
    assert report.files[0].status == "imported"
    titles = [row["title"] for row in ctx.db.rows("SELECT title FROM sessions")]
    assert titles == ["Deploy with [REDACTED:github-token]"]


def test_a_tag_quoted_in_prose_hides_nothing() -> None:
    """Instructions (AGENTS.md) that mention `<memctl-context>` or `<private>` in backticks
    must not swallow the user's next message as an unclosed block."""
    said = [
        "A `<memctl-context>` block at the start of a session holds memories.",
        "Mark secrets `<private>` and memctl keeps them out.",
        "We deploy with make release from main.",
    ]
    kept, found = _messages(*said)
    assert kept == said
    assert found.context_blocks == 0 and found.private_blocks == 0


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "the password is Kestrel-5521, and the user is bob",
            "the password is [REDACTED:password], and the user is bob",
        ),
        ("DB_PASSWORD=Kestrel-5521; REDIS=1", "DB_PASSWORD=[REDACTED:secret]; REDIS=1"),
        ("(password: Kestrel-5521).", "(password: [REDACTED:password])."),
        ("password: 'Kestrel-5521,'", "password: '[REDACTED:password]'"),  # quoted: all of it
        (
            "postgresql://app:[YOUR-PASSWORD]@db/shop",
            "postgresql://app:[REDACTED:connection-string]@db/shop",
        ),
    ],
)
def test_what_ends_a_sentence_after_a_hidden_value_stays(text: str, shown: str) -> None:
    """s33-leak followed a value without the comma or full stop after it, but the redaction
    still took them: "the password is [REDACTED:password] and the user is bob"."""
    assert scrub(text)[0] == shown


@pytest.mark.parametrize(
    "text",
    [
        "Suites at final SHA [REDACTED:auth-token]: scripts/tests 257 pass",
        "signed with [REDACTED:private-key] = deploy/keys/ci.pub on the runner",
        "the [REDACTED:password]: swordfishes are fish",
    ],
)
def test_a_mark_s_kind_is_no_label_when_a_stored_text_is_scrubbed_again(text: str) -> None:
    """A stored text scrubbed again (maintain's rescrub, a sync's export) read a mark's
    kind as a label (``token]: V``) and hid the words after it: one fresh9 session lost
    ``scripts/tests`` in 5 messages."""
    assert scrub(text) == (text, scrub("")[1])


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("password:\n  Birch3Cedar7Ash\nhost: db1", "password:\n  [REDACTED:password]\nhost: db1"),
        ("my password is\nswordfish", "my password is\n[REDACTED:password]"),
        ("api_key =\r\n  'a1B2c3D4e5F6'\r\n", "api_key =\r\n  '[REDACTED:secret]'\r\n"),
        (
            "What is the staging db password?\nGranite6Basalt1",
            "What is the staging db password?\n[REDACTED:password]",
        ),
        (
            "Enter passphrase for key id_ed25519:\nOak5Maple9Pine",
            "Enter passphrase for key id_ed25519:\n[REDACTED:password]",
        ),
        ("x" * 5000 + "\ntoken:\n  tokLx9Kq2Vw8Zr", "x" * 5000 + "\ntoken:\n  [REDACTED:secret]"),
        # what stays: a key of its own, a count, a commit's hash, a link, prose, a reference
        ("password:\n  nested:\n    x: 1", None),
        ("password:\n  required", None),
        ("max_tokens:\n  4096", None),
        ("Which token limit applies?\n4096", None),
        ("What SHA-shaped tokens does the checkpoint carry?\n1182e09", None),
        ("Reset your password:\nhttps://example.com/reset", None),
        ("Password policy:\nminimum12chars", None),
        ("The password reset flow works.\nDone", None),
        ("password:\n  ${DB_PASS}", None),
    ],
)
def test_a_value_alone_on_the_line_after_its_label(text: str, shown: str | None) -> None:
    """A secret split across two lines: its label (or a question naming it) ends one line,
    the value stands alone on the next."""
    assert scrub(text)[0] == (text if shown is None else shown)


def test_a_question_naming_a_password_answered_in_the_next_message() -> None:
    out, _ = _messages("What is the staging database password?", "Granite6Basalt1")
    assert out == ["What is the staging database password?", "[REDACTED:password]"]
    out, _ = _messages("What is the staging database password?", "It is in the vault.")
    assert out[1] == "It is in the vault."


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("password: horse battery staple", "password: [REDACTED:password]"),
        ("wifi_password = tiger lily moss\nnext", "wifi_password = [REDACTED:password]\nnext"),
        ("password: purple horse", "password: [REDACTED:password]"),
        ("password: hunter2 battery staple", "password: [REDACTED:password]"),
        # a value not a word and one word after it: an env's command, as a mark and a word
        ("PGPASSWORD=hunter2 psql", "PGPASSWORD=[REDACTED:password] psql"),
        # what an older filter left beside the first word's mark (the rescrub reads it)
        (
            "password: [REDACTED:password] battery staple",
            "password: [REDACTED:password] [REDACTED:password]",
        ),
        # prose after the value: the value alone, as before
        ("password: horse for the staging db", "password: [REDACTED:password] for the staging db"),
    ],
)
def test_a_passphrase_of_words_after_its_label_is_hidden_whole(text: str, shown: str) -> None:
    """Only the first word of ``password: horse battery staple`` was hidden."""
    assert scrub(text)[0] == shown
    assert scrub(shown)[0] == shown  # scrubbed again (the rescrub, sync's export): the same


def test_names_after_a_label_are_remembered_as_written() -> None:
    """s44-leads: an OAuth URN and a secret's name (each from a real Codex session) come
    back from `memctl remember` as written, no `[REDACTED` and no warning."""
    said = [
        "The STS exchange sends token_type=urn:ietf:params:oauth:token-type:access_token",
        "The job failed: Missing required secrets: GITHUB_APP_PRIVATE_KEY",
    ]
    for text in said:
        done = run_cli("remember", text)
        assert done.returncode == 0 and "REDACTED" not in done.stderr, done.stderr
    listed = run_cli("list", "--json")
    assert sorted(m["content"] for m in json.loads(listed.stdout)) == sorted(said)
