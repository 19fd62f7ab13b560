"""The command line's one project context per launch (`cli/launch_project.py`, issue #27) reaches
the share client and the rewind: `commandcode share` reads the settings that name the share
service once (its check and its publish used to make a context each), and the commands that open
a session (`rewind`, `checkpoints list`, `sessions label|goto|rename|status`) open it with
the launch's context."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from commandcode.cli import app
from commandcode.cli.launch_project import launch_project
from commandcode.config import settings
from commandcode.sessions.files import SessionFiles
from helpers.cli import read_lines
from helpers.share import share_server
from helpers.transcripts import TranscriptBuilder


def _session(home: Path, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> SessionFiles:
    """A session of `cwd`, the folder the commands run in."""
    monkeypatch.chdir(cwd)
    builder = TranscriptBuilder(cwd)
    builder.user("a prompt")
    builder.assistant("a reply")
    return SessionFiles.for_transcript(builder.write(home))


def test_share_reads_the_launchs_settings_once(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _session(home, workdir, monkeypatch)
    loads: list[str] = []
    real_load = settings.load_settings

    def counting_load(cwd: object, *args: object, **kwargs: object) -> object:
        loads.append(str(cwd))
        return real_load(cwd, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(settings, "load_settings", counting_load)
    with share_server(home, workdir):
        result = CliRunner().invoke(app, ["share", files.session_id, "--yes", "--no-copy"])
        assert result.exit_code == 0, (result.output, result.exception)
        assert files.share.is_file()
        assert loads == [str(workdir)]  # the launch's context, read once for the check and the publish
        loads.clear()
        result = CliRunner().invoke(app, ["unshare", files.session_id])
        assert result.exit_code == 0, (result.output, result.exception)
        assert not files.share.exists(), result.output


@pytest.mark.parametrize("command", [
    ["rewind", "{sid}", "--to", "1", "--mode", "code", "--dry-run"], ["checkpoints", "list", "{sid}"],
    ["sessions", "label", "{sid}", "{entry}", "start"], ["sessions", "goto", "{sid}", "{entry}"],
    ["sessions", "rename", "{sid}", "renamed"], ["sessions", "status", "{sid}"],
], ids=" ".join)
def test_commands_open_the_session_with_the_launchs_context(home: Path, workdir: Path, command: list[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from commandcode.agent import runtime

    files = _session(home, workdir, monkeypatch)
    opened: list[object] = []
    real_init = runtime.AgentSession.__init__

    def recording_init(self: runtime.AgentSession, *args: object, **kwargs: object) -> None:
        real_init(self, *args, **kwargs)  # type: ignore[arg-type]
        opened.append(self.handle.project)

    monkeypatch.setattr(runtime.AgentSession, "__init__", recording_init)
    entry = read_lines(files.transcript)[1]["id"]
    argv = [part.format(sid=files.session_id, entry=entry) for part in command]
    result = CliRunner().invoke(app, argv)  # the root callback begins the launch: its context is made on first use
    assert opened and all(context is launch_project() for context in opened), (result.output, result.exception)
