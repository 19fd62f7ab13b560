"""`AgentSession.export` and `/export`: defaults, formats and paths, progress, and the chunked
reading of the selection (the same rows whatever the chunk size)."""

from __future__ import annotations

from pathlib import Path

import pytest

from commandcode.agent.runtime import AgentSession
from commandcode.errors import CommandcodeError, UsageError
from commandcode.export import select
from commandcode.export.document import render_text
from commandcode.sessions.reader import open_session
from commandcode.shell.commands.export import COMMANDS
from helpers.transcripts import every_block_session


class FakeShell:
    def __init__(self, agent: AgentSession) -> None:
        self.agent = agent
        self.printed: list[str] = []

    def print(self, text: str) -> None:
        self.printed.append(text)


def _agent(home: Path, workdir: Path) -> AgentSession:
    builder = every_block_session(workdir)
    builder.write(home)
    return AgentSession.start(workdir, reference=builder.session_id)


def test_slash_export_formats_and_paths(home: Path, workdir: Path) -> None:
    agent = _agent(home, workdir)
    shell = FakeShell(agent)
    export = COMMANDS[0]
    export.run(shell, "")  # type: ignore[arg-type]
    export.run(shell, "md")  # type: ignore[arg-type]
    export.run(shell, "jsonl")  # type: ignore[arg-type]
    export.run(shell, str(workdir / "named.md"))  # type: ignore[arg-type]
    stem = f"command-code-session-{agent.session_id[:8]}"
    assert sorted(path.name for path in workdir.iterdir()) == sorted([f"{stem}.html", f"{stem}.md", f"{stem}.jsonl",
                                                                      "named.md"])
    assert shell.printed[0].startswith(f"Exported html to {workdir / (stem + '.html')} (")
    assert shell.printed[1].endswith("(4 message(s), no secrets found)"), "the context: after the compaction"
    with pytest.raises(UsageError):
        export.run(shell, "notes.txt")  # type: ignore[arg-type]
    assert export.complete is not None and export.complete(shell, "h") == ["html"]  # type: ignore[arg-type]


def test_a_new_session_has_nothing_to_export(home: Path, workdir: Path) -> None:
    agent = AgentSession.start(workdir)
    with pytest.raises(CommandcodeError, match="nothing to export"):
        agent.export()


def test_progress_reaches_the_total(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(select, "CHUNK", 3)
    agent = _agent(home, workdir)
    calls: list[tuple[int, int]] = []
    agent.export(str(workdir / "p.md"), selection="full", progress=lambda done, total: calls.append((done, total)))
    assert len(calls) > 3 and calls[-1][0] == calls[-1][1] > 0
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)


@pytest.mark.parametrize("selection", ["context", "full", "all"])
def test_chunks_do_not_change_the_document(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch,
                                           selection: str) -> None:
    transcript = every_block_session(workdir).write(home)
    whole, _ = render_text(open_session(transcript), "md", selection=selection)
    monkeypatch.setattr(select, "CHUNK", 2)
    chunked, _ = render_text(open_session(transcript), "md", selection=selection)
    strip = [line for line in whole.splitlines() if not line.startswith("- **Exported:**")]
    assert strip == [line for line in chunked.splitlines() if not line.startswith("- **Exported:**")]
