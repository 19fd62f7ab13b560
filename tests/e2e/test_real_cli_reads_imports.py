"""What `commandcode import claude|pi` writes is a session the real Command Code CLI resumes:
it continues the imported session (writing no session of its own) and sends the model exactly the
context we rebuild from it (Claude Code's merged parallel calls, pi's compaction, branch summary
and repaired labels included)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commandcode.interop.pi import open_pi
from helpers.cli import run_cli
from helpers.npm_programs import Programs
from helpers.real_cli import RealCli, our_context, same_context, sent_context

pytestmark = [pytest.mark.npm, pytest.mark.slow]


def _import(tool: str, ref: str, cwd: Path, data: Path, **env: str) -> str:
    done = run_cli(["import", tool, ref, "--json"], cwd, data, **env)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["id"])


def test_the_real_cli_resumes_an_imported_claude_session(npm_programs: Programs, claude_home: dict[str, Any],
                                                         tmp_path: Path) -> None:
    proj = claude_home["proj"]
    real = RealCli(npm_programs, tmp_path / "home", proj)
    session = _import("claude", claude_home["first"].stem, proj, real.data, HOME=str(claude_home["home"]))
    ours = our_context(session, proj, real.data)
    assert len(ours) > 4
    same_context(ours, sent_context(real("-r", session, "-p", "continuing the import")))
    after = our_context(session, proj, real.data)
    assert after[-1] == ("assistant", "ok: continuing the import") and after[:len(ours)] == ours
    assert {path.name for path in (real.data / "projects").glob("*/*.jsonl") if ".checkpoints." not in path.name} \
        == {f"{session}.jsonl"}


def test_the_real_cli_resumes_an_imported_pi_session(npm_programs: Programs, pi_files: dict[str, Any],
                                                     tmp_path: Path) -> None:
    cwd = pi_files["cwd"]
    real = RealCli(npm_programs, tmp_path / "home", cwd)
    env = {"PI_CODING_AGENT_DIR": str(pi_files["agent"])}
    for name in ("main", "branched"):
        session = _import("pi", open_pi(Path(pi_files[name]["path"])).id, cwd, real.data, **env)
        ours = our_context(session, cwd, real.data)
        assert ours
        same_context(ours, sent_context(real("-r", session, "-p", f"continuing {name}")))
