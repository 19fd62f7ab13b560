"""Writes one three-turn sub-agent run beside a session, with the kill points of
`killable_cli.py` (test support only): the crash test of sub-agent runs kills it at every
mutating file-system call.

Usage: `subagent_run.py PROJECT_FOLDER SESSION_ID CWD` (env as killable_cli.py reads it)."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import killable_cli  # noqa: E402


def main() -> None:
    folder, session_id, cwd = sys.argv[1:4]
    killable_cli.arm()
    from commandcode.sessions.files import SessionFiles
    from commandcode.sessions.subagent_writer import SubagentTranscript

    with SubagentTranscript(SessionFiles(folder, session_id), cwd, agent_type="general", description="crash",
                            tool_use_id="t4") as run:
        for turn in range(3):
            run.writer.append_message({"role": "user", "content": [{"type": "text", "text": f"turn {turn} " * 50}]})
            run.writer.append_message({"role": "assistant", "content": [{"type": "text", "text": f"reply {turn}"}]},
                                      model="offline")
            run.writer.commit()
        run.finish("completed")


if __name__ == "__main__":
    main()
