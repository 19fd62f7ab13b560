"""The code side of a rewind: which bytes go back where, checked, then restored all or nothing.

Rewinding to a point of the timeline (checkpoint N, or a redo point) replays the records from
the newest down to it, newest-first, so for each path the backup taken in the earliest of them
wins: a file created after N is deleted, a deleted one comes back, a modified one gets its exact
bytes and mode back. Files changed outside the tracked tools since (the current bytes differ
from what the session last left there, or a later backup differs from what an earlier tool left)
are refused unless forced. Before anything is written, the current bytes of every file the
restore changes go into the operation's redo point, which lands in the same journaled step as
the files; afterwards the folders the undone turns created are removed when empty.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from ..errors import ChangedOutsideError, RestoreError
from ..sessions.files import SessionFiles
from . import shell_items
from . import store as backups
from .compatible import BLAKE3_KEY, BlobNames
from .records import Checkpoint, FileBackup, checkpoints_bytes
from .redo_points import missing_folders
from .rewind_numbers import checkpoint_numbers
from .rewind_result import RewindResult, SkippedFile


@dataclass(frozen=True)
class CodePlan:
    """The restore targets for a code rewind, the files it cannot restore, the outside changes
    found between turns (from recorded digests alone), and the malformed records that stop it."""

    targets: list[backups.RestoreTarget]
    skipped: list[SkippedFile]
    conflicts: list[backups.Problem]
    problems: list[backups.Problem] = field(default_factory=list)
    folders: dict[str, list[str]] = field(default_factory=dict)  # a deleted target → the folders its creation made
    hollow: list[str] = field(default_factory=list)  # empty folders a command made: removed while empty


def plan_code(records: Sequence[Checkpoint], index: int, cwd: Path, files: SessionFiles,
              blobs: BlobNames | None = None) -> CodePlan:
    """Replays checkpoints newest-first down to `records[index]`: per path, the backup of the
    earliest of those turns is the state to restore. `blobs` are the names of the session's
    real-CLI blob folder when the caller listed it already (`blob_rule.enforce`). The targets
    name their paths as `str` (a `Path` each was half of this planning); skipped files and
    problems as `Path`."""
    numbers = checkpoint_numbers(records)
    history: dict[str, list[tuple[int, FileBackup]]] = {}
    any_malformed = False
    for position in range(len(records) - 1, index - 1, -1):
        record = records[position]
        any_malformed = any_malformed or any(item.problem is not None for item in record.files)
        for key, item in record.items_by_path(cwd).items():  # a path's first item in the record counts
            history.setdefault(key, []).append((numbers[position], item))
    plan = CodePlan([], [], [], [])
    blob_folder = files.file_history
    for key, entries in history.items():
        malformed = any_malformed and next((item for _, item in entries if item.problem is not None), None)
        if malformed:
            message = f"{key} cannot be restored: its checkpoint record is malformed ({malformed.problem})"
            plan.problems.append(backups.Problem(Path(key), "invalid_record", message))
            continue
        if len(entries) > 1 and entries[-1][1].restorable:
            plan.conflicts.extend(_conflicts_between_turns(Path(key), entries))
        if blobs is None and entries[-1][1].algorithm == backups.SHA256:
            blobs = BlobNames(blob_folder)
        _plan_one(plan, key, entries, blob_folder, blobs)
    return plan


def _plan_one(plan: CodePlan, key: str, entries: list[tuple[int, FileBackup]], blob_folder: Path,
              blobs: BlobNames | None) -> None:
    """What `plan_code` does with one path: the state its oldest entry restores (`entries` are
    newest-first), checked against what its newest one left."""
    _, wanted = entries[-1]
    _, newest = entries[0]
    if not wanted.restorable:
        plan.skipped.append(SkippedFile(Path(key), wanted.skipped or "skipped"))
        return
    plain = _plain(wanted) and _plain(newest)
    if not plain and wanted.hash is None:
        made = wanted.extra.get("missingDirs")
        if isinstance(made, list) and made:
            plan.folders[key] = [folder for folder in made if isinstance(folder, str)]
    wanted_item = None if plain else shell_items.want(wanted)
    left = None if plain else shell_items.expect(newest)
    if not wanted_item and wanted.hash is None and any(shell_items.is_tree(item) for _, item in entries) \
            and os.path.isdir(key) and not os.path.islink(key):
        plan.hollow.append(key)  # a folder a command made: removed after the restore, while empty
        return
    expected = None
    if newest.after_known:
        expected = newest.after_hash if newest.after_hash is not None else "absent"
    expected_link = None
    if left is not None:
        expected, expected_link = cast(str, left["expected"]), cast("str | None", left["expected_link"])
    if wanted_item:
        plan.targets.append(backups.RestoreTarget(
            path=key, digest=None, mode=cast("int | None", wanted_item["mode"]), expected=expected,
            kind=cast(backups.TreeKind, wanted_item["kind"]), link=cast("str | None", wanted_item["link"]),
            expected_link=expected_link))
        return
    digest, algorithm = _compatible_fallback(wanted, blobs)
    raw = algorithm == backups.SHA256
    twin = wanted.extra.get(BLAKE3_KEY) if raw else None
    plan.targets.append(backups.RestoreTarget(
        key, digest, algorithm, blob_folder if raw else None, wanted.mode, expected,
        "file", twin if isinstance(twin, str) else None, None, expected_link))


def _plain(item: FileBackup) -> bool:
    """Whether an item's extra keys hold nothing but a blob twin (no shell item, no missing
    folders): the usual item, which needs none of the checks of `_plan_one`'s other cases."""
    extra = item.extra
    return not extra or (len(extra) == 1 and BLAKE3_KEY in extra)


