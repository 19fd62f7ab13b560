"""The interactive shell driven like a user, through a real pseudo-terminal (pexpect + pyte):
every slash command of the shell, the keys, interrupts, queued messages, history and the files
it leaves."""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from pathlib import Path

import pytest

from helpers.cli import entries, only_transcript, read_lines, read_meta_file, run_cli, transcripts, wait_for
from helpers.terminal import (
    ALT_ENTER,
    CTRL_C,
    CTRL_D,
    CTRL_O,
    CTRL_R,
    ENTER,
    ESC,
    SHIFT_TAB,
    TAB,
    ShellSession,
    shell_session,
)

pytestmark = pytest.mark.terminal

TOOL_PROMPT = 'call write_file {"file_path": "a.txt", "content": "one\\n"}'


def texts_of(transcript: Path) -> list[tuple[str, str]]:
    found = []
    for entry in entries(transcript):
        if entry["type"] == "message":
            blocks = entry["message"]["content"]
            found.append((entry["message"]["role"], " ".join(block.get("text", block["type"]) for block in blocks)))
    return found


def test_a_prompt_with_a_tool_call_streams_a_collapsed_tool_line_and_saves_the_turn(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home)
    shell.exchange(TOOL_PROMPT, "Allow write_file")  # default mode: the edit is asked about first
    screen = shell.exchange("1", "Ran 1 tool call(s)")  # "Yes, once"
    assert re.search(r"● write_file\(a\.txt\) → File created successfully at: .*#1", screen), screen
    assert (workdir / "a.txt").read_text() == "one\n"
    screen = shell.exchange("/expand 1", '"content": "one\\n"')
    assert "#1 write_file" in screen
    shell.send(CTRL_O)  # the last tool call, expanded by key
    shell.wait_screen("#1 write_file")
    shell.exchange("/expand 7", "error: no tool call #7")
    shell.line("/exit")
    assert shell.wait_exit() == 0
    transcript = only_transcript(home, workdir)
    assert [role for role, _ in texts_of(transcript)] == ["user", "assistant", "user", "assistant"]
    meta = read_meta_file(transcript)
    assert "entrypoint" not in meta and len(meta["traceIds"]) == 1  # an interactive session, one turn


def test_a_new_session_quit_before_any_reply_leaves_no_file(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home)
    shell.exchange("/rename never saved", "saved with the first reply")
    shell.exchange("/session-file", "(not created yet")
    shell.send(CTRL_D)
    assert shell.wait_exit() == 0
    assert transcripts(home) == []


def test_help_lists_every_command_and_shows_one(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home)
    screen = shell.exchange("/help", "Keys: Enter sends")
    for name in ("/clear (/new)", "/exit (/quit)", "/rename", "/name", "/session-file", "/status", "/trace", "/config",
                 "/expand", "/help"):
        assert name in screen, name
    shell.exchange("/help rename", "unique in this project")
    shell.exchange("/help nosuch", "error: no command /nosuch")
    shell.line("/quit")
    assert shell.wait_exit() == 0


def test_an_unknown_command_is_one_line_with_the_nearest_match(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home)
    screen = shell.exchange("/stauts", "did you mean /status?")
    assert "error: unknown command /stauts" in screen
    shell.line("/exit")
    shell.wait_exit()


def test_rename_name_and_the_tab_title(home: Path, workdir: Path) -> None:
    run_cli(["-p", "other session", "-n", "Taken Name"], workdir, home)
    shell = shell_session(workdir, home)
    shell.exchange("explain the auth module please", "Offline model reply")
    shell.line("/rename")  # bare: a title from the first prompt
    shell.wait_screen("session named 'explain the auth module please'")
    shell.wait_raw(b"\x1b]2;explain the auth module please\x07")
    shell.exchange("/name", "\nexplain the auth module please")
    shell.exchange("/rename   taken name  ", "error: the name 'taken name' is taken by session")
    shell.exchange("/rename " + "x" * 201, "error: the session name is 201 characters long; the limit is 200")
    shell.exchange("/name Auth Work", "session named 'Auth Work'")
    shell.line("/exit")
    shell.wait_exit()
    [transcript] = [path for path in transcripts(home) if read_meta_file(path).get("title") == "Auth Work"]
    names = [entry["name"] for entry in entries(transcript) if entry["type"] == "session_info"]
    assert names == ["explain the auth module please", "Auth Work"]
    assert read_meta_file(transcript)["userRenamed"] is True


