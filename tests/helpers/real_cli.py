"""The real Command Code CLI (`command-code` from npm, on Node 22) run offline for the
compatibility tests: `RealCli` runs it headless on a throwaway HOME whose data dir commandcode
shares (`--local-only`, a BYOK provider whose `baseURL` is the stub OpenAI-compatible server,
`tasteLearning` off, its own network namespace), and `sent_context` reads back what it sent the
model: the context it rebuilt from the session's files; `real_tui` runs its Ink TUI in tmux
(`keys`, `slash`, `wait_screen` drive and read it)."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.cli import run_ok
from helpers.npm_programs import OFFLINE_RUN, OfflineRun, Programs, namespace_available, run_offline
from helpers.stub_models import chat_context, message_kinds

PROVIDERS = {"provider": {"local": {"name": "Local stub", "baseURL": "{STUB}/v1", "apiKey": False, "models": {
    "stub-model": {"name": "Stub", "contextWindow": 128000, "maxOutput": 4096},
    "stub-model-2": {"name": "Stub 2", "contextWindow": 128000, "maxOutput": 4096},
    # a model with reasoning levels: the real CLI records `--effort` and `/effort` only for such a model
    "stub-reasoner": {"name": "Stub reasoner", "contextWindow": 128000, "maxOutput": 4096,
                      "reasoningEfforts": ["low", "medium", "high"]}}}}}


class RealCli:
    """`command-code` in `cwd` with HOME = `home` (the data dir both tools share)."""

    def __init__(self, programs: Programs, home: Path, cwd: Path) -> None:
        self.programs, self.home, self.cwd = programs, home, cwd
        self.data = home / ".commandcode"
        self.data.mkdir(parents=True)
        (self.data / "config.json").write_text(json.dumps({"localOnly": True, "tasteLearning": False}))
        self.runs = 0

    def __call__(self, *args: str, model: str = "local/stub-model") -> OfflineRun:
        providers = self.data / "providers.json"
        providers.write_text(json.dumps(PROVIDERS))  # `{STUB}` is filled in inside the namespace
        self.runs += 1
        env = {"HOME": str(self.home), "COMMAND_CODE_API_KEY": "stub", "CMD_LOCAL_ONLY": "1", "DO_NOT_TRACK": "1",
               "COMMANDCODE_SKIP_UPDATES": "1", "PATH": f"{self.programs.node.parent}:/usr/bin:/bin",
               "OFFLINE_RUN_TEMPLATES": str(providers), **self.programs.node_env()}
        run = run_offline([str(self.programs.node), str(self.programs.command_code), "--local-only", "--yolo",
                           "--model", model, *args], cwd=self.cwd, env=env,
                          log=self.home / f"requests-{self.runs}.jsonl", timeout=180).check()
        assert any(request["path"].endswith("/chat/completions") for request in run.requests)
        return run


def ours_offline(real: RealCli, cwd: Path, log: Path, *args: str) -> OfflineRun:
    """`python -m commandcode --model local/stub-model ARGS` on the real CLI's data dir, offline
    against the same stub (its `providers.json`), as `RealCli` runs the real CLI."""
    providers = real.data / "providers.json"
    providers.write_text(json.dumps(PROVIDERS))  # `{STUB}` is filled in inside the namespace
    env = {"COMMANDCODE_HOME": str(real.data), "HOME": str(real.home), "COMMANDCODE_INDEX": "off", "NO_COLOR": "1",
           "OFFLINE_RUN_TEMPLATES": str(providers), "PATH": "/usr/bin:/bin"}
    return run_offline([sys.executable, "-m", "commandcode", "--model", "local/stub-model", *args], cwd=cwd, env=env,
                       log=log).check()


def shared_home(programs: Programs, tmp_path: Path) -> tuple[RealCli, Path, Path]:
    """A real CLI on a fresh HOME under `tmp_path` with its project folder: (it, cwd, data dir)."""
    home, cwd = tmp_path / "home", tmp_path / "proj"
    cwd.mkdir()
    real = RealCli(programs, home, cwd)
    return real, cwd, real.data


def sent_context(run: OfflineRun, *, with_prompt: bool = False) -> list[tuple[str, str]]:
    """What the real CLI sent the model in its first request, without the new prompt (unless
    `with_prompt`): the context it rebuilt from the session's files."""
    body = next(request["body"] for request in run.requests if request["path"].endswith("/chat/completions"))
    sent = chat_context(body)
    return sent if with_prompt else sent[:-1]


