"""The HTTP client stays out of sessions that never call a provider: a whole offline `-p` turn,
and resolving a provider model, load neither `http.client` nor `httpx2`; the first request does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers.cli import cli_env
from helpers.openai_stub import OpenAIStub, write_providers

PROBE = """
import sys
from commandcode.cli import run
code = run(sys.argv[1:])
sys.stdout.flush()
sys.stderr.write("\\nMODULES " + " ".join(sorted(sys.modules)))
sys.exit(code)
"""


def _loaded(args: list[str], cwd: Path, home: Path) -> set[str]:
    completed = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=cwd, env=cli_env(home, STUB_API_KEY="k"),
                               capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    return set(completed.stderr.rsplit("MODULES ", 1)[1].split())


def test_an_offline_turn_loads_no_http_client(home: Path, workdir: Path) -> None:
    loaded = _loaded(["-p", 'call write_file {"file_path": "a.txt", "content": "x"}'], workdir, home)
    assert "commandcode.agent.runtime" in loaded
    assert loaded & {"http.client", "httpx2", "ssl", "commandcode.agent.providers.http",
                     "commandcode.agent.providers.openai"} == set()


def test_a_provider_turn_loads_http_client_on_its_first_request(home: Path, workdir: Path) -> None:
    with OpenAIStub() as stub:
        write_providers(home, stub.url)
        loaded = _loaded(["-p", "hi", "--model", "local/stub-model"], workdir, home)
    assert {"http.client", "commandcode.agent.providers.http"} <= loaded and "httpx2" not in loaded
