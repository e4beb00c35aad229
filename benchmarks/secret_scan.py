"""The secret scanner: how often it redacts ordinary text, how often it finds a secret, how fast.

    .venv/bin/python benchmarks/secret_scan.py [--n 2000] [--show 20]

- False positives: every line of ordinary code (memctl's own source, Python's
  standard library) and prose (this repository's docs, the licence texts and
  package descriptions installed on the machine) is scanned; a line with any
  redaction counts as a false positive (the corpora hold no real secrets: the
  flagged lines are printed to check). Reported for all detectors, and for the
  unlabelled entropy check (kinds ``high-entropy`` and ``aws-secret``) alone.
- Detection: ``--n`` generated secrets of each shape, in a sentence; a secret
  is detected when its bytes are gone from the scrubbed text.
- Speed: the scanner's import time and throughput, and detect-secrets' when it
  is installed (it is not a dependency).

Prints the figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import string
import subprocess
import sys
import sysconfig
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memctl.memories.privacy import Redactions, find_secrets, scrub  # noqa: E402
from memctl.memories.scrubber import scrub_messages  # noqa: E402

ENTROPY_KINDS = {"high-entropy", "aws-secret"}
B64 = string.ascii_letters + string.digits + "+/"
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"  # the alphabet of age's Bech32 keys


def corpora() -> dict[str, list[Path]]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    metadata = sorted(Path(sysconfig.get_paths()["purelib"]).glob("*.dist-info/METADATA"))
    return {
        "code: memctl source": sorted((ROOT / "memctl").rglob("*.py")),
        "code: Python stdlib": sorted(p for p in stdlib.glob("*.py")),
        "prose: memctl docs": [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))],
        "prose: licences, package descriptions": [
            *sorted(Path("/usr/share/common-licenses").glob("*")),
            *metadata,
        ],
    }


def false_positives(files: list[Path], show: int) -> tuple[int, int, int, Counter[str], int]:
    """(lines, lines flagged, lines flagged by the entropy check, kinds, bytes)."""
    lines = flagged = entropy = size = 0
    kinds: Counter[str] = Counter()
    for path in files:
        if not path.is_file():
            continue
        text = path.read_text(errors="replace")
        size += len(text)
        for line in text.splitlines():
            if not line.strip():
                continue
            lines += 1
            hits = find_secrets(line)
            if hits:
                flagged += 1
                entropy += any(h.kind in ENTROPY_KINDS for h in hits)
                kinds.update(h.kind for h in hits)
                if show > 0 and flagged <= show:
                    print(f"    {path.name}: {line.strip()[:110]}")
    return lines, flagged, entropy, kinds, size


def _random(alphabet: str, n: int, rng: random.Random) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


SHAPES: dict[str, Callable[[random.Random], tuple[str, str]]] = {
    "base64, 20-64 chars, unlabelled": lambda r: (t := _random(B64, r.randint(20, 64), r), t),
    "alphanumeric, 24-48, unlabelled": lambda r: (t := _random(ALNUM, r.randint(24, 48), r), t),
    "hex, 32-64, unlabelled": lambda r: (t := _random("0123456789abcdef", r.randint(32, 64), r), t),
    "AWS secret key in prose": lambda r: (
        f"the secret is {(t := _random(B64, 40, r))}",
        t,
    ),
    "hex key after 'api key:'": lambda r: (
        f"api key: {(t := _random('0123456789abcdef', 32, r))}",
        t,
    ),
    "password: <any 4-16 printable>": lambda r: (
        f"password: {(t := _random(ALNUM + '!#%&*,.;=?@^_~-', r.randint(4, 16), r))}",
        t,
    ),
    "all-digit password": lambda r: (f"password={(t := _random(string.digits, 6, r))}", t),
    "mysql -p<password>": lambda r: (f"mysql -uroot -p{(t := _random(ALNUM, 12, r))} db", t),
    "GitHub token": lambda r: (f"ghp_{(t := _random(ALNUM, 36, r))}", t),
    # issue 34's shapes
    "hex, 64, unlabelled (a 256-bit key)": lambda r: (t := _random("0123456789abcdef", 64, r), t),
    "DigitalOcean token": lambda r: (f"dop_v1_{(t := _random('0123456789abcdef', 64, r))}", t),
    "Vault service token": lambda r: (f"hvs.{(t := _random(ALNUM, r.randint(24, 95), r))}", t),
    "Mailgun key": lambda r: (f"key-{(t := _random(LOWER_ALNUM, 32, r))}", t),
    "Shopify token": lambda r: (f"shpat_{(t := _random('0123456789abcdef', 32, r))}", t),
    "age secret key": lambda r: (f"AGE-SECRET-KEY-1{(t := _random(BECH32, 58, r))}", t),
    "password after a full-width colon": lambda r: (
        f"密码：{(t := _random(ALNUM + '!#%&*,.;=?@^_~-', r.randint(4, 16), r))}",
        t,
    ),
    "Slack webhook": lambda r: (
        f"https://hooks.slack.com/services/T0{_random(ALNUM, 8, r)}/B0{_random(ALNUM, 8, r)}/"
        f"{(t := _random(ALNUM, 24, r))}",
        t,
    ),
}


def detection(n: int) -> None:
    rng = random.Random(16)
    print(f"\nDetection ({n:,} generated secrets of each shape, in 'Note: ... thanks.'):")
    for name, make in SHAPES.items():
        found = 0
        for _ in range(n):
            text, secret = make(rng)
            found += secret not in scrub(f"Note: {text} thanks.")[0]
        print(f"  {name:36} {100 * found / n:6.1f}%")


def speed(files: list[Path]) -> None:
    text = "\n".join(p.read_text(errors="replace") for p in files if p.is_file())
    started = time.perf_counter()
    scrub(text)
    seconds = time.perf_counter() - started
    code = "import time; t = time.perf_counter(); import memctl.memories.privacy; "
    code += "print((time.perf_counter() - t) * 1000)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    print(
        f"\nSpeed: import {float(out.stdout or 'nan'):.1f} ms; scrub of {len(text) / 1e6:.2f} MB "
        f"of code in {seconds * 1000:.0f} ms ({len(text) / 1e6 / seconds:.1f} MB/s)"
    )


def hook(files: list[Path]) -> None:
    """What the scanner adds to the capture hook: 200 messages of a real transcript's size."""
    text = "\n".join(p.read_text(errors="replace") for p in files if p.is_file())
    messages = [text[i : i + 1500] for i in range(0, 200 * 1500, 1500)]
    started = time.perf_counter()
    list(scrub_messages(((m, None) for m in messages), Redactions()))
    seconds = time.perf_counter() - started
    print(
        f"Hook: 200 messages of 1,500 characters of code, scrubbed as one conversation "
        f"(seams included): {seconds * 1000:.0f} ms"
    )


