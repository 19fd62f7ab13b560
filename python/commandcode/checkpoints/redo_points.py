"""The history a rewind leaves behind: redo points, rewound-past marks, and which rewind a redo undoes.

Owns the rules that make every rewind reversible (format §6.1):

- The checkpoints file is a timeline in file order: each turn's checkpoint (the state before the
  turn, for the files it touched) and each rewind's **redo point** (the state just before the
  rewind, for the files it touched). The state of a file at any point of the timeline is the
  backup of the first record at or after that point that names it; a file no later record names
  is still as it was then. So rewinding to checkpoint N, rewinding forward again, and redoing are
  one operation: put the files back to their state at a point of the timeline.
- A conversation rewind to checkpoint N keeps every checkpoint and marks as **rewound** those
  not on the conversation's new path (the path is the chain of `parentCheckpointId`s, else file
  order). A redo puts the marks back as they were (`rewoundBefore`).
- `rewind --redo` undoes the newest rewind no redo has undone yet; the redo is itself a point of
  the timeline (`op: "redo"`), so the files it overwrote are kept too. No state a rewind or redo
  overwrites is ever out of reach: a redo after turns made since the rewind is refused (it would
  overwrite their edits), and a redo forced over outside edits keeps them in its point and can
  itself be undone by the next `--redo` (which puts the rewind it undid back in effect).
- A redo point is written with `conversation: "pending"` before the leaf moves and without it
  after; `finish_pending_conversation` completes a move a kill interrupted.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import CheckpointError, SessionLockedError
from ..sessions.files import SessionFiles
from ..sessions.reader import open_session
from ..sessions.writer import SessionWriter
from ..storage.ids import iso_now, new_uuid
from ..storage.regular import read_if_exists
from .records import Checkpoint, FileBackup, read_checkpoints, write_checkpoints

OP_REWIND = "rewind"
OP_REDO = "redo"
PENDING = "pending"


def turn_records(records: Sequence[Checkpoint]) -> list[Checkpoint]:
    """The turns' checkpoints (no redo points), in file order."""
    return [record for record in records if not record.is_redo_point]


def newest_on_path(records: Sequence[Checkpoint]) -> Checkpoint | None:
    """The newest turn checkpoint no rewind has passed: the parent of the next turn's."""
    return next((record for record in reversed(records) if not record.hidden), None)


def path_to(records: Sequence[Checkpoint], index: int) -> set[str]:
    """The ids of the checkpoints before `records[index]` on its conversation path: its chain of
    `parentCheckpointId`s (a record without one follows the turn before it in file order; one
    whose `parentCheckpointId` is null starts the path)."""
    turns = turn_records(records)
    by_id = {record.id: record for record in turns}
    previous = {turn.id: (turns[position - 1].id if position else None) for position, turn in enumerate(turns)}
    found: set[str] = set()
    current: str | None = records[index].id
    while current is not None:
        record = by_id.get(current)
        if record is not None and record.starts_at_root:
            break  # `parentCheckpointId: null`: the turn started with no checkpoint before it on its path
        parent = record.parent_checkpoint_id if record is not None else None
        current = parent if parent in by_id else previous.get(current)
        if current is None or current in found:
            break
        found.add(current)
    return found


def rewound_ids(records: Sequence[Checkpoint]) -> list[str]:
    return [record.id for record in turn_records(records) if record.rewound]


def mark_after_move(records: Sequence[Checkpoint], index: int, moment: str) -> None:
    """After the conversation moved to just before `records[index]`: only the checkpoints on its
    path stay offered; the rest are rewound past (a mark already there keeps its time)."""
    keep = path_to(records, index)
    for record in turn_records(records):
        if record.id in keep:
            record.set_rewound(None)
        elif not record.rewound:
            record.set_rewound(moment)


def restore_marks(records: Sequence[Checkpoint], rewound: Sequence[str], moment: str) -> None:
    wanted = set(rewound)
    for record in turn_records(records):
        if record.id not in wanted:
            record.set_rewound(None)
        elif not record.rewound:
            record.set_rewound(moment)


def new_redo_point(files: list[FileBackup], facts: dict[str, Any]) -> Checkpoint:
    """A redo point holding `files` (the state just before the operation) and `facts` (`op`,
    `leafBefore`, `rewoundBefore`, ...). It carries the real CLI's record fields too, but is
    always written as a hidden line."""
    identifier = new_uuid()
    return Checkpoint(id=identifier, message_id=identifier, turn_number=0, created_at=iso_now(), prompt=None,
                      message_count=0, last_message_id=None, files=files, extra={"redo": dict(facts)})


def keeps_work(facts: dict[str, Any]) -> bool:
    """Whether a redo point holds a state no other record brings back: a redo forced over edits
    made outside the tracked tools (`overwroteOutside`). Such a redo can itself be undone."""
    return facts.get("op") == OP_REDO and bool(facts.get("overwroteOutside"))


def undoable(records: Sequence[Checkpoint]) -> int | None:
    """The index of the redo point of the newest operation still in effect: a rewind, or a redo
    that kept outside edits (`keeps_work`), that no redo has undone."""
    for position in range(len(records) - 1, -1, -1):
        facts = records[position].redo
        if facts is not None and (facts.get("op") == OP_REWIND or keeps_work(facts)) and not facts.get("undoneBy"):
            return position
    return None


