"""Every slash command of issues #13–#19, run through the real shell in a pseudo-terminal
(pexpect + pyte), one shell process per group of commands: each does what its issue says, and a
refused one is one `error:` line with the shell going on. The commands other branches own in
depth (the picker, `/tree`, the rewind menu, worktrees) are checked for their presence and basic
path here; their own tests go further."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from helpers.cli import entries, read_meta_file, transcripts
from helpers.openai_stub import OpenAIStub
from helpers.share import share_server
from helpers.terminal import CTRL_C, CTRL_D, ESC, HANG_TIMEOUT, TAB, ShellSession, shell_session

pytestmark = pytest.mark.terminal


def back_at_the_prompt(shell: ShellSession) -> None:
    """A full-screen screen closed: the status line is back under a prompt line (pyte prints
    the final byte of a few Textual mode resets it does not know, so the line may not start
    with `>`)."""
    shell.wait_screen(" checkpoint(s)")
    shell.wait_screen(">")


def empty_prompt(shell: ShellSession) -> None:
    """Waits until the cursor sits on an empty prompt line (`>` alone)."""
    deadline = time.monotonic() + HANG_TIMEOUT
    while shell.screen.display[shell.screen.cursor.y].rstrip() != ">":
        if time.monotonic() > deadline:
            raise AssertionError(f"no empty prompt under the cursor:\n{shell.text()}")
        shell.pump()


def refused(shell: ShellSession, line: str, error: str) -> None:
    """`line` is refused with one `error:` line naming `error`, and the prompt comes back."""
    screen = shell.exchange(line, f"error: {error}")
    assert "Traceback" not in screen
    shell.wait_prompt()


def test_help_exit_expand_rename_name_session_file_status_trace(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, columns=250)
    screen = shell.exchange("/help", "Keys: Enter sends")
    for name in ("/fork (/branch)", "/clone", "/tree", "/rewind (/checkpoint)", "/resume (/sessions)", "/export",
                 "/share", "/unshare", "/copy", "/worktree", "/worktrees", "/model", "/effort", "/compact",
                 "/compact-mode", "/config", "/status", "/trace", "/session-file", "/name", "/rename", "/clear (/new)"):
        assert name in screen, name
    shell.exchange("/help compact-mode", "without saving it")
    refused(shell, "/expand", "no tool call to expand yet")
    shell.exchange('call write_file {"file_path": "w.txt", "content": "w\\n"}', "Allow write_file")
    shell.exchange("1", "Ran 1 tool call(s)")
    shell.exchange("/expand", '"content": "w\\n"')
    shell.exchange("/rename every-command", "session named 'every-command'")
    shell.exchange("/name", "\nevery-command\n")
    shell.exchange("/session-file", ".jsonl\n")
    shell.exchange("/status", "\nscratchpad ", "permission mode  default", "compaction       0 compaction(s)")
    shell.exchange("/trace", "trace")
    shell.line("/quit")
    assert shell.wait_exit() == 0
    [transcript] = transcripts(home)
    assert read_meta_file(transcript)["title"] == "every-command"


def test_fork_branch_clone_tree_rewind_resume_sessions(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, columns=250)
    refused(shell, "/tree", "this session has no tree yet")
    shell.exchange("first prompt", "You said: first prompt")
    original = {path.stem for path in transcripts(home)}
    assert len(original) == 1
    screen = shell.exchange("/fork forked-one", "; the original stays resumable with `commandcode -r ")
    assert "(forked-one)" in screen
    shell.wait_prompt()
    shell.exchange("/branch", "forked ")
    shell.wait_prompt()
    refused(shell, "/clone now", "/clone takes no arguments")
    shell.exchange("/clone", "cloned the active branch")
    shell.wait_prompt()
    assert len(transcripts(home)) == 4  # the original, two forks, a clone
    shell.exchange("/tree", "first prompt")  # the tree screen, full-screen, shows the conversation
    shell.send("q")
    back_at_the_prompt(shell)
    refused(shell, "/rewind 3", "/rewind takes no arguments")
    shell.line("/checkpoint")  # the alias opens the same menu: the clone has no checkpoints, and says so
    shell.wait_screen("No checkpoints yet in this session")
    shell.send(ESC)
    shell.wait_screen("Rewind cancelled; nothing was changed")
    back_at_the_prompt(shell)
    shell.line("/resume")  # the picker lists this project's sessions
    shell.wait_screen("forked-one")
    shell.send(ESC)
    back_at_the_prompt(shell)
    shell.line("/sessions")
    shell.wait_screen("forked-one")
    shell.send(ESC)
    back_at_the_prompt(shell)
    shell.line("/exit")
    assert shell.wait_exit() == 0
    assert original <= {path.stem for path in transcripts(home)}


def test_export_copy_compact_compact_mode_model_effort(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, columns=250)
    refused(shell, "/copy", "nothing to copy yet")
    shell.exchange("please reply", "You said: please reply")
    shell.exchange("/export md", "Exported md to ")
    shell.exchange("/export jsonl", "Exported jsonl to ")
    [transcript] = transcripts(home)
    [jsonl] = list(workdir.glob("command-code-session-*.jsonl"))
    assert jsonl.read_bytes() == transcript.read_bytes()
    assert "please reply" in next(workdir.glob("command-code-session-*.md")).read_text()
    refused(shell, "/export /nonexistent-dir/x.html", "")
    assert not Path("/nonexistent-dir").exists()
    shell.exchange("/copy", "copied")
    assert b"\x1b]52;c;" in shell.raw  # OSC 52 carries the reply to the terminal's clipboard
    shell.exchange("/compact-mode", "compact mode: full")
    shell.exchange("/compact-mode fast", "compact mode: fast")
    refused(shell, "/compact-mode slow", "unknown compact mode 'slow'")
    shell.exchange("/compact", "nothing to compact yet")  # two messages: nothing is written
    shell.exchange("/model", "model: commandcode/offline")
    refused(shell, "/model nosuch/thing", "")
    shell.exchange("/effort", "effort: (the model default)")
    refused(shell, "/effort extreme", "")
    shell.line("/exit")
    assert shell.wait_exit() == 0
    assert [entry["type"] for entry in entries(transcript)] == ["message", "message"]


def test_compact_summarizes_the_older_turns_and_reports_the_savings(home: Path, workdir: Path) -> None:
    (workdir / ".commandcode").mkdir()
    (workdir / ".commandcode" / "settings.json").write_text('{"contextWindow": 3000}')  # keeps ~1,000 tokens
    shell = shell_session(workdir, home, columns=250)
    for number in range(6):
        shell.exchange(f"turn {number} " + "word " * 140, f"You said: turn {number} ")
    screen = shell.exchange("/compact keep the goal", "compacted: ")
    assert "saved in 1 compaction(s) of this session" in screen, screen
    screen = shell.exchange("/status", "\nscratchpad ")
    saved = read_meta_file(transcripts(home)[0])["compaction"]["tokensSaved"]
    assert f"1 compaction(s), {saved:,} tokens saved in all, {saved:,} by this run" in screen, screen
    shell.line("/exit")
    assert shell.wait_exit() == 0
    [transcript] = transcripts(home)
    assert [entry["type"] for entry in entries(transcript)].count("compaction") == 1  # appended, nothing rewritten
    assert read_meta_file(transcript)["compaction"]["count"] == 1


def test_model_switches_to_a_served_model_mid_session(openai_stub: OpenAIStub, home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, columns=250)
    empty_prompt(shell)
    shell.send("/model local/stub-model-")
    shell.send(TAB)  # the models of providers.json complete
    shell.wait_screen("> /model local/stub-model-2")
    shell.send(CTRL_C)
    shell.send("/effort xh")
    shell.send(TAB)
    shell.wait_screen("> /effort xhigh")
    shell.send(CTRL_C)
    shell.exchange("offline first", "You said: offline first")
    shell.send("/effort hi")  # typed as the turn ends: the tty does not echo it raw (terminal.NoEcho)
    shell.send(TAB)
    shell.wait_screen("> /effort high")
    assert "/effort hi\n" not in shell.text() and "/effort hi>" not in shell.text()
    shell.send(CTRL_C)
    shell.exchange("/model local/stub-model", "model: local/stub-model")
    shell.exchange("served next", "Hello from stub. You said: served next")
    shell.line("/exit")
    assert shell.wait_exit() == 0
    [transcript] = transcripts(home)
    assert any(entry["type"] == "model_change" for entry in entries(transcript))
    assert read_meta_file(transcript)["model"] == "local/stub-model"
    assert len(openai_stub.requests) == 1


def test_share_and_unshare(home: Path, workdir: Path) -> None:
    with share_server(home, workdir) as server:
        shell = shell_session(workdir, home, columns=250)
        shell.exchange("something to share", "You said: something to share")
        refused(shell, "/unshare", "this session is not shared")
        refused(shell, "/share everything", "/share does not take 'everything'")
        shell.exchange("/share", "on the share server?")
        shell.line("n")
        shell.wait_screen("nothing was shared")
        shell.exchange("/share", "on the share server?")
        shell.line("y")
        screen = shell.wait_screen("Shared at http://")
        assert f":{server['port']}/" in screen
        shell.exchange("/unshare", "Unshared: the link no longer works")
        shell.line("/exit")
        assert shell.wait_exit() == 0


def test_worktree_and_worktrees_in_a_git_repository(home: Path, workdir: Path) -> None:
    for argv in (["init", "-q", "-b", "main"], ["-c", "user.email=t@e", "-c", "user.name=t", "commit", "-q",
                                                 "--allow-empty", "-m", "start"]):
        subprocess.run(["git", *argv], cwd=workdir, check=True, capture_output=True)
    shell = shell_session(workdir, home, columns=250)
    shell.exchange("/worktrees", "no session worktrees in this repository")
    refused(shell, "/worktree two names", "/worktree takes one name")
    shell.exchange("/worktree feat", "working in the worktree")
    shell.wait_prompt()
    shell.exchange("/worktrees", "worktree-feat")
    refused(shell, "/worktree feat", "this session already works in the worktree feat")
    shell.exchange("/session-file", "-worktrees-feat/")
    shell.line("/exit")
    assert shell.wait_exit() == 0
    assert (workdir / ".commandcode" / "worktrees" / "feat").is_dir()


def test_clear_and_back_through_the_rewind_menu_new_config_and_ctrl_d(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, columns=250)
    shell.exchange("before clear", "You said: before clear")
    [first] = transcripts(home)
    shell.exchange("/clear", f"the previous one stays resumable: commandcode -r {first.stem}")
    shell.line("/rewind")  # the rewind menu offers the way back first
    shell.wait_screen("(previous session)")
    shell.send("\r")
    shell.wait_screen(f"Resumed the previous session {first.stem}")
    back_at_the_prompt(shell)
    shell.exchange("after coming back", "You said: after coming back")
    shell.exchange("/new", "new session")
    shell.wait_prompt()
    shell.exchange("/config", "Settings files (later ones win):")
    shell.exchange('/config set --local defaultExportFormat "md"', "written to")
    shell.exchange("ask again", "You said: ask again")
    shell.exchange("/export", "Exported md to ")  # the setting just written picks the format
    shell.send(CTRL_D)
    assert shell.wait_exit() == 0
    assert len(transcripts(home)) == 2  # the cleared session had nothing saved; the /new one did
    assert "after coming back" in first.read_text()
    settings = json.loads((workdir / ".commandcode" / "settings.local.json").read_text())
    assert settings == {"defaultExportFormat": "md"}
    assert len(list(workdir.glob("command-code-session-*.md"))) == 1


def test_launch_flags_mode_yolo_session_sessions_model_effort(openai_stub: OpenAIStub, home: Path, workdir: Path) -> None:
    planned = shell_session(workdir, home, ["--permission-mode", "plan"], columns=250)
    assert " · plan · " in planned.wait_screen(" · plan · ")  # the status line, before the first turn
    planned.line("/exit")
    assert planned.wait_exit() == 0
    yolo = shell_session(workdir, home, ["--yolo"], columns=250)
    screen = yolo.exchange('call bash {"command": "echo from-yolo > y.txt"}', "Ran 1 tool call(s)")
    assert "Allow bash" not in screen  # nobody was asked
    yolo.wait_screen(" · bypassPermissions · ")
    assert (workdir / "y.txt").read_text() == "from-yolo\n"
    yolo.line("/exit")
    assert yolo.wait_exit() == 0
    [transcript] = transcripts(home)
    by_path = shell_session(workdir, home, ["--session", str(transcript)], columns=250)
    by_path.wait_screen(f"resumed session {transcript.stem}")
    by_path.line("/exit")
    assert by_path.wait_exit() == 0
    picker = ShellSession(workdir, home, ["--sessions"], columns=250)  # bare: the picker opens first
    picker.wait_screen("from-yolo")
    picker.send("\r")
    picker.wait_screen(f"resumed {transcript.stem}")
    picker.line("/exit")
    assert picker.wait_exit() == 0
    served = shell_session(workdir, home, ["--model", "local/stub-model", "--effort", "high"], columns=250)
    served.exchange("/effort", "effort: high")
    served.wait_screen(" · local/stub-model · effort high · ")  # the status line names the launch's model
    served.exchange("to the stub", "Hello from stub. You said: to the stub")
    served.line("/exit")
    assert served.wait_exit() == 0
    assert len(openai_stub.requests) == 1 and len(transcripts(home)) == 2


def test_a_data_dir_that_cannot_hold_sessions_is_one_error_line(home: Path, workdir: Path, tmp_path: Path) -> None:
    """The new session is made behind the prompt (`shell/warm_start.py`); when that fails the shell
    says why in one line and exits 1, with no traceback."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    shell = ShellSession(workdir, blocker / "home", columns=250)
    assert shell.wait_exit() == 1
    screen = shell.text()
    assert "error: cannot start the session: " in screen and "Not a directory" in screen, screen
    assert "Traceback" not in screen and "internal error" not in screen
    assert blocker.read_text() == "not a folder\n"
