"""The real Command Code CLI (`command-code` from npm, on Node 22) run offline for the
compatibility tests: `RealCli` runs it headless on a throwaway HOME whose data dir commandcode
shares (`--local-only`, a BYOK provider whose `baseURL` is the stub OpenAI-compatible server,
`tasteLearning` off, its own network namespace), and `sent_context` reads back what it sent the
model: the context it rebuilt from the session's files."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.npm_programs import OfflineRun, Programs, run_offline
from helpers.stub_models import chat_context

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
               "OFFLINE_RUN_TEMPLATES": str(providers)}
        run = run_offline([str(self.programs.node), str(self.programs.command_code), "--local-only", "--yolo",
                           "--model", model, *args], cwd=self.cwd, env=env,
                          log=self.home / f"requests-{self.runs}.jsonl", timeout=180).check()
        assert any(request["path"].endswith("/chat/completions") for request in run.requests)
        return run


def sent_context(run: OfflineRun) -> list[tuple[str, str]]:
    """What the real CLI sent the model in its first request, without the new prompt: the
    context it rebuilt from the session's files."""
    body = next(request["body"] for request in run.requests if request["path"].endswith("/chat/completions"))
    return chat_context(body)[:-1]