def _compatible_fallback(wanted: FileBackup, blobs: BlobNames | None) -> tuple[str | None, backups.Algorithm]:
    """A compatible backup (`checkpoints/compatible.py`) whose raw blob is gone (the real CLI
    prunes `file-history/`) is restored from our store's copy, named by its `blake3` key."""
    twin = wanted.extra.get(BLAKE3_KEY)
    if wanted.algorithm == backups.SHA256 and isinstance(twin, str) and wanted.hash is not None \
            and not (blobs is not None and blobs.has(wanted.hash)):
        return twin, "blake3"
    return wanted.hash, "sha256" if wanted.algorithm == backups.SHA256 else "blake3"


def _conflicts_between_turns(path: Path, entries: list[tuple[int, FileBackup]]) -> list[backups.Problem]:
    """A later turn's backup that differs from what an earlier turn's tool left means the file
    was changed outside the tracked tools in between (a rewind would throw that change away)."""
    found = []
    for (newer_number, newer), (older_number, older) in zip(entries, entries[1:]):
        if not newer_number:
            continue  # a redo point: whatever it found there is kept in it, nothing is lost
        state = None if newer.hash is None else newer.store_object  # blake3, as `afterHash` is
        comparable = newer.restorable and (newer.hash is None or state is not None)
        if older.after_known and comparable and state != older.after_hash:
            since = f"turn {older_number}" if older_number else "a rewind"
            message = f"{path} was changed outside the tracked tools between {since} and turn {newer_number}"
            found.append(backups.Problem(path, "changed_outside", message))
    return found


def _refusal(problems: list[backups.Problem]) -> RestoreError:
    message = "nothing was restored: " + "; ".join(problem.message for problem in problems)
    rows = [(str(problem.path), problem.code, problem.message) for problem in problems]
    if all(problem.code == "changed_outside" for problem in problems):
        return ChangedOutsideError(message, problems=rows)
    return RestoreError(message, problems=rows)


def _fill_changes(result: RewindResult, outcome: backups.RestoreOutcome) -> None:
    """The outcome's changes into `result`'s lists, by action (paths as the targets named them)."""
    by_action: dict[str, list[str]] = {"write": [], "delete": [], "unchanged": []}
    for change in outcome.changes:
        by_action[change.action].append(os.fspath(change.path))
        if change.changed_outside:
            result.changed_outside.append(Path(change.path))
    for action, paths in by_action.items():
        result.add_changed(action, paths)