def test_session_file_status_and_trace(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, ["--yolo"])
    shell.exchange("/trace", "error: no turn has run in this session yet")
    shell.exchange(TOOL_PROMPT, "Ran 1 tool call(s)")
    shell.line("/session-file")
    transcript = only_transcript(home, workdir)
    shell.wait_screen(transcript.name[:30])
    assert b"\x1b]8;;file://" in shell.raw  # an OSC 8 link to the transcript
    screen = shell.exchange("/status", "share")
    for label in ("id", "path", "name", "cwd", "model", "effort", "permission mode", "context", "cost", "lineage",
                  "compaction", "checkpoints", "trace"):
        assert re.search(rf"^{label}\s", screen, re.M), label
    assert "1 checkpoint(s)" in screen and "commandcode/offline" in screen
    screen = shell.exchange("/trace", "to the clipboard (OSC 52)")
    trace = re.search(r"trace id ([0-9a-f]{32})", screen)
    assert trace is not None
    assert b"\x1b]52;c;" in shell.raw  # OSC 52
    shell.line("/exit")
    shell.wait_exit()
    assert read_meta_file(transcript)["traceIds"] == [trace.group(1)]


def test_clear_starts_a_new_session_and_the_old_one_stays_resumable(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home)
    shell.exchange("first session prompt", "You said: first session prompt")
    first = only_transcript(home, workdir)
    shell.exchange("/clear", f"the previous one stays resumable: commandcode -r {first.stem}")
    shell.line("/new")  # nothing was saved in the cleared one
    shell.wait_screen("the previous one had nothing saved")
    shell.exchange("second session prompt", "You said: second session prompt")
    shell.line("/exit")
    shell.wait_exit()
    assert len(transcripts(home)) == 2
    resumed = run_cli(["-p", "back again", "-r", first.stem], workdir, home)
    assert resumed.returncode == 0, resumed.stderr


def test_config_shows_the_files_and_sets_a_key(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home)
    shell.exchange("/config", "Settings files (later ones win):")
    shell.exchange('/config set --local permissions.defaultMode "plan"', "written to")
    shell.exchange("/config permissions.defaultMode", 'permissions.defaultMode = "plan"  (from local')
    shell.line("/exit")
    shell.wait_exit()
    assert json.loads((workdir / ".commandcode" / "settings.local.json").read_text()) == {"permissions": {"defaultMode": "plan"}}


def test_config_refuses_a_malformed_settings_file_and_leaves_it(home: Path, workdir: Path) -> None:
    (workdir / ".commandcode").mkdir()
    broken = workdir / ".commandcode" / "settings.json"
    broken.write_text('{"statusLine": ')
    shell = shell_session(workdir, home)
    # said once at start (just after the prompt: a new session is made behind it); the path is as
    # long as the test's temporary folder: the terminal may wrap it anywhere
    shell.wait_until(lambda screen: re.search(r"warning: .*settings\.json:1:\d+", screen.replace("\n", "")),
                     "the warning, whole")
    shell.line("/config set --project branchSummary true")
    shell.wait_until(lambda screen: "error:" in (after := screen.partition("branchSummary true")[2])
                     and "settings.json:1:" in after.replace("\n", ""), "the error, with the file and its place")
    shell.line("/exit")
    shell.wait_exit()
    assert broken.read_text() == '{"statusLine": '


