"""The bytes the objects of the store's packs take, for the footprints and the sweep's plan.

A rewind's redo point stores its new objects in one pack (format §7.2) until a collection absorbs
it; until then an object has no file of its own, so a count of the fan-out folders misses it.
`packed_sizes` gives each packed object's frame length by id. With no pack in the store's
`packs/` (the usual case) it neither opens the store nor imports `checkpoints.store` (and with
it the native module).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..config.paths import objects_dir

PACKS_FOLDER = "packs"
PACK_SUFFIX = ".pack"


def packed_sizes(root: Path | None = None) -> dict[str, int]:
    """By object id, the bytes its frame takes in a pack of the store at `root` (default: the
    user's); `{}` when there is no pack."""
    store = root if root is not None else objects_dir()
    try:
        names = os.listdir(store / PACKS_FOLDER)
    except OSError:
        return {}
    if not any(name.endswith(PACK_SUFFIX) and not name.startswith(".") for name in names):
        return {}
    from .store import BackupStore

    try:
        return BackupStore(store).packed_sizes()
    except OSError:
        return {}
