"""Code rewinds end to end: `CheckpointManager` records turns the way the agent loop does, then
`rewind(..., RewindMode.CODE)` puts the tree back. Includes the property test, the refusals
(each checks nothing was written), outside-edit detection and the real CLI sample."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commandcode.checkpoints import store as backups
from commandcode.checkpoints.manager import CheckpointManager
from commandcode.checkpoints.modes import RewindMode
from commandcode.checkpoints.records import read_checkpoints, write_checkpoints
from commandcode.checkpoints.rewind import RewindOptions, rewind
from commandcode.checkpoints.rewind_code import plan_code
from commandcode.checkpoints.rewind_numbers import available_modes
from commandcode.errors import BackupIntegrityError, ChangedOutsideError, CheckpointError, RestoreError, UsageError
from commandcode.sessions.files import SessionFiles
from helpers.checkpoints import SAMPLE_CWD, SAMPLE_SESSION, SAMPLES, new_session_files, snapshot, write


class Agent:
    """Drives a `CheckpointManager` the way the agent loop does."""

    def __init__(self, project: Path) -> None:
        self.project = project
        self.files = new_session_files(project)
        # our store only: these tests damage its objects (compatible backups: test_compatible_backups.py)
        self.manager = CheckpointManager.for_session(self.files, project, compatible_backups=False)
        self.messages = 0

    def prompt(self, text: str) -> None:
        self.manager.open_checkpoint(text, self.messages, None)
        self.messages += 2

    def write(self, name: str, data: bytes, mode: int | None = None) -> None:
        path = self.project / name
        assert self.manager.backup_before_edit(str(path)) == []
        write(path, data, mode)
        self.manager.record_after_edit(str(path))

    def delete(self, name: str) -> None:
        path = self.project / name
        self.manager.backup_before_edit(str(path))
        path.unlink()
        self.manager.record_after_edit(str(path))


def code_rewind(agent: Agent, number: int, **options: object):  # type: ignore[no-untyped-def]
    """A rewind by the agent itself: its manager is flushed first and reloaded after."""
    return rewind(agent.files, agent.project, number, RewindMode.CODE, RewindOptions(checkpoints=agent.manager, **options))  # type: ignore[arg-type]


def test_rewind_restores_each_earlier_tree(home: Path, project: Path) -> None:
    agent = Agent(project)
    write(project / "untouched.txt", b"never edited")
    trees = []
    agent.prompt("create files")
    trees.append(snapshot(project))
    agent.write("src/a.py", b"print('a1')\n", 0o644)
    agent.write("bin/run", b"#!/bin/sh\n", 0o755)
    agent.prompt("edit and delete")
    trees.append(snapshot(project))
    agent.write("src/a.py", b"print('a2')\r\n")
    agent.delete("bin/run")
    agent.write("data.bin", bytes(range(256)) * 40)
    agent.prompt("chmod and recreate")
    trees.append(snapshot(project))
    agent.write("bin/run", b"#!/bin/sh\necho again\n", 0o700)
    agent.write("src/a.py", b"", 0o600)
    final = snapshot(project)
    for number in (3, 2, 1):
        result = code_rewind(agent, number)
        assert snapshot(project) == trees[number - 1], f"rewind to {number}"
        assert result.written or result.deleted
    assert snapshot(project) != final


def test_code_rewind_keeps_checkpoints_and_can_redo(home: Path, project: Path) -> None:
    agent = Agent(project)
    agent.prompt("one")
    agent.write("a.txt", b"v1")
    agent.prompt("two")
    agent.write("a.txt", b"v2")
    code_rewind(agent, 1)
    assert not (project / "a.txt").exists()
    kept = read_checkpoints(agent.files.checkpoints)
    assert [record.is_redo_point for record in kept] == [False, False, True]  # the turns, then the redo point
    code_rewind(agent, 2)  # our own restore is not taken for an outside edit
    assert (project / "a.txt").read_bytes() == b"v1"


def test_dry_run_lists_writes_deletes_and_skips_and_writes_nothing(home: Path, project: Path) -> None:
    agent = Agent(project)
    agent.prompt("turn")
    write(project / "big.bin", b"")
    with open(project / "big.bin", "wb") as handle:
        handle.truncate(backups.MAX_BACKUP_SIZE + 1)
    agent.manager.backup_before_edit(str(project / "big.bin"))
    agent.write("new.txt", b"created")
    write(project / "old.txt", b"old")
    agent.write("old.txt", b"changed")
    before = snapshot(project)
    result = code_rewind(agent, 1, dry_run=True)
    assert [path.name for path in result.written] == ["old.txt"]
    assert [path.name for path in result.deleted] == ["new.txt"]
    assert [(item.path.name, item.reason) for item in result.skipped] == [("big.bin", "too_large")]
    assert snapshot(project) == before


def test_changed_outside_is_detected_and_force_overwrites(home: Path, project: Path) -> None:
    agent = Agent(project)
    agent.prompt("turn")
    write(project / "a.txt", b"original")
    agent.write("a.txt", b"tool edit")
    (project / "a.txt").write_bytes(b"hand edit in an editor")
    before = snapshot(project)
    with pytest.raises(ChangedOutsideError, match="a.txt") as raised:
        code_rewind(agent, 1)
    assert raised.value.hint and "--force" in raised.value.hint
    assert snapshot(project) == before
    dry = code_rewind(agent, 1, dry_run=True)
    assert [path.name for path in dry.changed_outside] == ["a.txt"]
    code_rewind(agent, 1, force=True)
    assert (project / "a.txt").read_bytes() == b"original"


def test_a_bash_edit_between_turns_is_detected(home: Path, project: Path) -> None:
    agent = Agent(project)
    agent.prompt("one")
    agent.write("a.txt", b"tool one")
    (project / "a.txt").write_bytes(b"sed -i changed this")  # bash, between turns
    agent.prompt("two")
    agent.write("a.txt", b"tool two")
    before = snapshot(project)
    with pytest.raises(ChangedOutsideError, match="between turn 1 and turn 2"):
        code_rewind(agent, 1)
    assert snapshot(project) == before
    code_rewind(agent, 2)  # rewinding only turn 2 loses nothing made outside
    assert (project / "a.txt").read_bytes() == b"sed -i changed this"


def _edit_record(agent: Agent, change) -> None:  # type: ignore[no-untyped-def]
    """Edits the checkpoints file behind the agent's back (as a person or a bug would)."""
    agent.manager.flush()
    records = read_checkpoints(agent.files.checkpoints)
    change(records)
    write_checkpoints(agent.files.checkpoints, records)
    agent.manager.reload()