def turns_after(records: Sequence[Checkpoint], index: int) -> int:
    """How many turns' checkpoints the file holds after `records[index]` (turns made since)."""
    return sum(1 for record in records[index + 1:] if not record.is_redo_point)


def redoable(records: Sequence[Checkpoint]) -> int | None:
    """`undoable`, unless turns were made since that operation (a redo would overwrite them)."""
    position = undoable(records)
    return position if position is not None and not turns_after(records, position) else None


def require_undoable(records: Sequence[Checkpoint]) -> int:
    """Like `undoable`.

    Raises:
        CheckpointError: there is no rewind left to undo, or turns were made since the newest
            one: a redo would overwrite their edits, and no record could bring those back.
    """
    position = undoable(records)
    if position is None:
        raise CheckpointError("nothing to redo: this session has no rewind that a redo has not undone",
                              hint="`commandcode checkpoints list REF --all` shows the checkpoints a rewind passed")
    since = turns_after(records, position)
    if since:
        facts = records[position].redo or {}
        what = "the redo" if facts.get("op") == OP_REDO else "the rewind"
        raise CheckpointError(
            f"cannot redo: {since} turn(s) were made since {what} to checkpoint {facts.get('checkpoint', '?')}, "
            "and a redo would overwrite their edits; nothing was changed",
            hint="to go back, rewind to a checkpoint instead (`commandcode checkpoints list REF --all` lists them)")
    return position


def unapply(records: Sequence[Checkpoint], point: Checkpoint, by: str) -> None:
    """Marks the operation of redo point `point` undone by redo point `by`; undoing a redo puts
    the operation it had undone back in effect (and so on down the chain), so the state that
    redo overwrote is reachable again by the next `--redo`."""
    facts = point.redo
    if facts is None:
        return
    facts["undoneBy"] = by
    if facts.get("op") == OP_REDO:
        target = next((record for record in records if record.id == facts.get("undoes")), None)
        if target is not None and target.redo is not None:
            target.redo.pop("undoneBy", None)
            if target.redo.get("op") == OP_REDO:  # that redo is in effect again: its own target is undone
                grand = next((record for record in records if record.id == target.redo.get("undoes")), None)
                if grand is not None:
                    unapply(records, grand, target.id)


def current_leaf(files: SessionFiles) -> str | None:
    """The transcript's leaf entry (None when there is no transcript or it is empty)."""
    if not files.transcript.exists():
        return None
    return open_session(files.transcript).leaf_id


def finish_pending_conversation(files: SessionFiles, cwd: Path, writer: SessionWriter | None = None, *,
                                data: bytes | None = None) -> bool:
    """Completes the conversation move of a rewind or redo that was killed after its files and
    records landed but before its leaf moved (its redo point still says `conversation:
    "pending"`). Returns whether anything was finished (the checkpoints file was rewritten). A
    session another process holds open is left to that process. `data`: the checkpoints file's
    bytes when the caller read them already (not read again unless a move may be pending)."""
    if not (_may_be_pending(files.checkpoints) if data is None else _says_pending(data)):
        return False  # every rewind and redo opens the session here: no parse of 1,000s of items
    try:
        records = read_checkpoints(files.checkpoints)
    except CheckpointError:
        return False
    point = next((record for record in reversed(records) if record.is_redo_point), None)
    facts = point.redo if point is not None else None
    if facts is None or facts.get("conversation") != PENDING:
        return False
    assert point is not None
    try:
        if writer is None:
            with SessionWriter(files, str(cwd)) as own:
                _finish(own, facts, point.id)
        else:
            _finish(writer, facts, point.id)
    except SessionLockedError:
        return False
    facts.pop("conversation", None)
    write_checkpoints(files.checkpoints, records)
    return True


def _may_be_pending(path: Path) -> bool:
    """Whether the checkpoints file may hold a pending move: it says `pending` somewhere (or has
    a `\\u` escape that could spell it). Reading the bytes costs a fraction of parsing them."""
    try:
        data = read_if_exists(path, follow=True)
    except OSError:
        return True  # `read_checkpoints` says what is wrong
    return data is not None and _says_pending(data)


def _says_pending(data: bytes) -> bool:
    """`_may_be_pending` of bytes already read."""
    return b"pending" in data or b"\\u" in data


def _finish(writer: SessionWriter, facts: dict[str, Any], point_id: str) -> None:
    """Moves the leaf where the interrupted operation was taking it, unless it moved already."""
    target = facts.get("leafAfter")
    if not facts.get("moveLeaf") or writer.leaf_id != facts.get("leafBefore") or writer.leaf_id == target:
        return
    if target is None or (isinstance(target, str) and target in writer):
        writer.move_leaf(target, leaf_marker_data(facts, point_id))


def leaf_marker_data(facts: dict[str, Any], point_id: str) -> dict[str, Any]:
    """The `data` of the `commandcode.leaf` entry a rewind or redo appends."""
    data: dict[str, Any] = {"reason": facts.get("op", OP_REWIND), "redoPointId": point_id}
    if isinstance(facts.get("checkpointId"), str):
        data["checkpointId"] = facts["checkpointId"]
    return data


def missing_folders(path: Path, root: Path) -> list[str]:
    """The folders between `root` and `path` that do not exist yet, outermost first (what
    creating `path` makes, and what deleting it again should remove)."""
    missing: list[str] = []
    folder = path.parent
    while folder != root and root in folder.parents and not folder.exists():
        missing.append(str(folder))
        folder = folder.parent
    return missing[::-1]
