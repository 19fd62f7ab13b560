"""`import claude` reads only the session's own file-history backups, never waits on one, and
files each backup under the path Claude Code restores (issue 26 §3, issue 32 §4).

A Claude Code session written by hand in Claude Code 2.1.332's shapes, whose checkpoint names,
beside one good backup of `src/app.py` (relative to the session's cwd, as Claude Code writes
it), every kind of bad one: a symlink to a secret outside, `../…` names, an absolute name, a
FIFO, a socket, a folder, a backup folder that is itself a symlink (a second session). The
import must finish (a FIFO used to hang it), skip each bad one with a warning line, put none of
the secret's bytes anywhere in our data dir, and a rewind must restore `src/app.py` itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import tempfile
import uuid
from pathlib import Path
from typing import Any

from helpers.cli import run_cli
from helpers.session_files import claude_backup_name, write_claude_checkpointed_session

SECRET = b"the secret outside the session's folder\n"
STAMP = "2026-01-02T03:04:05.000Z"


_name = claude_backup_name
_write_session = write_claude_checkpointed_session


def _every_file_bytes(root: Path) -> bytes:
    chunks = []
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            if path.is_file() and not path.is_symlink():
                chunks.append(path.read_bytes())
    return b"\0".join(chunks)


def test_bad_backups_are_skipped_with_a_warning_and_the_good_one_restores_its_own_path(tmp_path: Path,
                                                                                       home: Path) -> None:
    claude = tmp_path / "claude"
    proj = tmp_path / "edits"
    (proj / "src").mkdir(parents=True)
    (proj / "src" / "app.py").write_text("print('after')\n")
    outside = tmp_path / "outside" / "secret"
    outside.parent.mkdir()
    outside.write_bytes(SECRET)
    session_id = str(uuid.uuid4())
    history = claude / "file-history" / session_id
    history.mkdir(parents=True)
    good = _name(proj / "src" / "app.py")
    (history / good).write_bytes(b"print('before')\n")
    link, fifo, sock, folder = (_name(proj / name) for name in ("link.py", "fifo.py", "sock.py", "dir.py"))
    os.symlink(outside, history / link)
    os.mkfifo(history / fifo)
    server = socket.socket(socket.AF_UNIX)
    short = Path(tempfile.mkdtemp(dir="/tmp")) / "s"  # a socket's path has a short limit: bound, then moved
    server.bind(str(short))
    os.rename(short, history / sock)
    short.parent.rmdir()
    (history / folder).mkdir()
    depth = "../" * (len(history.parts) + 2)
    tracked = {"src/app.py": good, "link.py": link, "fifo.py": fifo, "sock.py": sock, "dir.py": folder,
               "dots.py": f"../../{outside.parent.name}/secret", "deep.py": depth + str(outside).lstrip("/"),
               "absolute.py": str(outside), "created.py": None}
    transcript = _write_session(claude, proj, session_id, tracked)
    env = {"CLAUDE_CONFIG_DIR": str(claude)}
    try:
        done = run_cli(["import", "claude", str(transcript), "--json"], proj, home, timeout=60, **env)
    finally:
        server.close()
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    result = json.loads(done.stdout)
    warnings = result["warnings"]
    for bad in ("link.py", "fifo.py", "sock.py", "dir.py", "dots.py", "deep.py", "absolute.py"):
        assert sum(f" of {bad} " in line and "left out of the checkpoint" in line for line in warnings) == 1, \
            (bad, warnings)
    assert all("\n" not in line for line in warnings)
    assert any("a symlink" in line for line in warnings if " of link.py " in line)
    assert any("a FIFO" in line for line in warnings if " of fifo.py " in line)
    assert any("not a Claude Code backup name" in line for line in warnings if " of dots.py " in line)
    # nothing of the secret was read into our data dir (store objects are compressed: the raw
    # blobs and the sha256 of every kept item say it)
    assert SECRET not in _every_file_bytes(home)
    records = [json.loads(line) for line in
               Path(result["path"]).with_suffix("").with_suffix(".checkpoints.jsonl").read_text().splitlines()]
    items = {item["path"]: item for record in records for item in record["files"]}
    assert set(items) == {str(proj / "src" / "app.py"), str(proj / "created.py")}
    assert hashlib.sha256(SECRET).hexdigest() not in json.dumps(records)
    # the rewind restores src/app.py itself (it made src/src/app.py and left this one before)
    rewound = run_cli(["rewind", result["id"], "--to", "1", "--mode", "code", "--yes"], proj, home)
    assert rewound.returncode == 0, rewound.stderr
    assert (proj / "src" / "app.py").read_text() == "print('before')\n"
    assert not (proj / "src" / "src").exists()
    assert outside.read_bytes() == SECRET


def test_a_backup_folder_that_is_a_symlink_is_not_read(tmp_path: Path, home: Path) -> None:
    claude = tmp_path / "claude"
    proj = tmp_path / "proj"
    proj.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    name = _name(proj / "a.txt")
    (elsewhere / name).write_bytes(SECRET)
    session_id = str(uuid.uuid4())
    (claude / "file-history").mkdir(parents=True)
    os.symlink(elsewhere, claude / "file-history" / session_id)
    transcript = _write_session(claude, proj, session_id, {"a.txt": name})
    done = run_cli(["import", "claude", str(transcript), "--json"], proj, home, CLAUDE_CONFIG_DIR=str(claude))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert any(" of a.txt " in line and "a symlink" in line for line in result["warnings"]), result["warnings"]
    assert SECRET not in _every_file_bytes(home)
    shown = run_cli(["sessions", "show", session_id, "--source", "claude", "--json"], proj, home,
                    CLAUDE_CONFIG_DIR=str(claude))
    assert shown.returncode == 0 and any("refused" in line for line in json.loads(shown.stdout)["warnings"])


def test_imported_backups_carry_the_real_clis_raw_blob(tmp_path: Path, home: Path) -> None:
    """With `checkpoints.compatibleBackups` on (the default), an imported item is what the real
    Command Code CLI can restore: `hash` the sha256 of a blob in our `file-history/<id>/`."""
    claude = tmp_path / "claude"
    proj = tmp_path / "proj"
    proj.mkdir()
    session_id = str(uuid.uuid4())
    history = claude / "file-history" / session_id
    history.mkdir(parents=True)
    name = _name(proj / "a.txt")
    (history / name).write_bytes(b"old a\n")
    transcript = _write_session(claude, proj, session_id, {"a.txt": name})
    done = run_cli(["import", "claude", str(transcript), "--json"], proj, home, CLAUDE_CONFIG_DIR=str(claude))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    [record] = [json.loads(line) for line in
                Path(result["path"]).with_suffix("").with_suffix(".checkpoints.jsonl").read_text().splitlines()]
    [item] = record["files"]
    digest = hashlib.sha256(b"old a\n").hexdigest()
    assert item["hash"] == digest and "algo" not in item and len(item["blake3"]) == 64
    assert (home / "file-history" / result["id"] / digest).read_bytes() == b"old a\n"


def test_a_relative_cwd_is_refused_with_one_line(tmp_path: Path, home: Path) -> None:
    """Backups of a session whose cwd is relative would be restored wherever a rewind runs."""
    from helpers.cli import assert_error_lines

    claude = tmp_path / "claude"
    proj = tmp_path / "proj"
    proj.mkdir()
    session_id = str(uuid.uuid4())
    transcript = _write_session(claude, Path("some/relative"), session_id, {"a.txt": None})
    refused = run_cli(["import", "claude", str(transcript)], proj, home, CLAUDE_CONFIG_DIR=str(claude))
    assert_error_lines(refused, error_contains="is not an absolute path")
    assert not (home / "projects").exists() or not any((home / "projects").rglob("*.jsonl"))


def test_a_subagent_meta_that_is_a_fifo_is_not_waited_on(tmp_path: Path, home: Path) -> None:
    """The same class outside file-history: a subagent's `.meta.json` that is a FIFO (it hung
    both `import claude` and `sessions show --source claude`) or a symlink to a file outside."""
    claude = tmp_path / "claude"
    proj = tmp_path / "proj"
    proj.mkdir()
    session_id = str(uuid.uuid4())
    transcript = _write_session(claude, proj, session_id, {"a.txt": None})
    agents = transcript.parent / session_id / "subagents"
    agents.mkdir(parents=True)
    for number, kind in enumerate(("fifo", "link")):
        (agents / f"agent-{number}.jsonl").write_text(json.dumps(
            {"type": "user", "uuid": f"s{number}", "parentUuid": None, "isSidechain": True, "sessionId": session_id,
             "message": {"role": "user", "content": "sub"}}) + "\n")
        meta = agents / f"agent-{number}.meta.json"
        if kind == "fifo":
            os.mkfifo(meta)
        else:
            secret = tmp_path / "secret.json"
            secret.write_text(json.dumps({"description": SECRET.decode()}))
            os.symlink(secret, meta)
    env = {"CLAUDE_CONFIG_DIR": str(claude)}
    shown = run_cli(["sessions", "show", session_id, "--source", "claude", "--json"], proj, home, timeout=60, **env)
    assert shown.returncode == 0, shown.stderr
    assert sum("no readable" in line for line in json.loads(shown.stdout)["warnings"]) == 2
    done = run_cli(["import", "claude", str(transcript), "--json"], proj, home, timeout=60, **env)
    assert done.returncode == 0, done.stderr
    assert SECRET.decode() not in Path(json.loads(done.stdout)["path"]).read_text()
