"""A `goto` leaf we write, seen by the real Command Code CLI: it resumes at the entry we moved
to, with no summary (our `commandcode.leaf` custom entry) and with one (a `branch_summary`),
and its next turn hangs where the jump left the session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import run_ok
from helpers.npm_programs import Programs
from helpers.real_cli import RealCli, our_context, same_context, sent_context

pytestmark = [pytest.mark.npm, pytest.mark.slow]


def _replies(transcript: Path) -> list[dict[str, Any]]:
    """The assistant message entries of the transcript, in file order."""
    entries = [json.loads(line) for line in transcript.read_text().splitlines()[1:]]
    return [entry for entry in entries if entry.get("type") == "message" and entry["message"]["role"] == "assistant"]


def test_the_real_cli_resumes_at_our_goto_leaf(npm_programs: Programs, tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    cwd.mkdir()
    real = RealCli(npm_programs, home, cwd)
    data = real.data
    run_ok(["-p", "first turn", "-n", "Jumps"], cwd, data)
    for prompt in ("second turn", "third turn"):
        run_ok(["-c", "-p", prompt], cwd, data)
    [transcript] = [path for path in (data / "projects").glob("*/*.jsonl") if ".checkpoints." not in path.name]
    session = transcript.stem
    first_reply, second, _third = (entry["id"] for entry in _replies(transcript))
    run_ok(["sessions", "goto", session, first_reply, "--no-summary"], cwd, data)
    ours = our_context(session, cwd, data)
    assert [text for _, text in ours][0] == "first turn" and len(ours) == 2
    same_context(ours, sent_context(real("-r", "Jumps", "-p", "after the jump")))
    # its reply hangs under the entry we jumped to, and is where the session now ends
    its_reply = _replies(transcript)[-1]
    assert its_reply["message"]["content"][0]["text"] == "ok: after the jump"
    tree = json.loads(run_ok(["sessions", "tree", session, "--json"], cwd, data).stdout)
    assert tree["leaf"] == its_reply["id"]
    on_path = [row["id"] for row in tree["entries"] if row["on_active_path"]]
    assert first_reply in on_path and second not in on_path
    # a jump with a branch summary: the real CLI sends the summary where we put it (the last
    # message of our context; on the wire it arrives merged with the new prompt)
    run_ok(["sessions", "goto", session, second, "--summary", "we tried the third turn and left it"], cwd, data)
    ours = our_context(session, cwd, data)
    assert any("we tried the third turn and left it" in text for _, text in ours)
    assert "we tried the third turn and left it" in ours[-1][1]
    resumed = real("-r", session, "-p", "after the summary")
    same_context([*ours, ("user", "after the summary")], sent_context(resumed, with_prompt=True))
