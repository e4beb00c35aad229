"""How long `opencode run` takes with no package registry reachable: without memctl's
plugin, with it as `memctl install opencode` writes it (its lock and node_modules
marker), and with it as before (the plugin alone, so OpenCode tries to install
@opencode-ai/plugin from npm at each start). The registry is a closed loopback port
(npm_config_registry and ~/.npmrc); the model is the scripted one of tests/e2e.

    python -m benchmarks.opencode_offline [--runs N] [--clients DIR]

Prints wall seconds per `opencode run` (the first and later ones), whether the
context block reached the model, and the registry's address; asserts nothing. Needs
node and the clients from scripts/install-clients (or --clients DIR).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

MODES = ("no plugin", "memctl's plugin", "plugin without lock")


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2, help="`opencode run`s per mode")
    parser.add_argument("--clients", type=Path, help="where scripts/install-clients put them")
    args = parser.parse_args()
    if args.clients:
        os.environ["MEMCTL_CLIENTS_DIR"] = str(args.clients)
    from tests.e2e import test_clients as e2e  # reads MEMCTL_CLIENTS_DIR when imported
    from tests.e2e.model_server import scripted_model

    os.environ.pop("MEMCTL_CLIENTS_DIR", None)
    registry = f"http://127.0.0.1:{closed_port()}/"
    print(f"registry {registry} (closed); load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"{'mode':<22} {'run':>3} {'seconds':>8}  context")
    for mode in MODES:
        with tempfile.TemporaryDirectory() as tmp, scripted_model() as model:
            world = e2e.World(Path(tmp), model)
            world.env["npm_config_registry"] = registry
            (world.home / ".npmrc").write_text(f"registry={registry}\n")
            config = world.home / ".config" / "opencode" / "opencode.json"
            config.parent.mkdir(parents=True)
            provider = {"options": {"baseURL": f"{model.url}/v1", "apiKey": "scripted"}}
            settings = {"provider": {"anthropic": provider}, "model": "anthropic/claude-sonnet-4-5"}
            config.write_text(json.dumps({**settings, "autoupdate": False, "share": "disabled"}))
            if mode != "no plugin":
                world.memctl("install", "opencode")
            if mode == "plugin without lock":
                (config.parent / "package-lock.json").unlink()
            world.memctl("remember", "We deploy with make release from main.")
            for run in range(1, args.runs + 1):
                seen = len(model.bodies("/v1/messages"))
                began = time.monotonic()
                world.run(e2e.BIN / "opencode", "run", "How do we deploy?")
                took = time.monotonic() - began
                sent = json.dumps(model.bodies("/v1/messages")[seen:])
                print(f"{mode:<22} {run:>3} {took:>8.1f}  {'<memctl-context>' in sent}", flush=True)


if __name__ == "__main__":
    main()
