"""The catalog rows of one directory's sessions brought up to date on another thread, while the
launch imports the rest of the agent.

`commandcode -c` (headless or not) must find the newest session of the directory before it can
open it, and on first contact that means summarizing every transcript the catalog has not seen
(a 1 GB session: most of the time the cold open itself takes). The native summary runs without
the GIL, and the launch spends about 0.2 s importing typer, the agent and its tools before it
asks, so the command line calls `begin(cwd)` as soon as it sees `-c`: by the time `-c` lists the
sessions, the rows are fresh or nearly so.

Every use of the catalog (`cached.catalog_session`) first waits for a warm-up under way
(`settle`), so no transcript is summarized twice and nobody reads a half-written refresh. The
warm-up reports nothing: a catalog it cannot use, or a transcript it cannot read, is met again
by the listing that follows, which says so once. The folders it brought up to date without a
problem are handed to that listing (`warmed`, through `cached.one_refresh`), which then does
not check them a second time.
"""

from __future__ import annotations

import threading

_thread: threading.Thread | None = None
_warmed: set[str] = set()


def begin(cwd: str) -> None:
    """Starts refreshing the catalog rows of `cwd`'s sessions on a daemon thread (once per
    process; nothing when `COMMANDCODE_CATALOG=off` or the directory has no sessions folder)."""
    global _thread
    import os

    from ..config.env import catalog_enabled
    from ..config.paths import project_dir

    # no sessions folder: nothing to warm, and nothing is made (a refused launch leaves no data dir)
    if _thread is not None or not catalog_enabled() or not os.path.isdir(project_dir(cwd)):
        return
    _thread = threading.Thread(target=_refresh, args=(cwd,), name="catalog-warmup", daemon=True)
    _thread.start()


def settle() -> None:
    """Waits for the warm-up under way, if any (from any thread but its own)."""
    thread = _thread
    if thread is not None and thread is not threading.current_thread():
        thread.join()


def warmed() -> set[str]:
    """The folders the warm-up refreshed without a problem, once it is done (this waits for it:
    the caller need not `settle` first), handed over once (later calls get none: only the
    resolution that follows the warm-up may skip their check)."""
    global _warmed
    settle()
    folders, _warmed = _warmed, set()
    return folders


def _refresh(cwd: str) -> None:
    try:
        from .cached import catalog_session
        from .index import refresh
        from .listing import Scope

        problems: list[str] = []  # said by the listing that follows, not here
        with catalog_session(problems) as catalog:
            if catalog is not None:
                folders = Scope(cwd).folders
                refresh(catalog, folders, problems=problems)
                if not problems:
                    _warmed.update(folders)
    except Exception:
        return
