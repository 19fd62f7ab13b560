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


def retained(records: Sequence[Checkpoint], current: Checkpoint | None,
             now: datetime) -> tuple[list[Checkpoint], list[Checkpoint]]:
    """`(kept, capped)`: the records kept are those younger than 30 days (and `current`), less the
    oldest ones dropped while more than 200 backups remain (never `current`, never the last one);
    `capped` are those the backup cap dropped (the age-outs are not named)."""
    cutoff = now - timedelta(days=RETENTION_DAYS)
    kept = [record for record in records if record is current or not _older_than(record, cutoff)]
    capped: list[Checkpoint] = []
    while sum(record.backup_count for record in kept) > MAX_BACKUPS_PER_SESSION and len(kept) > 1:
        if kept[0] is current:
            break
        capped.append(kept.pop(0))
    return kept, capped


def cap_notice(turn_numbers: Sequence[int]) -> str:
    """The notice naming the checkpoints the 200-backup cap dropped."""
    numbers = ", ".join(str(number) for number in turn_numbers)
    count = len(turn_numbers)
    return (f"the session keeps at most {MAX_BACKUPS_PER_SESSION} backups: dropped the oldest "
            f"{'checkpoint' if count == 1 else f'{count} checkpoints'} ({numbers}); "
            f"{'that turn' if count == 1 else 'those turns'} can no longer be rewound")


def _older_than(record: Checkpoint, cutoff: datetime) -> bool:
    created = parse_iso(record.created_at)
    if created is None:
        return False
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    return created < cutoff
