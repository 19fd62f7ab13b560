"""The `subagents` operation of the crash harness (`helpers.crash_harness`): a headless turn whose
sub-agents (two in parallel, one in the background the turn waits for) edit, create and (through
`bash`) change the project's files, backing each up into the parent's checkpoint, SIGKILLed at
random moments (timed, or at a random file-system call, sometimes mid-write).

Every run starts from the same tree (the seed's): after each point the check opens the session
as the next turn would (a `bash` command killed with the run is recorded from its note, the temp
file of a killed write removed), rewinds the run's checkpoint, when it was written, through the
code rewind, and the tree must be the seed's again, byte for byte and mode for mode, with no temp
file left (no checkpoint: no file may have changed, as every write comes after the checkpoint
opens). On top of the harness's checks (transcripts open, reported markers on
the active path, every checkpoints line whole, every object there and verifying):

- no half-written step: neither the parent's transcript nor any run's holds a `tool_use` without
  its `tool_result` (a write the harness tore in half, `call-torn`, leaves the lines before the
  tear: a transcript with a torn line is counted, `notes.steps_cut_by_a_torn_write`, not judged);
- every run is listed with its meta and no warning.

The rewind is forced: an after-edit digest (written with the next durable write, not on its own)
of a file edited twice may die with the process and make it look changed outside; the backups are
what this operation judges.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from commandcode.storage.durable import is_replace_temporary
from helpers.subagent_prompts import agent_call, call, dangling_calls

SUBAGENT_OPERATIONS = ("subagents",)
FILES = 8


def seed(workspace: Any) -> None:
    from helpers.crash_workspace import tree_state

    for number in range(FILES):
        path = workspace.project / f"work/f{number}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"file {number} version 0\n" * 4000)
    (workspace.project / "work/tool.sh").write_text("#!/bin/sh\n")
    (workspace.project / "work/tool.sh").chmod(0o755)
    workspace.session_id = workspace._seed_session()
    workspace.branching["seed_tree"] = tree_state(workspace.project)
    workspace.branching["checkpoints"] = 0


def next_run(workspace: Any, rng: random.Random, marker: str) -> list[str]:
    version = rng.randrange(1, 10**6)
    picked = rng.sample(range(FILES), 6)

    def edit(number: int) -> str:
        return call("edit_file", file_path=f"work/f{number}.txt", old_string="version 0",
                    new_string=f"version {version}", replace_all=True)

    background = agent_call(edit(picked[4]), call("write_file", file_path=f"work/bg-{marker}.txt", content=marker),
                            description="background", run_in_background=True)
    first = agent_call(edit(picked[0]), edit(picked[1]), call("write_file", file_path=f"made-{marker}/deep/a.txt",
                                                              content=marker), description="one", also=True)
    second = agent_call(edit(picked[2]), edit(picked[0]), call("bash", command=(
        f"sed -i 's/version 0/version {version}/' work/f{picked[3]}.txt && chmod 600 work/tool.sh && "
        f"rm work/f{picked[5]}.txt && echo {marker} > work/sh-{marker}.txt")), description="two", also=True)
    prompt = "\n".join([f"{marker} subagents", background, first, second, call("agent_output", agent_id="{{agent_id}}")])
    workspace.branching["shell_files"] = {f"work/f{picked[3]}.txt", "work/tool.sh", f"work/f{picked[5]}.txt",
                                          f"work/sh-{marker}.txt"}
    return ["-p", prompt, "-r", workspace.session_id or "", "--yolo", "--output-format", "json"]


def started(workspace: Any, args: list[str]) -> None:
    del args
    workspace.branching["checkpoints"] = len(_turns(workspace))


def record_report(workspace: Any, args: list[str], stdout: str) -> bool:
    try:
        value = json.loads(stdout)
    except ValueError:
        return False
    if not isinstance(value, dict) or value.get("type") != "result" or not isinstance(value.get("session_id"), str):
        return False
    workspace.reported.setdefault(value["session_id"], []).append(args[1].split()[0])
    return True


def _files(workspace: Any) -> Any:
    from commandcode.config.paths import project_dir
    from commandcode.sessions.files import SessionFiles

    return SessionFiles(project_dir(workspace.project), workspace.session_id or "")


def _turns(workspace: Any) -> list[Any]:
    from commandcode.checkpoints.records import read_checkpoints

    return [record for record in read_checkpoints(_files(workspace).checkpoints) if not record.is_redo_point]


def check(workspace: Any, violations: list[str], label: str) -> None:
    from commandcode.sessions.reader import open_session
    from commandcode.sessions.subagent_runs import list_subagent_runs

    files = _files(workspace)
    found = list_subagent_runs(files)
    if found.warnings:
        violations.append(f"{label}: the runs are listed with warnings: {found.warnings[:2]}")
    for path in [files.transcript, *(run.path for run in found.runs)]:
        if not Path(path).exists():
            continue
        if open_session(str(path), use_index=False).skipped_lines:
            workspace.notes["steps_cut_by_a_torn_write"] = workspace.notes.get("steps_cut_by_a_torn_write", 0) + 1
        elif dangling_calls(path):
            violations.append(f"{label}: {Path(path).name} holds a tool call without its result")
    _check_restores(workspace, files, violations, label)


def _check_restores(workspace: Any, files: Any, violations: list[str], label: str) -> None:
    """Rewinds the run's checkpoint (if written) and compares the tree with the seed's."""
    from commandcode.checkpoints import store as backups
    from commandcode.checkpoints.manager import CheckpointManager
    from commandcode.checkpoints.modes import RewindMode
    from commandcode.checkpoints.records import read_checkpoints
    from commandcode.checkpoints.rewind import RewindOptions, checkpoint_numbers, rewind
    from helpers.crash_workspace import tree_state

    try:
        backups.recover_pending(files, workspace.project)
        # the next open: a command killed with the run is recorded, a killed write's temp removed
        CheckpointManager.for_session(files, workspace.project).close()
        records = read_checkpoints(files.checkpoints)
        turns = [record for record in records if not record.is_redo_point]
        if len(turns) > workspace.branching["checkpoints"] and turns[-1].files:  # none: killed before a write
            number = checkpoint_numbers(records)[records.index(turns[-1])]
            rewind(files, workspace.project, number, RewindMode.CODE, RewindOptions(force=True))
            workspace.notes["rewound"] = workspace.notes.get("rewound", 0) + 1
    except Exception as error:
        violations.append(f"{label}: the run's checkpoint does not rewind: {type(error).__name__}: {error}")
        return
    tree = tree_state(workspace.project)
    expected = workspace.branching["seed_tree"]
    changed = sorted(name for name in set(tree) | set(expected) if tree.get(name) != expected.get(name))
    left = [name for name in changed if is_replace_temporary(name)]
    if left:  # a write killed before its rename: the next open removes its temp file
        violations.append(f"{label}: the temp files of killed writes stay after the next open: {left[:3]}")
    # a command killed with the run is undone too: the next open recorded it from its note
    wrong = [name for name in changed if name not in left]
    if wrong:
        violations.append(f"{label}: the backups do not restore the tree ({len(wrong)} differ, e.g. {wrong[:3]})")
    if changed:
        _reseed(workspace)


def _reseed(workspace: Any) -> None:
    """Puts the seed's tree back, so the next points are judged on their own."""
    seed_tree = workspace.branching["seed_tree"]
    for name in tree_names(workspace.project):
        if name not in seed_tree:
            (workspace.project / name).unlink()
    for name, (data, mode) in workspace.branching["seed_tree"].items():
        path = workspace.project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(mode)


def tree_names(root: Path) -> list[str]:
    """The relative path of every file and symlink under `root`."""
    from helpers.crash_workspace import tree_state

    return list(tree_state(root))
