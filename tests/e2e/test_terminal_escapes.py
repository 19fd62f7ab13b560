"""No raw control sequence reaches the terminal (issue 11, class 6).

Text that comes from a transcript, a file or the user's own arguments can hold ESC, CSI, OSC,
BEL or C1 controls; printed raw, it drives the terminal (clears it, retitles it, hides text,
fakes output). The matrix plants such a payload in every field that reaches text output (the
folder name, the session name, the first message, a file name, a tool's output, a reference,
an option value, an unknown option or command) and runs every command in text mode: stdout and
stderr must carry no raw control character (tab and newline aside) and no undecodable byte.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from helpers.cli import cli_env, run_json

EVIL = "\x1b[31mRED\x1b]0;pwned\x07\x9b2J\x1b[8mhidden\x08\r\x7f\u202e"
EVIL_JSON = json.dumps(EVIL)[1:-1]  # the same text inside a JSON string
SHELL_EVIL = r"printf '\033[2J\033]0;title\007\302\2331m\015tool output\n'"
# C0 but tab and newline, DEL, C1, the bidi overrides; and lone surrogates (undecodable bytes).
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\udc80-\udcff]")


def _run(args: list[str], cwd: Path, data: Path, **env: str) -> tuple[int, str, str]:
    completed = subprocess.run([sys.executable, "-m", "commandcode", *args], cwd=cwd, env=cli_env(data, COLUMNS="300", **env),
                               capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    return (completed.returncode, completed.stdout.decode("utf-8", "surrogateescape"),
            completed.stderr.decode("utf-8", "surrogateescape"))


def _assert_clean(args: list[str], result: tuple[int, str, str], *, codes: tuple[int, ...] = (0,)) -> None:
    code, out, err = result
    shown = f"{[printable_arg(arg) for arg in args]}: exit {code}\nstdout: {out!r}\nstderr: {err!r}"
    assert "Traceback" not in err, shown
    assert code in codes, shown
    assert not RAW_CONTROL.search(out), "raw control characters on stdout: " + shown
    assert not RAW_CONTROL.search(err), "raw control characters on stderr: " + shown


def printable_arg(arg: str) -> str:
    return arg.encode("unicode_escape").decode("ascii")


def test_planted_control_sequences_never_reach_the_terminal(home: Path, tmp_path: Path) -> None:
    folder = tmp_path / f"proj{EVIL}"
    folder.mkdir()
    prompt = "\n".join([
        f"first message {EVIL}",
        'call write_file {"file_path": "f%s.txt", "content": "x"}' % EVIL_JSON,
        'call bash {"command": %s}' % json.dumps(SHELL_EVIL),
        'call read_file {"file_path": "missing%s"}' % EVIL_JSON,
    ])
    turn = ["-p", prompt, "-n", f"name {EVIL}", "--yolo"]
    _assert_clean(turn, _run(turn, folder, home))  # the reply quotes the tool output and file names
    session = run_json(["sessions", "list", "--all", "--json"], folder, home)[0]["id"]
    second = ["-p", f"second {EVIL}\n" + 'call edit_file {"file_path": "f%s.txt", "old_string": "x", "new_string": "y"}'
              % EVIL_JSON, "-c"]
    _assert_clean(second, _run(second, folder, home))
    commands = [
        ["sessions", "list"], ["sessions", "list", "--all"], ["sessions", "list", "--all", "--all-projects"],
        ["sessions", "show", session], ["sessions", "show", f"name {EVIL}".replace("\r", " ")], ["sessions", "context", session],
        ["sessions", "tree", session], ["sessions", "tree", session, "--offset", "1", "--limit", "2"],
        ["checkpoints", "list", session],
        ["rewind", session, "--to", "2", "--mode", "code", "--dry-run"],
        ["-p", f"third {EVIL}", "-r", session, "--no-session"],
    ]
    for args in commands:
        for fast_path in ("on", "off"):
            _assert_clean(args, _run(args, folder, home, COMMANDCODE_FAST_PATH=fast_path))
    rewind = ["rewind", session, "--to", "2", "--mode", "both", "--yes"]  # prints the restored file names
    _assert_clean(rewind, _run(rewind, folder, home))
    refused = [
        (["-p", "x", "-r", EVIL], 1), (["sessions", "show", EVIL], 1), (["checkpoints", "list", EVIL], 1),
        (["rewind", EVIL, "--to", "1", "--mode", "code", "--yes"], 1),
        (["-p", "x", "--output-format", EVIL], 2), (["-p", "x", "--model", EVIL], 2),
        (["rewind", session, "--to", EVIL, "--mode", "code"], 2), (["rewind", session, "--to", "1", "--mode", EVIL], 2),
        (["sessions", EVIL], 2), ([f"--{EVIL}"], 2), (["sessions", "list", f"--x{EVIL}"], 2),
        (["sessions", "tree", session, "--offset", EVIL], 2),
        (["bench", "--size", EVIL], 2), (["bench", "--size", "1000000TB", "--dir", str(tmp_path / EVIL)], 1),
    ]
    for args, code in refused:
        for fast_path in ("on", "off"):
            _assert_clean(args, _run(args, folder, home, COMMANDCODE_FAST_PATH=fast_path), codes=(code,))


def test_a_transcript_with_control_sequences_in_every_shown_field(home: Path, tmp_path: Path) -> None:
    """Fields a hostile transcript or meta file sets directly, which the CLI never writes that way."""
    folder = tmp_path / "proj"
    folder.mkdir()
    session = run_json(["-p", "hello", "--output-format", "json"], folder, home)["session_id"]
    [transcript] = sorted(home.glob(f"projects/*/{session}.jsonl"))
    lines = transcript.read_text().splitlines()
    last = json.loads(lines[-1])
    planted = [
        {"type": "label", "id": "e0e0e0e1", "parentId": last["id"], "timestamp": f"2026-01-01T00:00:00.000Z{EVIL}",
         "targetId": last["id"], "label": f"label {EVIL}"},
        {"type": "session_info", "id": "e0e0e0e2", "parentId": "e0e0e0e1", "timestamp": "2026-01-01T00:00:01.000Z",
         "name": f"info {EVIL}"},
        {"type": "model_change", "id": "e0e0e0e3", "parentId": "e0e0e0e2", "timestamp": "2026-01-01T00:00:02.000Z",
         "model": f"model {EVIL}"},
        {"type": "message", "id": f"e0e0{EVIL}", "parentId": "e0e0e0e3", "timestamp": "2026-01-01T00:00:03.000Z",
         "message": {"role": f"user{EVIL}", "content": [{"type": f"text{EVIL}", "text": EVIL}]}},
    ]
    transcript.write_text("\n".join([*lines, *(json.dumps(entry) for entry in planted), f"torn {EVIL}"]))
    meta = transcript.with_name(f"{session}.meta.json")
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "title": f"title {EVIL}", "gitBranch": EVIL}))
    for args in (["sessions", "list", "--all"], ["sessions", "show", session], ["sessions", "context", session],
                 ["sessions", "tree", session], ["checkpoints", "list", session], ["-p", "again", "-c"]):
        for fast_path in ("on", "off"):
            _assert_clean(args, _run(args, folder, home, COMMANDCODE_FAST_PATH=fast_path))
