"""Shell tracking (issue 14) while a session's sub-agents run on several threads (issue 28):
`bash` calls that overlap each other or an edit tool still have every change recorded against a
state from before all of them, so a code rewind of the turn puts the tree back byte for byte.
Real files, the real store and tracker, real `bash` processes through the shell tool."""

from __future__ import annotations

import threading
from pathlib import Path

from commandcode.agent.tools import run_tool
from commandcode.checkpoints.manager import CheckpointManager
from commandcode.checkpoints.modes import RewindMode
from commandcode.checkpoints.rewind import RewindOptions, rewind
from commandcode.checkpoints.shell_tracking import ShellTracker
from helpers.checkpoints import new_session_files, snapshot, write


def _tracked(project: Path) -> CheckpointManager:
    write(project / "a.txt", "a before\n")
    write(project / "b.txt", "b before\n")
    write(project / "shared.txt", "shared before\n")
    manager = CheckpointManager.for_session(new_session_files(project), project, compatible_backups=False)
    manager.shell = ShellTracker(project, manager.store)
    manager.open_checkpoint("sub-agents", 0, None)
    return manager


def _bash(project: Path, command: str) -> None:
    outcome = run_tool("bash", {"command": command}, project)
    assert not outcome.is_error, outcome.text


def test_overlapping_bash_calls_record_each_others_changes(home: Path, project: Path) -> None:
    """Sub-agent A's command changes a.txt and is still running when B's starts: B's start must
    not take A's change for the baseline (on 55fdfa8 it did, and the rewind left a.txt changed)."""
    manager = _tracked(project)
    before = snapshot(project)
    manager.before_shell()  # A starts
    _bash(project, "echo 'a by A' > a.txt; mkdir -p out/deep; echo made > out/deep/new.txt")
    manager.before_shell()  # B starts while A runs
    _bash(project, "echo 'b by B' > b.txt; rm shared.txt")
    manager.after_shell()  # A ends: B's changes so far are recorded too
    _bash(project, "echo 'b again' >> b.txt; echo late > late.txt")
    manager.after_shell()  # B ends
    manager.flush()
    names = sorted(Path(item.path).name for item in manager.current.files)  # type: ignore[union-attr]
    assert names == ["a.txt", "b.txt", "late.txt", "new.txt", "shared.txt"]
    rewind(manager.files, project, 1, RewindMode.CODE, RewindOptions(checkpoints=manager))
    assert snapshot(project) == before
    assert not (project / "out").exists()
    manager.close()


def test_an_edit_racing_a_running_command_keeps_the_state_before_the_turn(home: Path, project: Path) -> None:
    """B's `edit_file` backs up shared.txt after A's running command changed it: the first item
    must still be the state before the turn (on 55fdfa8 it was A's output, so the rewind put
    the command's output back instead of the original)."""
    manager = _tracked(project)
    before = snapshot(project)
    manager.before_shell()
    _bash(project, "echo 'by the command' > shared.txt; echo created > created.txt")
    for path, old in ((project / "shared.txt", "by the command"), (project / "created.txt", "created")):
        manager.backup_before_edit(str(path))  # the sequence `editing` runs, spelled out
        outcome = run_tool("edit_file", {"file_path": str(path), "old_string": old, "new_string": "edited"}, project)
        assert not outcome.is_error, outcome.text
        manager.record_after_edit(str(path))
    manager.after_shell()
    manager.flush()
    rewind(manager.files, project, 1, RewindMode.CODE, RewindOptions(checkpoints=manager))
    assert snapshot(project) == before
    manager.close()


def test_parallel_agents_mixing_bash_and_edits_are_all_rewound(home: Path, project: Path) -> None:
    """Four threads, each a sub-agent: two run `bash` calls, two edit with the tools, all at once
    on their own files and one shared file; the rewind restores everything."""
    manager = _tracked(project)
    for index in range(8):
        write(project / f"own{index}.txt", f"own {index}\n")
    before = snapshot(project)
    start = threading.Barrier(4)
    errors: list[BaseException] = []

    def shell_agent(number: int) -> None:
        try:
            start.wait()
            for step in range(4):
                manager.before_shell()
                try:
                    _bash(project, f"echo 'shell {number}.{step}' >> own{number}.txt; "
                                   f"echo {step} > made{number}_{step}.txt; echo s{number} >> shared.txt")
                finally:
                    manager.after_shell()
        except BaseException as error:  # noqa: BLE001 - reported by the main thread
            errors.append(error)

    def edit_agent(number: int) -> None:
        try:
            start.wait()
            for step in range(4):
                for name in (f"own{number}.txt", "shared.txt"):
                    path = project / name
                    with manager.editing(str(path)):
                        outcome = run_tool("write_file", {"file_path": str(path),
                                                          "content": path.read_text() + f"edit {number}.{step}\n"}, project)
                        assert not outcome.is_error, outcome.text
                        manager.record_after_edit(str(path))
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=shell_agent, args=(0,)), threading.Thread(target=shell_agent, args=(1,)),
               threading.Thread(target=edit_agent, args=(2,)), threading.Thread(target=edit_agent, args=(3,))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    manager.flush()
    assert snapshot(project) != before
    rewind(manager.files, project, 1, RewindMode.CODE, RewindOptions(checkpoints=manager))
    assert snapshot(project) == before
    manager.close()


def test_a_folder_a_commands_end_saw_before_its_file_is_still_removed_by_the_rewind(home: Path, project: Path) -> None:
    """The CI flake of `test_subagent_rewind_e2e` (an empty `new/` left after the rewind): sub-agent
    A's `write_file` of new/deep/x.txt has made the folders and holds its temp file there when B's
    command ends, so B's pass lists new/deep (no file to record yet, not hollow either); the file
    lands while C's command still runs. The item must keep the folders to remove: on 55fdfa8 C's
    end took new/deep for a folder from before the commands (the walk before its own had listed
    it), the raced item's `missingDirs` were replaced by none, and the rewind left new/deep."""
    manager = _tracked(project)
    before = snapshot(project)
    manager.before_shell()  # B starts
    manager.before_shell()  # C starts
    target = project / "new" / "deep" / "x.txt"
    manager.backup_before_edit(str(target))  # A, while the commands run (what `editing` does first)
    target.parent.mkdir(parents=True)
    temporary = target.parent / ".x.txt.4242.0badcafe.tmp"  # `replace_file`'s temp, mid-write
    temporary.write_text("made by A\n")
    manager.after_shell()  # B ends
    temporary.rename(target)
    manager.record_after_edit(str(target))
    manager.after_shell()  # C ends
    manager.flush()
    item = manager.current.backup_for(str(target), project)  # type: ignore[union-attr]
    assert item is not None and item.extra.get("missingDirs") == [str(project / "new"), str(project / "new" / "deep")]
    rewind(manager.files, project, 1, RewindMode.CODE, RewindOptions(checkpoints=manager))
    assert snapshot(project) == before
    assert not (project / "new").exists()
    manager.close()
