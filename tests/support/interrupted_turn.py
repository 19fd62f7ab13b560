"""Runs one turn of a session and interrupts it, as the shell's Esc does (test support only).

    python tests/support/interrupted_turn.py SID MARKER stream|bash

Opens session SID in the current folder (`AgentSession`, bypassPermissions), sends a prompt
carrying MARKER and sets the turn's `cancel` event: `stream` after the third text delta of the
offline model's reply (slowed by `COMMANDCODE_OFFLINE_TOKEN_MS`), `bash` 0.3 s into a `bash` call
that prints `MARKER-out` and sleeps. Prints `{"type": "result", "session_id", "interrupted"}`
once the turn is committed. The kill points of `killable_cli.py` are installed first
(`COMMANDCODE_TEST_KILL_AT`, `COMMANDCODE_TEST_COUNT_FILE`), so the crash harness's `interrupt`
lane (`helpers/crash_interrupt.py`) can kill it anywhere.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import killable_cli  # noqa: E402


def main() -> None:
    killable_cli.arm()
    from commandcode.agent.events import TurnEvent
    from commandcode.agent.runtime import AgentSession

    session_id, marker, kind = sys.argv[1:4]
    cancel = threading.Event()
    deltas: list[str] = []

    def on_event(event: TurnEvent) -> None:
        if kind == "stream" and event.kind == "text":
            deltas.append(event.text)
            if len(deltas) == 3:
                cancel.set()
        elif kind == "bash" and event.kind == "tool_start":
            threading.Timer(0.3, cancel.set).start()

    prompt = f"{marker} stream" if kind == "stream" else \
        f'{marker} bash\ncall bash {{"command": "echo {marker}-out; sleep 20"}}'
    with AgentSession.start(Path.cwd(), reference=session_id, permission_mode="bypassPermissions") as agent:
        result = agent.turns.run_turn(prompt, on_event=on_event, cancel=cancel)
    print(json.dumps({"type": "result", "session_id": session_id, "interrupted": result.interrupted}), flush=True)


if __name__ == "__main__":
    main()