def restore_code(
    files: SessionFiles,
    cwd: Path,
    records: list[Checkpoint],
    index: int,
    result: RewindResult,
    *,
    store: backups.BackupStore,
    force: bool,
    allow_outside: bool,
    faults: dict[str, int] | None,
    point: Checkpoint | None = None,
    records_after: list[Checkpoint] | None = None,
    settle: Callable[[], None] | None = None,
    blobs: BlobNames | None = None,
) -> None:
    """Puts the files back to their state at `records[index]` (a dry run only checks and previews).

    `point` is the operation's redo point: it receives the current bytes of every file the
    restore changes, and `records_after` (which holds it) is the checkpoints file written in the
    same journaled step as the files. `settle` runs once the plan is made, before verification
    (the removal of the temps killed writes left, whose listing ran meanwhile). `blobs`: the
    session's blob folder as the caller listed it (`plan_code`)."""
    plan = plan_code(records, index, cwd, files, blobs)
    result.skipped = plan.skipped
    confine = None if allow_outside else cwd
    result.changed_outside.extend(problem.path for problem in plan.conflicts)
    if result.dry_run:  # the preview's targets and changes name `Path`s (`rewind_preview.py`)
        targets = [target._replace(path=Path(target.path)) for target in plan.targets]
        outcome = backups.check_restore(store, targets, confine_to=confine)
        _fill_changes(result, outcome)
        result.problems = plan.problems + plan.conflicts + outcome.problems
        result.preview_outcome = outcome
        result.preview_targets = targets
        result.add_changed("delete", plan.hollow)
        return
    if settle is not None:
        settle()
    try:
        # verified once: the plan, the redo point's bytes and the restore all come from this pass
        with backups.prepare_restore(store, plan.targets, session_id=files.session_id, confine_to=confine) as prepared:
            outcome = prepared.outcome
            if plan.problems or (plan.conflicts and not force):
                raise _refusal(plan.problems + plan.conflicts + outcome.problems)
            blocked = any(not (force and problem.code == "changed_outside") for problem in outcome.problems)
            if point is not None and not blocked:  # else the commit below refuses, with the store's own error
                pause = (faults or {}).get("keep_pause_ms", 0)
                point.files.extend(_keep_current(store, cwd, outcome, plan.targets, prepared, pause))
                point.files.extend(_keep_folders(plan.hollow))
                if plan.conflicts or any(problem.code == "changed_outside" for problem in outcome.problems):
                    # forced over outside edits: they are kept in this point, so it must stay undoable
                    result.kept_outside = True
                    if point.redo is not None:
                        point.redo["overwroteOutside"] = True
            companion = records_after if records_after is not None else records
            outcome = prepared.commit(
                force=force, companion=(files.checkpoints, checkpoints_bytes(companion)),
                fail_before_step=(faults or {}).get("fail_before_step"),
                step_delay_ms=(faults or {}).get("step_delay_ms", 0))
    except RestoreError as error:
        if any(problem[1] == "outside" for problem in error.problems):
            error.hint = outside_hint(cwd)
        raise
    _fill_changes(result, outcome)
    made = [folder for change in outcome.changes if change.action == "delete"
            for folder in plan.folders.get(os.fspath(change.path), [])] if plan.folders else []
    removed = shell_items.remove_hollow([*made, *plan.hollow], os.fspath(cwd))
    result.add_changed("delete", [folder for folder in removed if folder in plan.hollow])


