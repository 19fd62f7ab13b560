"""The property of issue 14: any sequence of edits (edit tools and shell commands), rewinds and
redos ends with every file exactly as a model of that sequence says. Real files, the real
manager, shell tracker and rewinds; the model is a dict of file contents."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commandcode.checkpoints.manager import CheckpointManager
from commandcode.checkpoints.modes import RewindMode
from commandcode.checkpoints.redo_points import undoable
from commandcode.checkpoints.rewind import RewindOptions, available_modes, find_checkpoint, redo, rewind
from commandcode.checkpoints.shell_tracking import ShellTracker
from commandcode.errors import CheckpointError
from helpers.checkpoints import new_session_files

PATHS = ("a.txt", "src/b.txt", "src/deep/c.txt")
CONTENTS = ("", "one\n", "two\n", "three\n")

step = st.one_of(
    st.tuples(st.just("turn")),
    st.tuples(st.just("edit"), st.sampled_from(PATHS), st.sampled_from(CONTENTS)),
    st.tuples(st.just("shell"), st.lists(st.tuples(st.sampled_from(PATHS), st.sampled_from((*CONTENTS, None))),
                                         min_size=1, max_size=3)),
    st.tuples(st.just("rewind"), st.integers(min_value=1, max_value=6)),
    st.tuples(st.just("redo")),
)


def _tree(project: Path) -> dict[str, str]:
    found = {}
    for folder, _, names in os.walk(project):
        for name in names:
            path = Path(folder) / name
            found[str(path.relative_to(project))] = path.read_text()
    return found


def _apply(project: Path, name: str, content: str | None) -> None:
    path = project / name
    if content is None:
        path.unlink(missing_ok=True)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(step, min_size=1, max_size=14))
def test_edits_shell_commands_rewinds_and_redos_match_the_model(home: Path, steps: list[tuple]) -> None:  # type: ignore[type-arg]
    project = Path(tempfile.mkdtemp(prefix="property-", dir=home.parent))
    try:
        files = new_session_files(project)
        manager = CheckpointManager.for_session(files, project)
        manager.shell = ShellTracker(project, manager.store)
        model: dict[str, str] = {}
        opened: list[dict[str, str]] = []  # the tree when each checkpoint opened
        undo: list[tuple[dict[str, str], int]] = []  # the tree before each rewind no redo has undone, turns then
        for action, *args in [("turn",), *steps]:
            if action in ("edit", "shell") and manager.current is None:
                action, args = "turn", []  # after a rewind, the next edit belongs to the next turn
            if action == "turn":
                manager.open_checkpoint(f"turn {len(opened) + 1}", 0, None)
                opened.append(dict(model))
            elif action == "edit":
                name, content = args
                manager.backup_before_edit(str(project / name))
                _apply(project, name, content)
                manager.record_after_edit(str(project / name))
                model[name] = content
            elif action == "shell":
                manager.before_shell()
                for name, content in args[0]:
                    _apply(project, name, content)
                    if content is None:
                        model.pop(name, None)
                    else:
                        model[name] = content
                manager.after_shell()
            elif action == "rewind":
                number = min(args[0], len(opened))
                index = find_checkpoint(manager.records, number)
                if RewindMode.CODE not in available_modes(manager.records, index, has_transcript=False):
                    assert model == opened[number - 1], "no recorded change since: the tree is that state"
                    continue
                rewind(files, project, number, RewindMode.CODE, RewindOptions(checkpoints=manager))
                undo.append((dict(model), len(opened)))
                model = dict(opened[number - 1])
                assert manager.current is None, "the next edit belongs to the next turn"
            elif action == "redo":
                if not undo:
                    assert undoable(manager.records) is None
                    continue
                if undo[-1][1] != len(opened):  # a turn since: a redo would overwrite its edits
                    with pytest.raises(CheckpointError, match="cannot redo"):
                        redo(files, project, RewindOptions(checkpoints=manager))
                else:
                    redo(files, project, RewindOptions(checkpoints=manager))
                    model = undo.pop()[0]
            assert _tree(project) == model, f"after {action} {args}"
    finally:
        shutil.rmtree(project, ignore_errors=True)