@pytest.mark.parametrize("bad_path", ["../../x", "/etc/commandcode-rewind-test", "../outside/x"])
def test_a_checkpoints_file_pointing_outside_is_refused(home: Path, project: Path, tmp_path: Path, bad_path: str) -> None:
    agent = Agent(project)
    agent.prompt("turn")
    agent.write("a.txt", b"one")
    agent.write("b.txt", b"two")
    (tmp_path / "outside").mkdir()

    def point_outside(records):  # type: ignore[no-untyped-def]
        records[0].files[1].path = bad_path
        records[0].files[1].hash = backups.BackupStore().put_bytes(b"evil")

    _edit_record(agent, point_outside)
    before, outside = snapshot(project), snapshot(tmp_path / "outside")
    with pytest.raises(RestoreError, match="outside"):
        code_rewind(agent, 1)
    assert snapshot(project) == before and snapshot(tmp_path / "outside") == outside
    assert not Path("/etc/commandcode-rewind-test").exists() and not (tmp_path.parent / "x").exists()


@pytest.mark.parametrize("damage", ["missing", "corrupt"])
def test_a_missing_or_corrupt_object_is_refused(home: Path, project: Path, damage: str) -> None:
    agent = Agent(project)
    write(project / "a.txt", b"before a")
    write(project / "b.txt", b"before b")
    agent.prompt("turn")
    agent.write("a.txt", b"after a")
    agent.write("b.txt", b"after b")
    store = backups.BackupStore()
    damaged = store.object_path(backups.content_id(b"before b"))
    if damage == "missing":
        damaged.unlink()
    else:
        damaged.chmod(0o600)
        damaged.write_bytes(damaged.read_bytes()[:-3] + b"xyz")
    before = snapshot(project)
    with pytest.raises(BackupIntegrityError, match="b.txt"):
        code_rewind(agent, 1)
    assert snapshot(project) == before