def _keep_current(store: backups.BackupStore, cwd: Path, outcome: backups.RestoreOutcome,
                  targets: list[backups.RestoreTarget], prepared: backups.PreparedRestore,
                  pause_ms: int = 0) -> list[FileBackup]:
    """The redo point's items: what each file the restore changes holds now (stored from the
    bytes verification read and hashed), and what the restore leaves there (`afterHash`, the
    digest verification computed), so a redo puts it back and no later check takes the restore
    for an outside edit.

    Raises:
        RestoreError: a file could not be kept in the store (nothing was restored).
    """
    by_path = {os.fspath(target.path): target for target in targets}
    changes = [(os.fspath(change.path), change) for change in outcome.changes if change.action != "unchanged"]
    try:
        kept = prepared.keep(pause_ms=pause_ms)
    except OSError as error:
        raise RestoreError(f"nothing was restored: {error.filename or 'a file'} could not be kept for a redo: "
                           f"{error.strerror or error}") from None
    others = [Path(name) for name, _ in changes if kept.get(name) is None]
    looked = dict(zip(map(str, others), _backup_all(store, others), strict=True))  # symlinks, FIFOs, large files
    items = []
    for name, change in changes:  # 1,000s: each path turned into text once, up front
        snapshot = kept.get(name) or looked[name]
        if isinstance(snapshot, OSError):
            raise RestoreError(f"nothing was restored: {name} could not be kept for a redo: "
                               f"{snapshot.strerror or snapshot}") from None
        target = by_path[name]
        known, after = _restored_digest(target, change)
        item = FileBackup(name, snapshot.content_id if snapshot.kind == "regular" else None, None, backups.BLAKE3,
                          snapshot.mode, known, after)
        if snapshot.kind == "missing":
            made = missing_folders(Path(name), cwd)
            if made:
                item.extra["missingDirs"] = made
        elif snapshot.kind != "regular":
            kept_item = shell_items.current(name)  # a symlink or FIFO: kept as such
            if kept_item is None:
                item.skipped = "too_large" if snapshot.kind == "too_large" else "symlink"
            shell_items.note_before(item, kept_item)
        if target.kind != "file":
            shell_items.note_after(item, None, (target.kind, target.link, target.mode or 0))
        items.append(item)
    return items


KEEP_THREADS = 8
"""Files read into the store at once for a redo point: each put is durable (fsyncs), and the
native store runs without the GIL, so a rewind of a command that made 20,000 files keeps them in
a fraction of the time one by one took (about 90 s)."""


def _backup_all(store: backups.BackupStore, paths: list[Path]) -> list[backups.FileSnapshot | OSError]:
    """`store.backup_file` of every path, in order, on a few threads; an error in its place."""
    def one(path: Path) -> backups.FileSnapshot | OSError:
        try:
            return store.backup_file(path)
        except OSError as error:
            return error

    if len(paths) < 16:
        return [one(path) for path in paths]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(KEEP_THREADS, thread_name_prefix="commandcode-keep") as pool:
        return list(pool.map(one, paths))


def _keep_folders(folders: list[str]) -> list[FileBackup]:
    """The redo point's items for the empty folders the rewind removes: a redo makes them again."""
    items = []
    for folder in folders:
        try:
            mode = os.lstat(folder).st_mode & 0o7777
        except OSError:
            continue
        item = FileBackup(path=folder, hash=None, algorithm=backups.BLAKE3, after_known=True, after_hash=None)
        shell_items.note_before(item, ("folder", None, mode))
        items.append(item)
    return items


def outside_hint(cwd: Path) -> str:
    """What to say when a rewind refuses files outside the session's folder (a session resumed
    with `-r` from another folder edits files there)."""
    return (f"the session's folder is {cwd}; to restore files outside it, pass --allow-outside "
            "(preview with --dry-run)")


def _restored_digest(target: backups.RestoreTarget, change: backups.PlannedChange) -> tuple[bool, str | None]:
    """`(known, blake3)` of what a target holds once restored (`None`: no file): the blake3
    verification computed of the bytes it gets (a real-CLI blob is named by sha256; the records
    keep blake3)."""
    if target.digest is None:
        return True, None
    if change.content_id is not None:
        return True, change.content_id.lower()
    return False, None  # the restore refuses a missing or corrupt backup anyway
