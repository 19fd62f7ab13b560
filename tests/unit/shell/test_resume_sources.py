"""`/resume --source claude|pi|all [filter]` (shared fake shell, real files): the picker opens on
that source with the filter; a picked Claude Code session is imported and switched to; an
unknown or missing source is refused with one line and nothing opened."""

from __future__ import annotations

from pathlib import Path

import pytest

from commandcode.agent.runtime import AgentSession
from commandcode.errors import CommandcodeError
from commandcode.shell.slash import registry
from helpers.fake_shell import FakeShell
from helpers.session_files import write_claude_session

CLAUDE_ID = "c1a0de00-0000-4000-8000-000000000003"


def test_resume_source_claude_imports_and_switches(home: Path, workdir: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    write_claude_session(tmp_path / "claude", workdir, CLAUDE_ID, "port the parser", "done")
    with AgentSession.start(workdir) as agent:
        shell = FakeShell(agent)
        shell.on_screen = lambda screen: screen.data.rows()[0].summary
        registry()["resume"].run(shell, "--source claude parser")
        [screen] = shell.screens
        assert (screen.data.source, screen.data.query) == ("claude", "parser")
        assert shell.agent.session_id != agent.session_id
        assert shell.agent.files.transcript.is_file()
        assert shell.agent.files.transcript.parent != (tmp_path / "claude")
        shell.agent.close()


@pytest.mark.parametrize("args, message", [("--source nope", "unknown source"), ("--source", "needs a value")])
def test_a_bad_source_is_refused(home: Path, workdir: Path, args: str, message: str) -> None:
    with AgentSession.start(workdir) as agent:
        shell = FakeShell(agent)
        shell.on_screen = lambda screen: None
        with pytest.raises(CommandcodeError, match=message):
            registry()["resume"].run(shell, args)
        assert shell.screens == []
