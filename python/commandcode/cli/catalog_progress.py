"""How the CLI shows a catalog build: a rich progress bar on a terminal while many bytes are read,
then one line with the rate. Nothing is drawn when stderr is not a terminal (scripts, tests), so
the output of `--json` runs stays exactly the data."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..catalog.index import RefreshReport

BAR_FROM_BYTES = 32 << 20


class _Bar:
    """A progress bar started on the first report of a large build."""

    def __init__(self) -> None:
        self._progress: object | None = None
        self._task: object | None = None

    def update(self, done: int, total: int) -> None:
        if total < BAR_FROM_BYTES:
            return
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

        if self._progress is None:
            progress = Progress("indexing sessions", BarColumn(), DownloadColumn(), TransferSpeedColumn(),
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
        from .output import stderr

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