def test_esc_interrupts_a_running_bash_at_once_and_the_turn_is_kept_marked(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, ["--yolo"])
    shell.exchange("a first turn", "You said: a first turn")
    transcript = only_transcript(home, workdir)
    before = transcript.read_bytes()
    marker = workdir / "started"
    # A sleep of this test's own: another test (or another run on the machine) may be sleeping
    # 300 s at the same time, and the check below looks at every process.
    sleeper = f"sleep 300.{uuid.uuid4().int % 10**9:09d}"
    shell.exchange(f'call bash {{"command": "touch {marker}; {sleeper}"}}', "running — Esc interrupts")
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    shell.exchange("queued while working", "queued: queued while working")
    shell.send(ESC)
    shell.wait_screen("Interrupted · what was said so far is kept")
    shell.wait_screen("> queued while working")  # Esc put the queued message back into the editor
    after = transcript.read_bytes()
    assert after.startswith(before) and after.endswith(b'"text":"Interrupted by user"}],"meta":{"messageId":'
                                                        + after.rsplit(b'"messageId":', 1)[1])
    # killed at once; its exit is the kernel's to finish (a survivor would sleep on for 5 minutes)
    wait_for(lambda: not any(sleeper.encode() in line for line in _processes()), timeout=30,
             what="the interrupted command's processes to be gone")
    shell.send(CTRL_C)  # clears the line
    shell.send(CTRL_C)
    shell.wait_screen("press Ctrl+C again to exit")
    shell.send(CTRL_C)
    assert shell.wait_exit() == 0


def _processes() -> list[bytes]:
    lines = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                lines.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" "))
            except OSError:
                pass
    return lines


def _held_command(release: Path) -> str:
    """A `bash` call that runs until the test makes `release` (a turn that ends on its own after
    a few seconds can end before a loaded machine has typed what must arrive during it)."""
    return 'call bash ' + json.dumps({"command": f"while [ ! -e '{release}' ]; do sleep 0.05; done; echo slept"})


def test_messages_typed_during_a_turn_are_queued_and_sent_when_it_ends(home: Path, workdir: Path,
                                                                       tmp_path: Path) -> None:
    shell = shell_session(workdir, home, ["--yolo"])
    shell.exchange(_held_command(tmp_path / "release"), "running — Esc interrupts")
    shell.line("the queued prompt")
    screen = shell.exchange("/name", "queued: /name")
    assert "queued: the queued prompt" in screen
    (tmp_path / "release").touch()
    shell.wait_screen("You said: the queued prompt")
    shell.wait_screen("(unnamed;")
    shell.line("/exit")
    shell.wait_exit()
    assert [text for role, text in texts_of(only_transcript(home, workdir)) if role == "user"][-1] == "the queued prompt"


def test_trace_works_mid_turn(home: Path, workdir: Path, tmp_path: Path) -> None:
    shell = shell_session(workdir, home, ["--yolo"])
    shell.exchange(_held_command(tmp_path / "release"), "running — Esc interrupts")
    # still running (the command waits for the release): /trace did not wait for the turn; its
    # answer is printed above the live region, which is drawn again after it
    screen = shell.exchange("/trace", "to the clipboard (OSC 52)", "running — Esc interrupts")
    trace = re.search(r"trace id ([0-9a-f]{32})", screen)
    assert trace is not None
    (tmp_path / "release").touch()
    shell.wait_screen("Ran 1 tool call(s)")
    shell.line("/exit")
    shell.wait_exit()
    assert read_meta_file(only_transcript(home, workdir))["traceIds"] == [trace.group(1)]


def test_esc_esc_on_an_empty_prompt_opens_the_rewind_menu(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home)
    shell.exchange("a turn to rewind to", "You said: a turn to rewind to")
    # While the turn runs, Esc interrupts it (and the second Esc alone does nothing): the keys wait
    # until the live region of the running turn ("… — Esc interrupts") is gone from the screen.
    shell.wait_until(lambda screen: "Esc interrupts" not in screen, "the turn's end (its live region gone)")
    shell.wait_prompt()
    shell.send(ESC)
    shell.send(ESC)
    shell.wait_screen("Rewind: choose the point to go back to")  # the Textual menu, full screen
    shell.send(ESC)  # leaves the menu: back in the shell, nothing changed
    shell.wait_screen("Rewind cancelled; nothing was changed")
    shell.line("/exit")
    assert shell.wait_exit() == 0


def test_history_records_prompts_and_slash_commands_and_up_recalls_them(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home)
    shell.exchange("remember this prompt", "You said: remember this prompt")
    shell.exchange("/name", "(unnamed;")
    shell.line("/exit")
    shell.wait_exit()
    assert [record["p"] for record in read_lines(home / "history.jsonl")] == ["remember this prompt", "/name", "/exit"]
    again = shell_session(workdir, home)
    again.send("\x1b[A")  # Up: the newest entry
    again.wait_screen("> /exit")
    again.send("\x1b[A")
    again.wait_screen("> /name")
    again.send(CTRL_C)
    again.send(CTRL_R)
    again.send("remem")
    again.wait_screen("remember this prompt")
    again.send(ENTER)
    again.wait_screen("> remember this prompt")
    again.send(CTRL_C)
    again.line("/exit")
    again.wait_exit()


