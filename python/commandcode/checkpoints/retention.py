"""How long checkpoints are kept: 30 days, and at most 200 backups per session (format §4.2).

Owns: `RETENTION_DAYS`, `MAX_BACKUPS_PER_SESSION` and `retained`, the rule the manager applies
whenever it adds a checkpoint or a backup (the oldest checkpoints age out first, never the one
being recorded).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from ..storage.ids import parse_iso
from .records import Checkpoint

RETENTION_DAYS = 30
MAX_BACKUPS_PER_SESSION = 200


def retained(records: Sequence[Checkpoint], current: Checkpoint | None, now: datetime) -> list[Checkpoint]:
    """The records kept: those younger than 30 days (and `current`), then the oldest dropped
    while more than 200 backups remain (never `current`, never the last one)."""
    cutoff = now - timedelta(days=RETENTION_DAYS)
    kept = [record for record in records if record is current or not _older_than(record, cutoff)]
    while sum(record.backup_count for record in kept) > MAX_BACKUPS_PER_SESSION and len(kept) > 1:
        if kept[0] is current:
            break
        kept.pop(0)
    return kept


def _older_than(record: Checkpoint, cutoff: datetime) -> bool:
    created = parse_iso(record.created_at)
    if created is None:
        return False
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    return created < cutoff
