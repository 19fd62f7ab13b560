"""How the CLI shows a catalog build: a rich progress bar on a terminal while many bytes are read,
then one line with the rate. Nothing is drawn when stderr is not a terminal (scripts, tests), so
the output of `--json` runs stays exactly the data."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..catalog.index import RefreshReport

BAR_FROM_BYTES = 32 << 20


class _Bar:
    """A progress bar started on the first report of a large build."""

    def __init__(self, label: str = "indexing sessions") -> None:
        self._progress: object | None = None
        self._task: object | None = None
        self._label = label

    def update(self, done: int, total: int) -> None:
        if total < BAR_FROM_BYTES:
            return
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

        if self._progress is None:
            progress = Progress(self._label, BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                                console=Console(stderr=True), transient=True)
            progress.start()
            self._progress, self._task = progress, progress.add_task("index", total=total)
        self._progress.update(self._task, completed=done)  # type: ignore[attr-defined]
        if done >= total:
            self._progress.stop()  # type: ignore[attr-defined]

    def built(self, report: RefreshReport, seconds: float) -> None:
        if self._progress is not None:
            self._progress.stop()  # type: ignore[attr-defined]
        if report.bytes_read < BAR_FROM_BYTES:
            return
        from ..present.console import stderr

        megabytes = report.bytes_read / 1e6
        stderr.print(f"indexed {report.changed} session(s), {megabytes:.1f} MB in {seconds:.1f} s "
                     f"({megabytes / max(seconds, 1e-9):.1f} MB/s)", markup=False, highlight=False)


def report_builds(*, always: bool = False) -> None:
    """Shows large catalog builds of this process on stderr (only on a terminal, unless `always`)."""
    if not always and not sys.stderr.isatty():
        return
    from ..catalog.cached import set_reporting

    bar = _Bar()
    set_reporting(bar.update, bar.built)


def text_index_progress() -> tuple[Callable[[int, int], None], Callable[[], None]] | None:
    """`(progress, finish)` for a search that builds its text index: a bar with its rate while a
    large build runs, then one line with the rate (only on a terminal); None elsewhere."""
    if not sys.stderr.isatty():
        return None
    import time

    bar = _Bar("indexing text for search")
    started = time.perf_counter()
    seen = [0]

    def progress(done: int, total: int) -> None:
        seen[0] = done
        bar.update(done, total)

    def finish() -> None:
        if bar._progress is not None:
            bar._progress.stop()  # type: ignore[attr-defined]
        if seen[0] < BAR_FROM_BYTES:
            return
        from ..present.console import stderr

        seconds = time.perf_counter() - started
        stderr.print(f"indexed {seen[0] / 1e6:.1f} MB of text for search in {seconds:.1f} s "
                     f"({seen[0] / 1e6 / max(seconds, 1e-9):.1f} MB/s)", markup=False, highlight=False)

    return progress, finish
