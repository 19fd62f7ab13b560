"""Sub-agent runs folded under the `agent` call that started them (issue #28): `sessions show`
(text and `--json`) and the md and html exports, through `python -m commandcode`, for a session
holding runs written by the real run writer (`SubagentTranscript`), their texts redacted and
their paths sanitized like the rest of an export."""

from __future__ import annotations

import json
import re
from pathlib import Path

from commandcode.sessions.files import SessionFiles
from helpers.cli import run_cli
from helpers.subagents import write_run
from helpers.transcripts import GITHUB_TOKEN, PLANTED_HTML, TranscriptBuilder


def _session(home: Path, workdir: Path) -> tuple[TranscriptBuilder, list[str]]:
    """A parent whose `agent` call `call_agent` started two runs (one failed), a second call
    with none, and a run tied to no call."""
    builder = TranscriptBuilder(workdir)
    builder.user("delegate please")
    builder.tool("call_agent", "agent", {"description": "Write b", "subagent_type": "general", "prompt": "write b"},
                 "b is written")
    builder.tool("call_other", "read_file", {"file_path": str(workdir / "a.txt")}, "a")
    builder.assistant("all done")
    transcript = builder.write(home)
    files = SessionFiles.for_transcript(transcript)
    first = write_run(files, str(workdir), tool_use_id="call_agent",
                      prompt=f"write b with token {GITHUB_TOKEN} in {workdir / 'b.txt'}", reply="b written " + PLANTED_HTML)
    second = write_run(files, str(workdir), tool_use_id="call_agent", agent_type="explore", status="failed",
                       prompt="look around", reply="found nothing")
    loose = write_run(files, str(workdir), tool_use_id=None, prompt="orphan prompt", reply="orphan reply")
    return builder, [first.agent_id, second.agent_id, loose.agent_id]


def test_sessions_show_folds_the_runs_under_their_call(home: Path, workdir: Path) -> None:
    builder, ids = _session(home, workdir)
    shown = run_cli(["sessions", "show", builder.session_id], workdir, home)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    start = lines.index("sub-agent runs: 3")
    block = lines[start:]
    assert block[1] == "  agent call call_agent:"
    assert block[2] == "    sub-agent general: general run · completed · 2 messages · offline"
    assert block[3].startswith(f"      {ids[0]} /") and block[3].endswith(f"agent-{ids[0]}.jsonl")
    assert block[4].startswith("      user: write b with token ") and block[5].startswith("      assistant: b written")
    assert block[6] == "    sub-agent explore: explore run · failed · 2 messages · offline"
    assert block[9] == "      assistant: found nothing"
    assert block[10] == "  not tied to an agent call:"
    assert block[11].startswith("    sub-agent general: general run · completed") and block[-1] == "      assistant: orphan reply"
    data = json.loads(run_cli(["sessions", "show", builder.session_id, "--json"], workdir, home).stdout)
    assert [(run["agent_id"], run["tool_use_id"], run["status"], run["messages"]) for run in data["subagent_runs"]] \
        == [(ids[0], "call_agent", "completed", 2), (ids[1], "call_agent", "failed", 2), (ids[2], None, "completed", 2)]


def test_a_session_without_runs_shows_none(home: Path, workdir: Path) -> None:
    builder = TranscriptBuilder(workdir)
    builder.user("hi")
    builder.assistant("hello")
    builder.write(home)
    shown = run_cli(["sessions", "show", builder.session_id], workdir, home)
    assert shown.returncode == 0 and "sub-agent" not in shown.stdout
    assert json.loads(run_cli(["sessions", "show", builder.session_id, "--json"], workdir, home).stdout)[
        "subagent_runs"] == []


def _export(home: Path, workdir: Path, fmt: str) -> str:
    """The `fmt` export of `_session`'s session, through `commandcode export`."""
    builder, _ids = _session(home, workdir)
    out = workdir / f"out.{fmt}"
    done = run_cli(["export", builder.session_id, "-f", fmt, "-o", str(out)], workdir, home)
    assert done.returncode == 0, done.stderr
    return out.read_text(encoding="utf-8")


def test_md_export_folds_the_runs_inside_their_call_redacted(home: Path, workdir: Path) -> None:
    md = _export(home, workdir, "md")
    call = md.index("<summary>AGENT Write b</summary>")
    first = md.index("<summary>Sub-agent general: general run · completed · 2 messages</summary>")
    second = md.index("<summary>Sub-agent explore: explore run · failed · 2 messages</summary>")
    other = md.index("<summary>READ a.txt</summary>")
    assert call < md.index("b is written") < first < md.index("> ❯ write b with token") < second < other
    assert md.count("</details>", call, other) == 3  # both runs, then the call, close before the next call
    assert GITHUB_TOKEN not in md and "[REDACTED:github-token]" in md
    assert str(workdir) not in md and "b.txt" in md  # the run's paths are sanitized too
    assert "<script>" not in md.split("b written", 1)[1].split("\n")[0]  # its HTML stays text
    assert "orphan" not in md  # a run no call started has nowhere to fold
    assert "- **Messages:** 6" in md  # the header counts the parent's messages


def test_html_export_folds_the_runs_inside_their_call_redacted(home: Path, workdir: Path) -> None:
    page = _export(home, workdir, "html")
    call = page.index('<span class="tool-input">Write b</span>')
    runs = [match.start() for match in re.finditer('<details class="subagent"', page)]
    assert len(runs) == 2 and call < runs[0] < runs[1] < page.index('<span class="tool-input">a.txt</span>')
    assert '<span class="subagent-badge">Sub-agent general</span><span class="subagent-description">general run' \
           '</span><span class="subagent-status">completed · 2 messages</span>' in page
    assert 'data-status="failed"' in page and "found nothing" in page
    assert GITHUB_TOKEN not in page and "[REDACTED:github-token]" in page and str(workdir) not in page
    assert PLANTED_HTML not in page and "window.__planted" in page  # escaped, never live


def test_an_unlistable_runs_folder_is_a_warning_and_the_session_still_shows_and_exports(home: Path,
                                                                                      workdir: Path) -> None:
    builder = TranscriptBuilder(workdir)
    builder.user("hi")
    builder.tool("call_agent", "agent", {"description": "Write b", "prompt": "p"}, "done")
    transcript = builder.write(home)
    own = transcript.with_suffix("")
    own.mkdir()
    (own / "subagents").symlink_to("subagents")  # a loop: listing it fails with ELOOP
    shown = run_cli(["sessions", "show", builder.session_id], workdir, home)
    assert shown.returncode == 0 and "sub-agent runs in " in shown.stderr and "not read" in shown.stderr
    assert "Traceback" not in shown.stderr and "message_count" in shown.stdout
    out = workdir / "out.md"
    done = run_cli(["export", builder.session_id, "-f", "md", "-o", str(out)], workdir, home)
    assert done.returncode == 0, done.stderr
    assert "<summary>AGENT Write b</summary>" in out.read_text(encoding="utf-8") and "Sub-agent" not in out.read_text()
