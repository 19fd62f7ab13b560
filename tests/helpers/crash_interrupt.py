"""The `interrupt` operation of the crash harness (`helpers.crash_harness`): a turn the user
interrupts, committed as far as it got (issue 31), SIGKILLed at random moments.

Each run is `tests/support/interrupted_turn.py SID MARKER stream|bash` on a seeded session: the
turn is interrupted mid-stream (the offline model slowed to 20 ms a token) or while a `bash` call
runs, then committed in one append (the prompt, the text so far or the stopped call and its
result, the `Interrupted by user` marker). After every point, on top of the harness's checks
(every transcript opens, reported markers on the active path, ...):

- no torn state: every prompt of the lane in the transcript is followed, before the next prompt,
  by the `Interrupted by user` marker, and every `tool_use` has its `tool_result`; a killed run's
  turn is wholly there or wholly absent. The one exception is the harness's simulated half write
  (`call-torn`: half the bytes of the commit's one `write` land), which leaves the whole lines
  before the tear, as it does for any turn; a torn line right after the turn marks it, and it
  is counted (`notes.turns_cut_by_a_torn_write`), not a violation;
- every checkpoints line is whole (the harness's checks), and a reported run's marker is in the
  file (`workspace.reported`, checked by the harness).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from helpers.locations import KILLABLE

INTERRUPT_OPERATIONS = ("interrupt",)
DRIVER = Path(KILLABLE).with_name("interrupted_turn.py")
MARKER_TEXT = "Interrupted by user"


def seed(workspace: Any) -> None:
    workspace.session_id = workspace._seed_session()
    workspace.branching["kinds"] = {}


def command(workspace: Any, killable: bool) -> list[str]:
    """The program a run starts (its arguments follow): the driver, whose kill points are
    killable_cli's whether or not a point is set."""
    del workspace, killable
    return [sys.executable, str(DRIVER)]


def env(workspace: Any) -> dict[str, str]:
    del workspace
    return {"COMMANDCODE_OFFLINE_TOKEN_MS": "20"}


def next_run(workspace: Any, rng: random.Random, marker: str) -> list[str]:
    kind = rng.choice(("stream", "bash"))
    workspace.branching["kinds"][marker] = kind
    return [workspace.session_id or "", marker, kind]


def started(workspace: Any, args: list[str]) -> None:
    del workspace, args


def record_report(workspace: Any, args: list[str], stdout: str) -> bool:
    try:
        value = json.loads(stdout.strip().splitlines()[-1]) if stdout.strip() else None
    except ValueError:
        return False
    if not isinstance(value, dict) or value.get("type") != "result" or value.get("interrupted") is not True:
        return False
    workspace.reported.setdefault(str(value["session_id"]), []).append(args[1])
    return True


def _texts(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    return [block["text"] for block in content if isinstance(block, dict) and block.get("type") == "text"] \
        if isinstance(content, list) else []


def check(workspace: Any, violations: list[str], label: str) -> None:
    from commandcode.sessions.reader import open_session

    for transcript in workspace.transcripts():
        session = open_session(transcript)
        torn_lines = sorted(skipped.line for skipped in session.skipped_lines)
        rows, _ = session.tree_table()
        entries = list(session.entries())
        turn: list[dict[str, Any]] = []
        prompt, last_line = "", 0
        for entry, row in [*zip(entries, rows, strict=True), (None, None)]:
            message = entry.get("message") if entry is not None and entry.get("type") == "message" else None
            if entry is not None and message is None:
                continue
            assert message is None or isinstance(message, dict)
            is_prompt = message is not None and message.get("role") == "user" and \
                (message.get("meta") or {}).get("source") == "user"
            if message is None or is_prompt:
                line = row[4] if row is not None else 1 << 62
                if prompt.startswith("marker-"):
                    # a write the harness tore in half (`call-torn`) leaves the lines before the
                    # tear whole: a torn line right after the turn marks that case, as for any turn
                    half_written = any(last_line < torn < line for torn in torn_lines)
                    _check_turn(prompt, turn, violations, f"{label}: {transcript.name}", workspace, half_written)
                if message is not None:
                    prompt, turn = "\n".join(_texts(message)), []
                    last_line = line
                continue
            turn.append(message)
            last_line = row[4] if row is not None else last_line


def _check_turn(prompt: str, turn: list[dict[str, Any]], violations: list[str], where: str, workspace: Any,
                half_written: bool) -> None:
    marker = prompt.split()[0]
    if not turn or _texts(turn[-1]) != [MARKER_TEXT]:
        if half_written:
            workspace.notes["turns_cut_by_a_torn_write"] = workspace.notes.get("turns_cut_by_a_torn_write", 0) + 1
            return
        violations.append(f"{where}: the interrupted turn {marker} is torn: it does not end with {MARKER_TEXT!r}")
        return
    calls = {block["id"] for message in turn for block in message.get("content") or []
             if isinstance(block, dict) and block.get("type") == "tool_use"}
    results = {block.get("tool_use_id") for message in turn for block in message.get("content") or []
               if isinstance(block, dict) and block.get("type") == "tool_result"}
    if calls - results:
        violations.append(f"{where}: the interrupted turn {marker} leaves tool call(s) without a result")
