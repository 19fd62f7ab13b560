"""The code side of a rewind: which bytes go back where, checked, then restored all or nothing.

Rewinding to checkpoint N replays the checkpoints from the newest down to N, newest-first, so
for each path the backup taken in the earliest of those turns wins: a file created after N is
deleted, a deleted one comes back, a modified one gets its exact bytes and mode back. Files
changed outside the tracked tools since (the current bytes differ from what our tools last left,
or a later backup differs from what an earlier tool left) are refused unless forced.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ChangedOutsideError, RestoreError
from ..sessions.files import SessionFiles
from ..storage.regular import read_regular
from . import store as backups
from .records import Checkpoint, FileBackup, checkpoints_bytes, resolve_path
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


def plan_code(records: Sequence[Checkpoint], index: int, cwd: Path, files: SessionFiles) -> CodePlan:
    """Replays checkpoints newest-first down to `records[index]`: per path, the backup of the
    earliest of those turns is the state to restore."""
    numbers = checkpoint_numbers(records)
    history: dict[str, list[tuple[int, FileBackup]]] = {}
    base = os.fspath(cwd)
    any_malformed = False
    for position in range(len(records) - 1, index - 1, -1):
        seen: set[str] = set()
        for item in records[position].files:
            key = os.path.normpath(os.path.join(base, item.path))  # resolve_path, inlined: 1,000s of items
            any_malformed = any_malformed or item.problem is not None
            if key not in seen:
                seen.add(key)
                history.setdefault(key, []).append((numbers[position], item))
    targets, skipped, conflicts, problems = [], [], [], []
    blob_folder: Path | None = None
    for key, entries in history.items():
        _, wanted = entries[-1]
        _, newest = entries[0]
        path = Path(key)
        malformed = any_malformed and next((item for _, item in entries if item.problem is not None), None)
        if malformed:
            message = f"{path} cannot be restored: its checkpoint record is malformed ({malformed.problem})"
            problems.append(backups.Problem(path, "invalid_record", message))
            continue
        if not wanted.restorable:
            skipped.append(SkippedFile(path, wanted.skipped or "skipped"))
            continue
        if len(entries) > 1:
            conflicts.extend(_conflicts_between_turns(path, entries))
        expected = None
        if newest.after_known:
            expected = newest.after_hash if newest.after_hash is not None else "absent"
        if wanted.algorithm == backups.SHA256 and blob_folder is None:
            blob_folder = files.file_history
        digest, algorithm = _compatible_fallback(wanted, blob_folder)
        targets.append(
            backups.RestoreTarget(
                path=path,
                digest=digest,
                algorithm=algorithm,
                blob_folder=blob_folder if algorithm == backups.SHA256 else None,
                mode=wanted.mode,
                expected=expected,
            )
        )
    return CodePlan(targets, skipped, conflicts, problems)


def _compatible_fallback(wanted: FileBackup, blob_folder: Path | None) -> tuple[str | None, backups.Algorithm]:
    """A compatible backup (`checkpoints/compatible.py`) whose raw blob is gone (the real CLI
    prunes `file-history/`) is restored from our store's copy, named by its `blake3` key."""
    from .compatible import BLAKE3_KEY

    twin = wanted.extra.get(BLAKE3_KEY)
    if wanted.algorithm == backups.SHA256 and isinstance(twin, str) and wanted.hash is not None \
            and not (blob_folder is not None and (blob_folder / wanted.hash).is_file()):
        return twin, "blake3"
    return wanted.hash, "sha256" if wanted.algorithm == backups.SHA256 else "blake3"


def _conflicts_between_turns(path: Path, entries: list[tuple[int, FileBackup]]) -> list[backups.Problem]:
    """A later turn's backup that differs from what an earlier turn's tool left means the file
    was changed outside the tracked tools in between (a rewind would throw that change away)."""
    found = []
    for (newer_number, newer), (older_number, older) in zip(entries, entries[1:]):
        comparable = newer.restorable and (newer.hash is None or newer.algorithm == backups.BLAKE3)
        if older.after_known and comparable and newer.hash != older.after_hash:
            message = f"{path} was changed outside the tracked tools between turn {older_number} and turn {newer_number}"
            found.append(backups.Problem(path, "changed_outside", message))
    return found


def _refusal(problems: list[backups.Problem]) -> RestoreError:
    message = "nothing was restored: " + "; ".join(problem.message for problem in problems)
    rows = [(str(problem.path), problem.code, problem.message) for problem in problems]
    if all(problem.code == "changed_outside" for problem in problems):
        return ChangedOutsideError(message, problems=rows)
    return RestoreError(message, problems=rows)


def _fill_changes(result: RewindResult, outcome: backups.RestoreOutcome) -> None:
    for change in outcome.changes:
        bucket = {"write": result.written, "delete": result.deleted, "unchanged": result.unchanged}[change.action]
        bucket.append(change.path)
        if change.changed_outside:
            result.changed_outside.append(change.path)


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
) -> None:
    plan = plan_code(records, index, cwd, files)
    result.skipped = plan.skipped
    confine = None if allow_outside else cwd
    result.changed_outside.extend(problem.path for problem in plan.conflicts)
    if result.dry_run:
        outcome = backups.check_restore(store, plan.targets, confine_to=confine)
        _fill_changes(result, outcome)
        result.problems = plan.problems + plan.conflicts + outcome.problems
        return
    try:
        if plan.problems or (plan.conflicts and not force):
            outcome = backups.check_restore(store, plan.targets, confine_to=confine)
            raise _refusal(plan.problems + plan.conflicts + outcome.problems)
        # The records learn the restored state before the restore runs, and the native restore
        # replaces the checkpoints file in the same journaled step as the files: a crash leaves both
        # old or both new, never restored files with records that call them changed outside.
        _record_restored_state(records, index, cwd, plan.targets)
        outcome = backups.restore_files(
            store, plan.targets, session_id=files.session_id, confine_to=confine, force=force,
            companion=(files.checkpoints, checkpoints_bytes(records)),
            fail_before_step=(faults or {}).get("fail_before_step"), step_delay_ms=(faults or {}).get("step_delay_ms", 0),
        )
    except RestoreError as error:
        if any(problem[1] == "outside" for problem in error.problems):
            error.hint = outside_hint(cwd)
        raise
    _fill_changes(result, outcome)


def outside_hint(cwd: Path) -> str:
    """What to say when a rewind refuses files outside the session's folder (a session resumed
    with `-r` from another folder edits files there)."""
    return (f"the session's folder is {cwd}; to restore files outside it, pass --allow-outside "
            "(preview with --dry-run)")


def _restored_digest(target: backups.RestoreTarget) -> tuple[bool, str | None]:
    """`(known, blake3)` of what a target holds once restored (`None`: no file)."""
    if target.digest is None:
        return True, None
    if target.algorithm == backups.BLAKE3:
        return True, target.digest.lower()
    try:  # a real-CLI blob is named by sha256; the records keep blake3
        return True, backups.content_id(read_regular((target.blob_folder or Path()).joinpath(target.digest)) or b"")
    except OSError:
        return False, None  # the restore refuses a missing blob anyway


def _record_restored_state(records: list[Checkpoint], index: int, cwd: Path,
                           targets: list[backups.RestoreTarget]) -> None:
    """The newest record of each restored path learns what a successful restore leaves there,
    so a later rewind does not take our own restore for an outside edit."""
    restored = {str(target.path): target for target in targets}
    for record in reversed(records[index:]):
        for item in record.files:
            target = restored.pop(resolve_path(item.path, cwd), None)
            if target is not None:
                item.after_known, item.after_hash = _restored_digest(target)
