"""What a rewind did (or, for a dry run, would do): `RewindResult` and `SkippedFile`."""

from __future__ import annotations

from collections.abc import Iterable
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
    """What a rewind did (or, for a dry run, would do).

    `written`, `deleted` and `unchanged` are lists of `Path`, made on first access from the
    paths the restore reported as text (`add_changed`): a rewind of 1,000 files spent about half
    of its planning on one `Path` per file, which a caller that prints the JSON never needs."""

    number: int
    mode: RewindMode
    dry_run: bool
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
    _texts: dict[str, list[str]] = field(default_factory=dict, init=False, repr=False, compare=False)
    _paths: dict[str, list[Path]] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def written(self) -> list[Path]:
        """The files given older bytes back (or, for a dry run, that would be)."""
        return self._listed("write")

    @property
    def deleted(self) -> list[Path]:
        """The files (and the empty folders the undone turns made) removed."""
        return self._listed("delete")

    @property
    def unchanged(self) -> list[Path]:
        """The targets that held the wanted state already."""
        return self._listed("unchanged")

    def add_changed(self, action: str, paths: Iterable[str]) -> None:
        """Adds paths, as text, to `written` (`action` `"write"`), `deleted` (`"delete"`) or
        `unchanged` (`"unchanged"`)."""
        listed = self._paths.get(action)
        if listed is not None:
            listed.extend(map(Path, paths))
        else:
            self._texts.setdefault(action, []).extend(paths)

    def _listed(self, action: str) -> list[Path]:
        listed = self._paths.get(action)
        if listed is None:
            listed = self._paths[action] = [Path(text) for text in self._texts.pop(action, ())]
        return listed

    def _shown(self, action: str) -> list[str]:
        listed = self._paths.get(action)
        return [str(path) for path in listed] if listed is not None else list(self._texts.get(action, ()))

    def to_json(self) -> dict[str, Any]:
        return {
            "checkpoint": self.number,
            "mode": self.mode.value,
            "dryRun": self.dry_run,
            "written": self._shown("write"),
            "deleted": self._shown("delete"),
            "unchanged": self._shown("unchanged"),
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