def test_a_symlink_target_is_refused(home: Path, project: Path, tmp_path: Path) -> None:
    agent = Agent(project)
    write(project / "a.txt", b"before")
    agent.prompt("turn")
    agent.write("a.txt", b"after")
    (project / "a.txt").unlink()
    victim = write(tmp_path / "victim.txt", b"must survive")
    (project / "a.txt").symlink_to(victim)
    before = snapshot(project)
    with pytest.raises(RestoreError, match="symlink"):
        code_rewind(agent, 1, force=True)
    assert snapshot(project) == before and victim.read_bytes() == b"must survive"


def test_allow_outside_restores_a_file_outside_the_project(home: Path, project: Path, tmp_path: Path) -> None:
    outside = write(tmp_path / "shared/config.ini", b"before")
    agent = Agent(project)
    agent.prompt("turn")
    agent.manager.backup_before_edit(str(outside))
    outside.write_bytes(b"after")
    agent.manager.record_after_edit(str(outside))
    with pytest.raises(RestoreError, match="outside"):
        code_rewind(agent, 1)
    assert outside.read_bytes() == b"after"
    code_rewind(agent, 1, allow_outside=True)
    assert outside.read_bytes() == b"before"


def test_rewind_keeps_the_file_itself_and_never_writes_through_a_hard_link(home: Path, project: Path, tmp_path: Path) -> None:
    """A rewritten file stays the same file (inode, so editors and other links keep it); a file
    with a second name outside the project is replaced, never written through that name."""
    agent = Agent(project)
    write(project / "plain.txt", b"plain v1")
    write(project / "linked.txt", b"linked v1")
    agent.prompt("edit both")
    agent.write("plain.txt", b"plain v2, longer than before")
    agent.write("linked.txt", b"linked v2")
    outside = tmp_path / "outside-link.txt"
    os.link(project / "linked.txt", outside)
    inode = (project / "plain.txt").stat().st_ino
    code_rewind(agent, 1)
    assert (project / "plain.txt").read_bytes() == b"plain v1"
    assert (project / "plain.txt").stat().st_ino == inode
    assert (project / "linked.txt").read_bytes() == b"linked v1"
    assert outside.read_bytes() == b"linked v2"


def test_modes_offered(home: Path, project: Path) -> None:
    agent = Agent(project)
    agent.prompt("talk only")
    agent.prompt("edit")
    agent.write("a.txt", b"x")
    agent.prompt("talk again")
    records = read_checkpoints(agent.files.checkpoints)
    assert available_modes(records, 0, has_transcript=True) == [
        RewindMode.BOTH, RewindMode.CONVERSATION, RewindMode.CODE, RewindMode.SUMMARIZE_FROM
    ]
    assert available_modes(records, 2, has_transcript=True) == [
        RewindMode.CONVERSATION, RewindMode.SUMMARIZE_FROM, RewindMode.SUMMARIZE_TO
    ]
    assert available_modes(records, 1, has_transcript=False) == [RewindMode.CODE]
    with pytest.raises(CheckpointError, match="offers"):
        code_rewind(agent, 3)
    with pytest.raises(CheckpointError, match="no checkpoint 9"):
        code_rewind(agent, 9)


