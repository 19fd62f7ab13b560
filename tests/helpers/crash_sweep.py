"""The crash harness's retention operations: `sweep`, `sweep --archive`, `sweep --restore` and
`doctor --gc`, SIGKILLed at the N-th mutating file-system call (`tests/support/killable_cli.py`)
or after a random delay, then run again to completion.

A workspace holds sessions made with the library (each with a checkpoint whose backups are store
objects, one object shared by all of them, and a rewound turn whose redo point's object is in a
pack, so kills land in the packs' absorb too) and aged 40 days, plus old unreferenced objects. After
every killed run the checks are:

- every transcript left opens; every object a remaining checkpoints file or archive `.refs`
  names exists and verifies (kill -9 loses no referenced object);
- no file at an archive's final name is partial (each one verifies);
- each seeded session is whole (every file byte-identical, same mode) or its transcript is gone;

and after the run that follows (not killed, must succeed): each session is wholly there
(byte-identical) or wholly gone, for an archive sweep each gone session's archive verifies and
restores byte for byte, for a restore the session is back byte for byte.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers.crash_runs import _kill_group
from helpers.crash_workspace import data_dir_env, python_path_env, tree_state
from helpers.locations import KILLABLE
from helpers.workspace import age_session

OPERATIONS = ("sweep", "archive", "restore", "gc")
SESSIONS = 4
ARGS = {"sweep": ["sweep", "--json"], "archive": ["sweep", "--archive", "--json"], "gc": ["doctor", "--gc", "--json"]}


@dataclass
class SweepWorkspace:
    root: Path
    operation: str
    sessions: dict[str, dict[str, tuple[bytes, int]]] = field(default_factory=dict)  # id -> its files' state

    @property
    def data(self) -> Path:
        return self.root / "home" / ".commandcode"

    @property
    def project(self) -> Path:
        return self.root / "project"

    def env(self, **extra: str) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if not key.startswith("COMMANDCODE_")}
        env.update(python_path_env())
        env.update({"COMMANDCODE_HOME": str(self.data), "COMMANDCODE_INDEX": "off", "NO_COLOR": "1",
                    "COMMANDCODE_SCRATCHPAD_BASE": str(self.root / "scratchpads")})
        env.update(extra)
        return env

    def args(self, session_id: str | None = None) -> list[str]:
        if self.operation == "restore":
            return ["sweep", "--restore", session_id or next(iter(self.sessions)), "--json"]
        return ARGS[self.operation]


def _session_state(data: Path, session_id: str) -> dict[str, tuple[bytes, int]]:
    state = {}
    for relative, (content, mode) in tree_state(data).items():
        if session_id in relative and not relative.startswith(("archives/", "sweep/")):
            state[relative] = (content, mode)
    return state


def seed(root: Path, operation: str) -> SweepWorkspace:
    """A fresh workspace: `SESSIONS` aged sessions with backups, old garbage, old objects."""
    from commandcode.checkpoints.manager import CheckpointManager
    from commandcode.checkpoints.store import BackupStore
    from commandcode.config.paths import project_dir
    from commandcode.sessions.files import SessionFiles
    from commandcode.sessions.writer import SessionWriter

    workspace = SweepWorkspace(root, operation)
    workspace.project.mkdir(parents=True)
    (workspace.project / "shared.txt").write_text("shared by every session\n" * 200)
    with data_dir_env(workspace.data, False):
        for number in range(SESSIONS):
            files = SessionFiles(project_dir(workspace.project.resolve()), str(uuid.uuid4()))
            with SessionWriter(files, str(workspace.project.resolve())) as writer:
                writer.append_message({"role": "user", "content": [{"type": "text", "text": f"turn {number}"}],
                                       "meta": {"source": "user", "messageId": str(uuid.uuid4())}})
                writer.append_message({"role": "assistant", "content": [{"type": "text", "text": "done"}],
                                       "meta": {"source": "model", "messageId": str(uuid.uuid4())}}, model="seed")
                writer.commit()
            own = workspace.project / f"own{number}.txt"
            own.write_bytes(random.Random(number).randbytes(200_000))
            manager = CheckpointManager.for_session(files, workspace.project.resolve())
            manager.open_checkpoint(f"turn {number}", 1, None)
            for path in (own, workspace.project / "shared.txt"):
                manager.backup_before_edit(str(path))
                manager.record_after_edit(str(path))
            manager.flush()
            _rewind_a_turn(files, workspace.project.resolve(), own, number)
            age_session(files.transcript, 40)
        store = BackupStore()
        for number in range(6):
            store.put_bytes(random.Random(100 + number).randbytes(50_000))  # garbage
        old = time.time() - 7200
        for path in store.root.rglob("*"):
            if path.is_file() and len(path.name) == 62:
                os.utime(path, (old, old))
    for transcript in sorted((workspace.data / "projects").rglob("*.jsonl")):
        if "." not in transcript.stem:
            workspace.sessions[transcript.stem] = _session_state(workspace.data, transcript.stem)
    if operation == "restore":
        _run(workspace, ["sweep", "--archive", "--json"])
    return workspace


def _rewind_a_turn(files: Any, project: Path, own: Path, number: int) -> None:
    """A second turn gives `own` new bytes, and a code rewind takes them back: its redo point
    keeps them in a pack (format §7.2), so a collection or an archive killed here may land in the
    pack's absorb."""
    from commandcode.checkpoints.manager import CheckpointManager
    from commandcode.checkpoints.modes import RewindMode
    from commandcode.checkpoints.rewind import RewindOptions, rewind

    manager = CheckpointManager.for_session(files, project)
    manager.open_checkpoint(f"turn {number}b", 3, None)
    manager.backup_before_edit(str(own))
    own.write_bytes(random.Random(1000 + number).randbytes(200_000))
    manager.record_after_edit(str(own))
    manager.flush()
    rewind(files, project, 2, RewindMode.CODE, RewindOptions())
    from commandcode.checkpoints.store import journal_path

    # the restore's lock file holds no state, and a sweep leaves it behind today
    journal_path(files.session_id).with_name(journal_path(files.session_id).name + ".lock").unlink()


