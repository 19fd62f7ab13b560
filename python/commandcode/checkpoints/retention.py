"""How long checkpoints are kept: 30 days, and at most 200 backups per session (format §6.1).

Owns: `RETENTION_DAYS`, `MAX_BACKUPS_PER_SESSION` and `retained`, the rule the manager applies
whenever it adds a checkpoint or a backup (the oldest checkpoints age out first, never the one
being recorded). Redo points are records like the others: they age out and count toward the cap,
and the objects of every record kept stay in the store (`references.py` reads them all).
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
    while _distinct_backups(kept) > MAX_BACKUPS_PER_SESSION and len(kept) > 1:
        if kept[0] is current:
            break
        capped.append(kept.pop(0))
    return kept, capped


def _distinct_backups(records: Sequence[Checkpoint]) -> int:
    """The backups the records keep, each content once (as the real CLI's blob folder holds it):
    a redo point that keeps the bytes a turn already backed up costs nothing more."""
    if sum(record.backup_count for record in records) <= MAX_BACKUPS_PER_SESSION:
        return 0  # the common case, without building the set
    return len({(item.algorithm, item.hash) for record in records for item in record.files if item.hash is not None})


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