def test_real_cli_sample_checkpoint_restores_the_original_bytes(home: Path, tmp_path: Path) -> None:
    """The real CLI's checkpoint (sha256 raw blob) restores `existing.txt` to `base\\n`."""
    project = tmp_path / "proj"
    project.mkdir()
    slug_folder = home / "projects" / "sample"
    slug_folder.mkdir(parents=True)
    for source in (SAMPLES / "projects/home-dev-proj").glob(f"{SAMPLE_SESSION}*"):
        text = source.read_text().replace(SAMPLE_CWD, str(project))
        (slug_folder / source.name).write_text(text)
    shutil.copytree(SAMPLES / "file-history", home / "file-history")
    write(project / "existing.txt", b"version two\n")
    write(project / "newfile.txt", b"version one\n")
    files = SessionFiles(slug_folder, SAMPLE_SESSION)
    records = read_checkpoints(files.checkpoints)
    plan = plan_code(records, 1, project, files)
    assert {target.algorithm for target in plan.targets} == {"sha256"}
    result = rewind(files, project, 3, RewindMode.CODE)
    assert (project / "existing.txt").read_bytes() == b"base\n"
    assert (project / "newfile.txt").read_bytes() == b"version one\n"
    assert [path.name for path in result.written] == ["existing.txt"]
    rewind(files, project, 2, RewindMode.CODE)
    assert not (project / "newfile.txt").exists()
    assert (project / "existing.txt").read_bytes() == b"base\n"


# --------------------------------------------------------------------------------------------
# Property: any edits, creations and deletions across turns, then a rewind to any checkpoint,
# gives back the exact earlier tree (bytes and modes).

NAMES = ["a.txt", "b.bin", "src/c.py", "src/deep/d", "e"]
contents = st.binary(min_size=0, max_size=300) | st.sampled_from([b"", b"same", b"\r\n\x00\xff"])
modes = st.sampled_from([0o644, 0o600, 0o755, 0o700, 0o640])
operations = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(NAMES), contents, modes),
    st.tuples(st.just("delete"), st.sampled_from(NAMES), st.just(b""), st.just(0)),
)
turns = st.lists(st.lists(operations, max_size=6), min_size=1, max_size=5)


@pytest.mark.slow
@pytest.mark.home_on_tmpfs
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=turns, initial=st.dictionaries(st.sampled_from(NAMES), contents, max_size=3), pick=st.integers(0, 10))
def test_property_rewind_gives_back_the_exact_earlier_tree(home: Path, tmp_path_factory: pytest.TempPathFactory, history, initial, pick) -> None:  # type: ignore[no-untyped-def]
    project = tmp_path_factory.mktemp("project")
    for name, data in initial.items():
        write(project / name, data, 0o644)
    agent = Agent(project)
    trees = []
    for number, operations_of_turn in enumerate(history, start=1):
        agent.prompt(f"turn {number}")
        trees.append(snapshot(project))
        for action, name, data, mode in operations_of_turn:
            path = project / name
            if action == "write":
                agent.write(name, data, mode)
            elif path.exists():
                agent.delete(name)
    target = 1 + pick % len(history)
    records = read_checkpoints(agent.files.checkpoints)
    if RewindMode.CODE not in available_modes(records, target - 1, has_transcript=False):
        assert snapshot(project) == trees[target - 1]
        return
    code_rewind(agent, target)
    assert snapshot(project) == trees[target - 1]
    leftovers = [name for name in os.listdir(project) if name.startswith(".")]
    assert not leftovers


def test_json_of_a_result_is_serializable(home: Path, project: Path) -> None:
    agent = Agent(project)
    agent.prompt("turn")
    agent.write("a.txt", b"x")
    result = code_rewind(agent, 1, dry_run=True)
    assert json.loads(json.dumps(result.to_json()))["deleted"] == [str(project / "a.txt")]


def test_a_rewind_reads_the_checkpoints_file_once_before_its_lock(home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bare `commandcode rewind` reads the records once for the pending-move check and the
    request's check, and once more under the writer lock (a write in between is seen)."""
    from commandcode.checkpoints import records, redo_points

    agent = Agent(project)
    agent.prompt("one")
    agent.write("a.txt", b"one\n")
    agent.manager.flush()
    reads: list[str] = []
    for module in (records, redo_points):
        original = module.read_if_exists

        def counted(path: Path, _original: Any = original, **keywords: Any) -> bytes | None:
            reads.append(os.fspath(path))
            return _original(path, **keywords)  # type: ignore[no-any-return]

        monkeypatch.setattr(module, "read_if_exists", counted)
    result = rewind(agent.files, project, 1, RewindMode.CODE)
    assert not (project / "a.txt").exists() and result.deleted == [project / "a.txt"]
    assert reads.count(os.fspath(agent.files.checkpoints)) == 2