def test_skip_prompt_history_writes_none(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, COMMANDCODE_SKIP_PROMPT_HISTORY="1")
    shell.exchange("not recorded", "You said: not recorded")
    shell.line("/exit")
    shell.wait_exit()
    assert not (home / "history.jsonl").exists()


def test_tab_completes_commands_and_arguments_and_alt_enter_adds_a_line(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home)
    shell.send("/session-")  # ("/sess" stops at "/session": /session-file and /sessions)
    shell.send(TAB)
    shell.wait_screen("> /session-file")
    shell.send(CTRL_C)
    shell.send("/help ren")
    shell.send(TAB)
    shell.wait_screen("> /help rename")
    shell.send(CTRL_C)
    shell.send("first line")
    shell.send(ALT_ENTER)
    shell.send("second line")
    shell.send(ENTER)
    shell.wait_screen("You said: first line")
    shell.line("/exit")
    shell.wait_exit()
    user = [text for role, text in texts_of(only_transcript(home, workdir)) if role == "user"]
    assert user == ["first line\nsecond line"]


def test_shift_tab_cycles_the_permission_mode_on_the_status_line(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, args=None)
    shell.wait_screen(" · default · ")
    shell.send(SHIFT_TAB)
    shell.wait_screen(" · acceptEdits · ")
    shell.send(SHIFT_TAB)
    shell.wait_screen(" · plan · ")
    shell.exchange("/status", "permission mode  plan")
    shell.send(SHIFT_TAB)  # back to default: bypassPermissions is not in the cycle without --yolo
    shell.wait_screen(" · default · ")
    assert "bypassPermissions" not in shell.text()
    shell.exchange("/status", "permission mode  default")
    shell.line("/exit")
    shell.wait_exit()


def test_shift_tab_reaches_bypass_only_when_launched_with_yolo(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, ["--yolo"])
    shell.wait_screen(" · bypassPermissions · ")
    for mode in ("default", "acceptEdits", "plan", "bypassPermissions"):
        shell.send(SHIFT_TAB)
        shell.wait_screen(f" · {mode} · ")
    shell.line("/exit")
    shell.wait_exit()


def test_the_status_line_setting_runs_the_users_command_with_the_status_json(home: Path, workdir: Path) -> None:
    home.mkdir(parents=True)
    script = workdir / "status.py"
    script.write_text("import json, sys\nstatus = json.load(sys.stdin)\n"
                      "print('MYLINE', status['session_id'][:8], status['model']['id'], status['permission_mode'])\n")
    (home / "settings.json").write_text(json.dumps({"statusLine": {"type": "command", "command": f"python3 {script}"}}))
    shell = ShellSession(workdir, home)  # not shell_session: its wait for the default status line races this one
    screen = shell.wait_screen("MYLINE")
    assert re.search(r"MYLINE [0-9a-f]{8} commandcode/offline default", screen), screen
    shell.line("/exit")
    shell.wait_exit()


def test_launch_flags_name_continue_and_no_session(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, ["-n", "Launch Named"])
    shell.exchange("hello from a named launch", "You said: hello from a named launch")
    shell.line("/exit")
    shell.wait_exit()
    transcript = only_transcript(home, workdir)
    assert read_meta_file(transcript)["title"] == "Launch Named"
    again = shell_session(workdir, home, ["-c"])
    again.wait_screen(f"resumed session {transcript.stem} (Launch Named)")
    again.line("/exit")
    again.wait_exit()
    by_name = shell_session(workdir, home, ["--resume", "launch named"])
    by_name.wait_screen(f"resumed session {transcript.stem}")
    by_name.line("/exit")
    by_name.wait_exit()
    nothing = shell_session(workdir, home, ["--no-session"])
    nothing.exchange("not saved at all", "You said: not saved at all")
    nothing.exchange("/session-file", "--no-session: nothing is saved")
    nothing.line("/exit")
    nothing.wait_exit()
    assert transcripts(home) == [transcript]


