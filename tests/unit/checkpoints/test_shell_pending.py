"""A `bash` call killed -9 together with its agent is still undone (issue 28): before a command
runs, the manager notes it durably (`<sid>.shell-pending.json`, `checkpoints/shell_pending.py`);
the next open of the session, or a rewind, records what it changed into its checkpoint, so a code
rewind of that turn puts the tree back. Real files, the real store and tracker, real `bash`
processes; "killed" is what a kill -9 leaves: the note, written by a process that is gone."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from commandcode.agent.tools import run_tool
from commandcode.checkpoints import shell_pending
from commandcode.checkpoints.manager import CheckpointManager
from commandcode.checkpoints.modes import RewindMode
from commandcode.checkpoints.records import read_checkpoints
from commandcode.checkpoints.rewind import RewindOptions, rewind
from commandcode.sessions.files import SessionFiles
from helpers.checkpoints import lstat_tree, new_session_files, write

COMMAND = ("echo changed > a.txt; rm gone.txt; chmod 600 run.sh; mkdir -p made/deep; echo y > made/deep/y.txt; "
           "ln -s a.txt link; mkdir -p hollow/inner")


def _tracked(project: Path) -> CheckpointManager:
    write(project / "a.txt", "a before\n")
    write(project / "gone.txt", "deleted by the command\n")
    write(project / "run.sh", "#!/bin/sh\n", 0o755)
    manager = CheckpointManager.for_session(new_session_files(project), project, compatible_backups=False)
    manager.track_shell(lambda _: None)
    assert manager.shell is not None
    manager.open_checkpoint("the killed turn", 0, None)
    return manager


def _bash(project: Path, command: str) -> None:
    outcome = run_tool("bash", {"command": command}, project)
    assert not outcome.is_error, outcome.text


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def _killed_mid_command(manager: CheckpointManager, project: Path) -> SessionFiles:
    """The command runs and its process dies before its end is recorded: the note stays, naming
    a process that is gone (the manager is closed without `after_shell`, as a kill leaves it)."""
    manager.before_shell()
    _bash(project, COMMAND)
    manager.close()
    note = shell_pending.note_path(manager.files)
    document = json.loads(note.read_bytes())
    document["pid"] = _dead_pid()
    note.write_text(json.dumps(document))
    return manager.files


def _shell_paths(files: SessionFiles) -> set[str]:
    return {Path(item.path).name for record in read_checkpoints(files.checkpoints) for item in record.files
            if item.extra.get("source") == "shell"}


def test_a_command_killed_with_its_agent_is_recorded_at_the_next_open_and_undone(home: Path, project: Path) -> None:
    """On 55fdfa8 nothing of the killed command was recorded and the rewind left its changes."""
    manager = _tracked(project)
    before = lstat_tree(project)
    files = _killed_mid_command(manager, project)
    reopened = CheckpointManager.for_session(files, project, compatible_backups=False)
    assert not shell_pending.note_path(files).exists()
    assert {"a.txt", "gone.txt", "run.sh", "y.txt", "link", "hollow", "inner"} <= _shell_paths(files)
    rewind(files, project, 1, RewindMode.CODE, RewindOptions(checkpoints=reopened))
    assert lstat_tree(project) == before
    reopened.close()


def test_a_rewind_right_after_the_kill_records_the_command_first(home: Path, project: Path) -> None:
    manager = _tracked(project)
    before = lstat_tree(project)
    files = _killed_mid_command(manager, project)
    rewind(files, project, 1, RewindMode.CODE)
    assert lstat_tree(project) == before
    assert not shell_pending.note_path(files).exists()


def test_the_note_of_a_running_process_is_left_to_it(home: Path, project: Path) -> None:
    """Another process of the session still runs its command: its note and records are its own."""
    manager = _tracked(project)
    manager.before_shell()
    _bash(project, COMMAND)
    note = shell_pending.note_path(manager.files)
    data = note.read_bytes()
    assert json.loads(data)["pid"] == os.getpid()
    CheckpointManager.for_session(manager.files, project, compatible_backups=False).close()
    assert note.read_bytes() == data and _shell_paths(manager.files) == set()
    manager.after_shell()  # the command's own end records it and removes the note
    manager.flush()
    manager.close()
    assert not note.exists() and "y.txt" in _shell_paths(manager.files)


def test_a_note_whose_baseline_was_rewritten_since_is_dropped_without_recording(home: Path, project: Path) -> None:
    """The baseline the note counts on is gone (a later pass rewrote the sidecar): comparing with
    it would record wrong before-states, so nothing is recorded and the note is removed."""
    manager = _tracked(project)
    files = _killed_mid_command(manager, project)
    sidecar = shell_pending.sidecar_path(files)
    sidecar.write_bytes(sidecar.read_bytes() + b" ")
    records = files.checkpoints.read_bytes()
    CheckpointManager.for_session(files, project, compatible_backups=False).close()
    assert not shell_pending.note_path(files).exists()
    assert files.checkpoints.read_bytes() == records


def test_a_damaged_note_is_removed_and_nothing_else_is_touched(home: Path, project: Path) -> None:
    manager = _tracked(project)
    manager.close()
    note = shell_pending.note_path(manager.files)
    note.write_bytes(b'{"version": 1, "pid": ')
    records = manager.files.checkpoints.read_bytes()
    tree = lstat_tree(project)
    CheckpointManager.for_session(manager.files, project, compatible_backups=False).close()
    assert not note.exists()
    assert manager.files.checkpoints.read_bytes() == records and lstat_tree(project) == tree


def test_a_command_that_ends_leaves_no_note(home: Path, project: Path) -> None:
    manager = _tracked(project)
    manager.before_shell()
    assert shell_pending.note_path(manager.files).exists()
    _bash(project, "echo again > a.txt")
    manager.after_shell()
    manager.flush()
    assert not shell_pending.note_path(manager.files).exists()
    manager.before_shell()  # a command with no change: its note goes too
    _bash(project, "true")
    manager.after_shell()
    manager.flush()
    assert not shell_pending.note_path(manager.files).exists()
    manager.close()


def test_a_note_of_a_pid_alive_after_a_reboot_is_replayed(home: Path, project: Path) -> None:
    """A pid reused after a reboot is not the note's process: the note carries the boot id, and a
    note of another boot is replayed whatever runs under its pid (on ea0e990 it stayed, and the
    command was never recorded, until that unrelated process ended)."""
    from commandcode.sessions.unsynced import boot_id

    manager = _tracked(project)
    before = lstat_tree(project)
    files = _killed_mid_command(manager, project)
    note = shell_pending.note_path(files)
    document = json.loads(note.read_bytes())
    assert document["boot"] == boot_id() is not None
    document.update(pid=os.getpid(), boot="00000000-0000-4000-8000-000000000000")  # alive now, booted since
    note.write_text(json.dumps(document))
    rewind(files, project, 1, RewindMode.CODE)
    assert not note.exists() and {"a.txt", "y.txt"} <= _shell_paths(files)
    assert lstat_tree(project) == before


def test_a_note_of_this_boot_whose_pid_is_alive_is_left_alone(home: Path, project: Path) -> None:
    manager = _tracked(project)
    files = _killed_mid_command(manager, project)
    note = shell_pending.note_path(files)
    document = json.loads(note.read_bytes())
    document["pid"] = os.getpid()
    note.write_text(json.dumps(document))
    data = note.read_bytes()
    CheckpointManager.for_session(files, project, compatible_backups=False).close()
    assert note.read_bytes() == data and _shell_paths(files) == set()


def test_an_edit_made_while_the_killed_command_ran_yields_to_the_state_before_the_command(
        home: Path, project: Path) -> None:
    """The command rewrites a.txt, then (before its end is recorded) an edit tool backs a.txt up
    and edits it: that backup read the command's output. Killed there, the recovery gives the
    item the baseline's state, as a command's own end does, so the rewind puts back the bytes from
    before the command (on ea0e990 the item kept the command's output and the rewind restored it)."""
    manager = _tracked(project)
    before = lstat_tree(project)
    original = (project / "a.txt").read_bytes()
    manager.before_shell()
    _bash(project, "printf 'by the command\\n' > a.txt")
    with manager.editing(str(project / "a.txt")):  # a sub-agent's edit while the command still runs
        (project / "a.txt").write_text("by the edit tool\n")
    manager.record_after_edit(str(project / "a.txt"))
    manager.flush()
    [item] = [item for record in read_checkpoints(manager.files.checkpoints) for item in record.files]
    assert item.extra.get("source") != "shell"  # the edit's own item, taken while the command ran
    manager.close()
    note = shell_pending.note_path(manager.files)
    document = json.loads(note.read_bytes())
    assert document["recorded"] == 0
    document["pid"] = _dead_pid()
    note.write_text(json.dumps(document))
    rewind(manager.files, project, 1, RewindMode.CODE)
    assert (project / "a.txt").read_bytes() == original and lstat_tree(project) == before