def our_context(ref: str, cwd: Path, data: Path) -> list[tuple[str, str]]:
    """`sessions context REF` as (kind, text) pairs, the shape `sent_context` gives."""
    return message_kinds(json.loads(run_ok(["sessions", "context", ref, "--json"], cwd, data).stdout)["messages"])


def _merged(items: list[tuple[str, str]]) -> list[tuple[str, list[str]]]:
    """Consecutive user messages as one: on the wire the real CLI sends them merged (a
    compaction's summary and the first kept prompt arrive as one user message)."""
    out: list[tuple[str, list[str]]] = []
    for kind, text in items:
        if kind == "user" and out and out[-1][0] == "user":
            out[-1][1].append(text)
        else:
            out.append((kind, [text]))
    return out


def same_context(ours: list[tuple[str, str]], theirs: list[tuple[str, str]]) -> None:
    """Our context (`our_context`) is the one the real CLI sent (`sent_context`), message by message."""
    mine, sent = _merged(ours), _merged(theirs)
    assert [kind for kind, _ in mine] == [kind for kind, _ in sent]
    for (kind, parts), (_, sent_parts) in zip(mine, sent):
        joined = "\n".join(sent_parts)
        for part in parts:
            assert part in joined, (kind, part[:200], joined[:400])  # the real CLI may wrap a prompt in reminders


def screen_text(session: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout


def wait_screen(session: str, text: str, *, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout  # only to detect a hang
    while time.monotonic() < deadline:
        screen = screen_text(session)
        if text in screen:
            return screen
        time.sleep(0.3)
    raise AssertionError(f"{text!r} never appeared on the screen:\n{screen_text(session)}")


@contextlib.contextmanager
def real_tui(real: RealCli, cwd: Path, session: str | None, tmp_path: Path, *, ready: str = "Ask your question",
             model: str = "local/stub-model") -> Iterator[str]:
    """The real CLI's TUI resuming `session` (None: its `-r` picker), in a tmux session (offline,
    like the headless runs); yields the tmux session name once `ready` is on the screen."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (.ci/run installs it)")
    (real.data / "providers.json").write_text(json.dumps(PROVIDERS))
    env = {"HOME": str(real.home), "COMMAND_CODE_API_KEY": "stub", "CMD_LOCAL_ONLY": "1", "DO_NOT_TRACK": "1",
           "COMMANDCODE_SKIP_UPDATES": "1", "PATH": f"{real.programs.node.parent}:/usr/bin:/bin",
           "OFFLINE_RUN_TEMPLATES": str(real.data / "providers.json"), "TERM": "xterm-256color",
           **real.programs.node_env()}
    command = [sys.executable, str(OFFLINE_RUN), str(tmp_path / f"tui-{session}.jsonl"), "--",
               str(real.programs.node), str(real.programs.command_code), "--local-only", "--yolo", "--model",
               model, "-t", "--skip-onboarding", "-r", *([session] if session else [])]
    if namespace_available():
        env["OFFLINE_RUN_NAMESPACE"] = "1"
        command = ["unshare", "-n", *command]
    script = tmp_path / "tui.sh"
    # `CI` (set by CI runners, and by .ci/run's caller) turns the real CLI's Ink TUI non-interactive.
    script.write_text("unset CI CONTINUOUS_INTEGRATION\n" + f"cd {shlex.quote(str(cwd))}\n" + "".join(f"export {key}={shlex.quote(value)}\n"
                                                             for key, value in env.items())
                      + "exec " + " ".join(shlex.quote(part) for part in command) + "\n")
    # The default tmux server is shared with every other test run on the machine: the pid keeps
    # two runs of the same test (two checkouts, one machine) from claiming one session name.
    name = f"cc-{os.getpid()}-{tmp_path.name}"
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "160", "-y", "45", f"bash {script}; sleep 60"],
                   check=True, env={key: value for key, value in os.environ.items() if key not in ("TMUX", "CI")})
    try:
        wait_screen(name, ready)
        time.sleep(2)  # the resumed session finishes loading after it is drawn
        yield name
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def keys(name: str, *sequence: str, settle: float = 0.6) -> None:
    for key in sequence:
        subprocess.run(["tmux", "send-keys", "-t", name, key], check=True)
        time.sleep(settle)  # menus open asynchronously


def slash(name: str, command: str) -> None:
    keys(name, command, settle=1.5)
    keys(name, "Enter")