def _run(workspace: SweepWorkspace, args: list[str], **extra: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "commandcode", *args], cwd=workspace.project, env=workspace.env(**extra),
                          capture_output=True, timeout=300, stdin=subprocess.DEVNULL)


def run_killed(workspace: SweepWorkspace, *, kill_at: int | None, delay: float | None) -> int:
    """One run of the operation, killed at a call or after `delay` s; returns the exit code."""
    extra = {"COMMANDCODE_TEST_KILL_AT": str(kill_at)} if kill_at is not None else {}
    process = subprocess.Popen([sys.executable, str(KILLABLE), *workspace.args()], cwd=workspace.project,
                               env=workspace.env(**extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        process.wait(timeout=delay if delay is not None else 300)
    except subprocess.TimeoutExpired:
        _kill_group(process)
    process.communicate(timeout=300)
    return process.returncode


def count_calls(workspace: SweepWorkspace) -> int:
    """How many mutating calls one unkilled run makes (on a copy of the workspace)."""
    copy = workspace.root.with_name(workspace.root.name + "-count")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(workspace.root, copy, symlinks=True)
    counted = SweepWorkspace(copy, workspace.operation, workspace.sessions)
    count_file = copy / "count.txt"
    subprocess.run([sys.executable, str(KILLABLE), *counted.args()], cwd=counted.project,
                   env=counted.env(COMMANDCODE_TEST_COUNT_FILE=str(count_file)), capture_output=True, timeout=300)
    calls = int(count_file.read_text()) if count_file.exists() else 1
    shutil.rmtree(copy, ignore_errors=True)
    return max(1, calls)


def check(workspace: SweepWorkspace, violations: list[str], label: str, *, final: bool) -> None:
    from commandcode.checkpoints.gc import archived_references
    from commandcode.checkpoints.references import referenced_objects
    from commandcode.checkpoints.store import BackupStore
    from commandcode.sessions.reader import open_session
    from commandcode.workspace.archive import ArchiveError, list_archives, verify_archive

    with data_dir_env(workspace.data, False):
        store = BackupStore()
        for object_id in sorted(referenced_objects() | archived_references()):
            try:
                store.verify(object_id)
            except Exception as error:
                violations.append(f"{label}: referenced object {object_id[:12]} lost: {error}")
        archived = {}
        for archive in list_archives():
            try:
                archived[archive.name.split(".")[0]] = verify_archive(archive)
            except ArchiveError as error:
                violations.append(f"{label}: a partial archive at its final name: {error}")
        for session_id, state in workspace.sessions.items():
            now = _session_state(workspace.data, session_id)
            transcripts = [name for name in state if name.endswith(f"{session_id}.jsonl") and "/" in name]
            present = any(name in now for name in transcripts)
            if present:
                try:
                    open_session(workspace.data / transcripts[0])
                except Exception as error:
                    violations.append(f"{label}: {session_id[:8]} does not open: {error}")
            if present and final and now != state:
                violations.append(f"{label}: {session_id[:8]} is there but not byte-identical")
            if present and not final and {key: now[key] for key in now if key in state} != \
                    {key: state[key] for key in now if key in state}:
                violations.append(f"{label}: {session_id[:8]}: a file changed (not just removed)")
            if final and not present and now:
                violations.append(f"{label}: {session_id[:8]} half gone after the next run: {sorted(now)}")
            if final and not present and workspace.operation in ("archive", "restore") and session_id not in archived:
                violations.append(f"{label}: {session_id[:8]} gone without an archive")
        if final and workspace.operation == "restore":
            first = next(iter(workspace.sessions))
            if _session_state(workspace.data, first) != workspace.sessions[first]:
                violations.append(f"{label}: the restored session is not byte-identical")


def run_points(root: Path, operation: str, points: int, seed_value: int) -> tuple[int, list[str]]:
    """`points` killed runs of one operation, each in a fresh workspace, each followed by a run to
    completion; returns `(killed, violations)`."""
    rng = random.Random(f"{seed_value}:{operation}")
    violations: list[str] = []
    killed = 0
    calls = None
    for point in range(points):
        folder = root / f"{operation}-{point}"
        shutil.rmtree(folder, ignore_errors=True)
        workspace = seed(folder, operation)
        calls = calls or count_calls(workspace)
        label = f"{operation}#{point}"
        if point % 3 == 2:
            code = run_killed(workspace, kill_at=None, delay=rng.uniform(0.2, 1.5))
        else:
            code = run_killed(workspace, kill_at=rng.randint(1, calls), delay=None)
        killed += code == -9
        check(workspace, violations, label, final=False)
        again = _run(workspace, workspace.args())
        if again.returncode != 0 and not (operation == "restore" and b"no archived session" in again.stderr):
            violations.append(f"{label}: the run after the kill failed: {again.stderr.decode(errors='replace')[-300:]}")
        check(workspace, violations, label, final=True)
        if operation == "archive":  # every archive restores byte for byte
            for session_id in list(workspace.sessions):
                _run(workspace, ["sweep", "--restore", session_id])
            with data_dir_env(workspace.data, False):
                for session_id, state in workspace.sessions.items():
                    if _session_state(workspace.data, session_id) != state:
                        violations.append(f"{label}: {session_id[:8]} does not restore byte for byte")
        shutil.rmtree(folder, ignore_errors=True)
    return killed, violations
