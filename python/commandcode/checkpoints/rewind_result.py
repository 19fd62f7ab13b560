"""What a rewind did (or, for a dry run, would do): `RewindResult` and `SkippedFile`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import store as backups
from .modes import RewindMode


@dataclass(frozen=True)
class SkippedFile:
    """A file a code rewind leaves as it is, and why (`too_large`, `disk_full`, `symlink`)."""

    path: Path
    reason: str


@dataclass
class RewindResult:
    """What a rewind did (or, for a dry run, would do)."""

    number: int
    mode: RewindMode
    dry_run: bool
    written: list[Path] = field(default_factory=list)
    deleted: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    changed_outside: list[Path] = field(default_factory=list)
    problems: list[backups.Problem] = field(default_factory=list)
    leaf_entry_id: str | None = None
    skipped_lines: int = 0  # unreadable transcript lines the conversation side read past
    summary_entry_id: str | None = None
    dropped_checkpoints: int = 0
    redo: bool = False  # this was `rewind --redo`: `number` is the checkpoint of the rewind it undid (0: none)
    redo_point_id: str | None = None
    undid_redo: bool = False  # this redo undid a redo that had kept outside edits: what it undid is in effect again
    kept_outside: bool = False  # a forced rewind or redo: outside edits it overwrote are kept in its point
    rewound_past: int = 0  # checkpoints now marked rewound past (hidden from the real CLI, kept for redo)
    files: list[dict[str, Any]] = field(default_factory=list)  # the preview rows (`rewind_preview.py`)
    preview_outcome: backups.RestoreOutcome | None = None
    preview_targets: list[backups.RestoreTarget] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "checkpoint": self.number,
            "mode": self.mode.value,
            "dryRun": self.dry_run,
            "written": [str(path) for path in self.written],
            "deleted": [str(path) for path in self.deleted],
            "unchanged": [str(path) for path in self.unchanged],
            "skipped": [{"path": str(item.path), "reason": item.reason} for item in self.skipped],
            "changedOutside": [str(path) for path in self.changed_outside],
            "problems": [{"path": str(item.path), "code": item.code, "message": item.message} for item in self.problems],
            "leafEntryId": self.leaf_entry_id,
            "summaryEntryId": self.summary_entry_id,
            "droppedCheckpoints": self.dropped_checkpoints,
            "redo": self.redo,
            "redoPointId": self.redo_point_id,
            "undidRedo": self.undid_redo,
            "keptOutsideEdits": self.kept_outside,
            "rewoundPast": self.rewound_past,
            "files": self.files,
        }
