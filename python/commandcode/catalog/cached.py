"""Listing rows from the catalog, and the one way a front end opens it (`catalog_session`).

`catalog_session(problems)` opens the catalog or, when it cannot be used, adds one warning to
`problems` and returns None: the caller then scans the folders. Errors in the middle of a
refresh or a query are caught the same way, so a locked, damaged or truncated catalog never fails
a listing. A cold build with a `progress` callback reports bytes done and total, and `on_built`
gets the refresh report (the CLI prints the rate).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from .db import Catalog, CatalogUnavailable, describe, open_catalog
from .index import Progress, RefreshReport, refresh, related, rows_in
from .summary import SessionSummary, with_lineage

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    from .listing import Scope

FALLBACK = "; listing by scanning the project folders instead"
Built = Callable[[RefreshReport, float], None]
Counted = Callable[[SessionSummary], bool]

_progress: Progress | None = None
_on_built: Built | None = None
_resolving: set[str] | None = None
"""Inside `one_refresh()`: the folders whose rows are current for the resolution under way."""


def set_reporting(progress: Progress | None, on_built: Built | None) -> None:
    """How refreshes in this process report a long build (the CLI's progress bar and rate line)."""
    global _progress, _on_built
    _progress, _on_built = progress, on_built


@contextmanager
def catalog_session(problems: list[str]) -> Iterator[Catalog | None]:
    """The open catalog, or None (with a warning in `problems`) when it cannot be used; after a
    warm-up under way is done (`warmup.settle`)."""
    from .warmup import settle

    settle()
    try:
        catalog = open_catalog()
    except CatalogUnavailable as error:
        problems.append(f"the session catalog cannot be used: {error}{FALLBACK}")
        yield None
        return
    try:
        yield catalog
    finally:
        catalog.close()


@contextmanager
def one_refresh() -> Iterator[None]:
    """One resolution that lists the same folders more than once (`-c -p`: the newest headless
    session, else the newest interactive one): inside it each folder's rows are brought up to
    date once, and not at all when this launch's warm-up (`warmup.py`) has just done it. The
    rows are then those of the moment the first check looked at the files, as for a resolution
    that lists once; later listings of the process check again."""
    global _resolving
    from .warmup import warmed

    outer = _resolving
    # the outermost resolution waits for the warm-up once, in `warmed`; an inner one is past it
    _resolving = warmed() if outer is None else outer
    try:
        yield
    finally:
        _resolving = outer


def refreshed(catalog: Catalog, folders: list[str], problems: list[str]) -> None:
    """Refreshes the rows of `folders` (those `one_refresh` does not know current), reporting a
    build that read anything through the hooks set. It never reads searchable text: that is the
    search's text index (`text_index.py`)."""
    resolving = _resolving
    if resolving is not None:
        folders = [folder for folder in folders if folder not in resolving]
        if not folders:
            return
    started = time.perf_counter()
    report = refresh(catalog, folders, problems=problems, progress=_progress)
    if (report.changed or report.bytes_read) and _on_built is not None:
        _on_built(report, time.perf_counter() - started)
    if resolving is not None:
        resolving.update(folders)


def catalog_rows(scope: Scope, *, headless: bool | Literal["only"], branch: str | None, limit: int | None,
                 problems: list[str], counted: Counted | None = None) -> list[SessionSummary] | None:
    """The listing from the catalog (refreshed first), or None when the catalog cannot be used.
    Rows are read newest first and only until `limit` rows (of those `counted` accepts, when
    given) are kept: `-c` reads the rows down to the first it can resume, not all of them."""
    with catalog_session(problems) as catalog:
        if catalog is None:
            return None
        try:
            refreshed(catalog, scope.folders, problems)
            kept: list[SessionSummary] = []
            found = 0
            for summary in rows_in(catalog, scope.folders, headless=headless, branch=branch):
                unopened = summary.damaged is not None and not summary.cwd
                if unopened:
                    problems.append(f"{summary.path}: {summary.damaged}")
                if unopened or scope.keeps(summary):
                    kept.append(summary)
                    if limit is not None and counted is not None and not counted(summary):
                        continue
                    found += 1
                    if limit is not None and found >= limit:
                        break
            parents = {summary.parent_session_id for summary in kept if summary.parent_session_id}
            return with_lineage(kept, related(catalog, parents))
        except sqlite3.Error as error:
            problems.append(f"the session catalog cannot be used: {catalog.path}: {describe(error)}{FALLBACK}")
            return None


def _index_texts(catalog: Catalog, folders: list[str], progress: Progress | None) -> int:
    """The search's text index of every transcript of `folders`, built whole (`doctor --reindex`);
    the bytes read. Without FTS5 there is none: searches scan natively."""
    if not catalog.fts:
        return 0
    from . import text_index

    paths = [summary.path for summary in rows_in(catalog, folders, headless=True)]
    descriptor = text_index.lock(catalog.path, wait=True)
    if descriptor is None:
        return 0
    try:
        text_index.prepare(catalog.connection)
        files = text_index.states(catalog.connection, paths)
        read = text_index.build(catalog.connection, files, progress=progress)
        return read + text_index.build(catalog.connection, files, results=True, progress=progress)
    finally:
        os.close(descriptor)


def reindex(progress: Progress | None = None) -> tuple[str, RefreshReport, float, bool]:
    """Deletes the catalog and builds it again from every project folder: (its path, the build's
    report, seconds, whether it has FTS5).

    Raises:
        CatalogUnavailable: it cannot be rebuilt (a directory in its place, locked, no space).
    """
    from ..config.paths import projects_dir
    from .db import remove_catalog

    path = remove_catalog()
    folders = []
    try:
        folders = sorted(entry.path for entry in os.scandir(projects_dir()) if entry.is_dir())
    except FileNotFoundError:
        pass
    started = time.perf_counter()
    problems: list[str] = []
    catalog = open_catalog()
    try:
        report = refresh(catalog, folders, problems=problems, progress=progress)
        report.bytes_read = _index_texts(catalog, folders, progress)
        report.problems = problems
        return path, report, time.perf_counter() - started, catalog.fts
    except sqlite3.Error as error:
        raise CatalogUnavailable(f"{path}: {describe(error)}") from None
    finally:
        catalog.close()
