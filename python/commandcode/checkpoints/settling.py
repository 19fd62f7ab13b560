"""This process's restores whose settle may still be running, and the waits that keep a later
write from racing one.

A committed restore returns while its settle (`rust/src/store/restore/settle.rs`: one `syncfs`,
then the companion's copy and the journal removed) runs on a native thread. Until the journal is
gone, an exit or a kill leaves it open, and its recovery writes the companion (the session's
checkpoints file, as the restore left it) and every target overwritten in place again from their
sources: a write made meanwhile to one of those files would be undone, and once the settle
removed the companion's copy the recovery could not finish at all. So, in this process:

- every write of a session's checkpoints file first waits for the settle of that session's
  restore (`before_checkpoints_write`, called by `records.write_checkpoints_data`, the one
  function that writes the file);
- every tool call of the agent first waits for all of them (`before_project_write`,
  `agent/tools.py`): the files a restore wrote are the ones the agent edits next;
- the exit waits for all (`store.settle_and_warn`, registered with `atexit` by the first
  commit), and so does the delivery of a signal held while a rewind committed (`storage/signals.py`).

A settle that failed (its flush or the journal's removal) leaves its journal open for the next
recovery. It is an error for the next recovery or restore of that session, once (`settle`:
`store.recover_pending` and `store.prepare_restore` ask), and for every write of that session's
checkpoints file while the journal is open (the recovery would undo the write); the exit warns of
those not reported yet.

Cheap when nothing is pending: one look at two empty dicts.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ..errors import CheckpointError

_lock = threading.Lock()
_pending: dict[str, tuple[str | None, object]] = {}
"""Journal → (companion (absolute path; `None`: none), a token of the commit) of each restore
committed here whose settle was not waited for yet."""
_failed: dict[str, tuple[str | None, str]] = {}
"""Journal → (companion, reason) of each settle that failed: its journal may still be open."""
_unreported: list[tuple[str, str]] = []
"""(journal, reason) of failed settles no error reported yet: the exit warns of them."""


def started(journal: Path, companion: Path | None) -> None:
    """Notes a committed restore whose settle runs behind the caller."""
    with _lock:
        _pending[os.fspath(journal)] = (None if companion is None else os.path.abspath(companion), object())


def settle(journal: Path) -> str | None:
    """Waits for the settle of `journal`'s restore, if one is pending; returns the reason it
    failed when that was not reported yet (reported now: the caller says it)."""
    key = os.fspath(journal)
    _wait(key)
    with _lock:
        found = next((index for index, (failed, _) in enumerate(_unreported) if failed == key), None)
        return None if found is None else _unreported.pop(found)[1]


def before_checkpoints_write(path: Path) -> None:
    """Waits for the settle of the restore whose companion is `path` (a session's checkpoints
    file), if one is pending.

    Raises:
        CheckpointError: that settle failed and its journal is still open (a recovery of it
            would undo the write); nothing may be written until it is finished.
    """
    if not _pending and not _failed:
        return
    key = os.path.abspath(path)
    with _lock:
        journals = [journal for journal, (companion, _) in _pending.items() if companion == key]
    for journal in journals:
        _wait(journal)
    with _lock:
        failures = [(journal, reason) for journal, (companion, reason) in _failed.items() if companion == key]
    for journal, reason in failures:
        if not os.path.lexists(journal):  # a recovery finished it
            with _lock:
                _failed.pop(journal, None)
            continue
        with _lock:
            if (journal, reason) in _unreported:
                _unreported.remove((journal, reason))
        raise CheckpointError(
            f"cannot write {path}: a restore of this session could not be flushed to disk ({reason}), and its "
            f"journal {journal} is still open",
            hint="run any command that opens the session (e.g. `commandcode checkpoints list`): it finishes that "
                 "restore first")


def before_project_write() -> None:
    """Waits for every settle still pending in this process (the files a restore wrote are the
    project's); a failure is kept for the next write of its checkpoints file and the exit."""
    if not _pending:
        return
    with _lock:
        journals = list(_pending)
    for journal in journals:
        _wait(journal)


def settle_all() -> list[tuple[Path, str]]:
    """Waits for every settle still pending in this process; returns (and forgets) `(journal,
    reason)` of each failure no error reported yet."""
    before_project_write()
    from .store import native_settle

    # a commit outside `PreparedRestore.commit` (none today) is waited for too
    rest = [(os.fspath(journal), reason) for journal, reason in native_settle(None)]
    with _lock:
        failures, _unreported[:] = [*_unreported, *rest], []
    return [(Path(journal), reason) for journal, reason in failures]


def _wait(journal: str) -> None:
    """Waits for `journal`'s pending settle (none: returns at once) and files its failure."""
    with _lock:
        if journal not in _pending:
            return
        companion, token = _pending[journal]
    from .store import native_settle  # loaded: it committed the restore

    failures = native_settle(journal)  # forgotten below only once settled: no writer slips by
    with _lock:
        if _pending.get(journal, (None, None))[1] is token:  # not a later commit of the same journal
            del _pending[journal]
        for failed, reason in failures:
            _failed[os.fspath(failed)] = (companion, reason)
            _unreported.append((os.fspath(failed), reason))