def test_ctrl_c_interrupts_a_turn_and_the_reply_is_rendered_markdown(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, ["--yolo"])
    shell.exchange('call bash {"command": "sleep 300"}', "running — Esc interrupts")
    shell.send(CTRL_C)
    shell.wait_screen("Interrupted · what was said so far is kept")
    assert len(transcripts(home)) == 1  # the interrupted prompt is kept, marked (its checkpoint is a real one)
    shell.line("say **loud** and `quiet`")
    screen = shell.wait_screen("You said: say loud and quiet")  # markdown rendered, markup gone
    assert "**" not in screen.split("You said:", 1)[1]
    # the status line follows the session: the interrupted turn kept its prompt and so its checkpoint
    shell.wait_screen("2 checkpoint(s)")
    shell.line("/exit")
    shell.wait_exit()


def test_the_permission_prompt_denies_allows_once_and_saves_dont_ask_again(home: Path, workdir: Path) -> None:
    """Default mode asks before a shell command: No gives the model a tool error, "don't ask
    again" runs it and saves its rule in the project's settings.local.json, which a later
    session then uses without asking."""
    shell = shell_session(workdir, home)
    shell.exchange('call bash {"command": "echo one > one.txt"}', "Allow bash: echo one > one.txt?")
    shell.exchange("n", "the user denied")  # "No"
    assert not (workdir / "one.txt").exists()
    shell.exchange('call bash {"command": "echo two > two.txt"}', "Allow bash: echo two > two.txt?")
    shell.send("5")  # "Yes, and don't ask again for this exact command"
    wait_for(lambda: (workdir / "two.txt").exists(), what="the allowed command to run")
    shell.line("/exit")
    assert shell.wait_exit() == 0
    saved = json.loads((workdir / ".commandcode" / "settings.local.json").read_text())
    assert any(rule.startswith("Bash(echo two") for rule in saved["permissions"]["allow"]), saved
    (workdir / "two.txt").unlink()
    again = shell_session(workdir, home, ["-c"])
    again.exchange('call bash {"command": "echo two > two.txt"}', "resumed session")
    wait_for(lambda: (workdir / "two.txt").exists(), what="the saved rule to allow the command unasked")
    assert "Allow bash" not in again.text()
    again.line("/exit")
    assert again.wait_exit() == 0


def test_one_key_answers_the_permission_question_and_an_edit_shows_its_diff(home: Path, workdir: Path) -> None:
    """The question takes one key without Enter (y, n, a number; Esc is no), and an edit shows
    the diff it would make before it is allowed."""
    (workdir / "a.txt").write_text("alpha\nbeta\ngamma\n")
    edit = 'call edit_file {"file_path": "a.txt", "old_string": "beta", "new_string": "BETA"}'
    shell = shell_session(workdir, home)
    screen = shell.exchange(edit, "Allow edit_file")
    assert "-beta" in screen and "+BETA" in screen and "--- a/a.txt" in screen, screen
    shell.send("n")  # no Enter
    shell.wait_count("the user denied", 1)
    assert (workdir / "a.txt").read_text() == "alpha\nbeta\ngamma\n"
    shell.wait_prompt()
    # each question counted in the raw output: the previous one is still on the screen, and an
    # Esc sent before this one is up would interrupt the turn instead of answering it
    denied = shell.raw.count(b"the user denied")
    shell.line(edit)
    shell.wait_count("Allow edit_file", 2)
    shell.wait_screen("choice [")
    shell.send(ESC)
    shell.wait_count("the user denied", denied + 1)  # else the next line's first key could join the Esc (Alt+c)
    shell.wait_prompt()
    shell.line(edit)
    shell.wait_count("Allow edit_file", 3)
    shell.wait_screen("choice [")
    shell.send("y")
    shell.wait_screen("Ran 1 tool call(s)")
    assert (workdir / "a.txt").read_text() == "alpha\nBETA\ngamma\n"
    shell.line("/exit")
    assert shell.wait_exit() == 0
    denied = [line for line in only_transcript(home, workdir).read_text().splitlines()
              if '"tool_result"' in line and "the user denied" in line]
    assert len(denied) == 2, "n and Esc each answered no, once"