def detect_secrets_speed(files: list[Path]) -> None:
    """detect-secrets on the same code, when installed (it is not a dependency)."""
    code = (
        "import sys, time; t = time.perf_counter()\n"
        "from detect_secrets.core.scan import scan_line\n"
        "from detect_secrets.settings import default_settings\n"
        "i = time.perf_counter() - t; text = sys.stdin.read(); t = time.perf_counter()\n"
        "with default_settings():\n"
        "    for line in text.splitlines(): list(scan_line(line))\n"
        "print(f'{i * 1000:.0f} ms import; {len(text) / 1e6 / (time.perf_counter() - t):.2f} MB/s')"
    )
    text = "\n".join(p.read_text(errors="replace") for p in files[:40] if p.is_file())
    out = subprocess.run([sys.executable, "-c", code], input=text, capture_output=True, text=True)
    print("detect-secrets:", out.stdout.strip() or "not installed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="secrets generated per shape")
    parser.add_argument("--show", type=int, default=0, help="print the first N flagged lines")
    args = parser.parse_args()
    print("False positives (lines with any redaction; entropy check alone):")
    all_code: list[Path] = []
    for name, files in corpora().items():
        lines, flagged, entropy, kinds, size = false_positives(files, args.show)
        if name.startswith("code"):
            all_code += files
        print(
            f"  {name:40} {len(files):4} files {size / 1e6:6.2f} MB {lines:7,} lines: "
            f"{100 * flagged / max(lines, 1):.3f}% flagged, "
            f"entropy {100 * entropy / max(lines, 1):.3f}%  {dict(kinds.most_common(4))}"
        )
    detection(args.n)
    speed(all_code)
    hook(all_code)
    detect_secrets_speed(all_code)


if __name__ == "__main__":
    main()
