"""`commandcode bench`: measure session load times on this machine, on a generated session.

Generates a realistic long-lived session of the asked size (deterministic seed, progress bar),
then measures, as whole processes: the `wc -l` floor, a cold open-to-context with no index
(`COMMANDCODE_INDEX=off`), and a warm open through the index sidecar. Prints a table.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

import typer

from ..errors import CommandcodeError, UsageError
from ..present.console import handle_errors, print_json, safe, stdout
from ..storage.regular import open_regular


def _rows(path: Path, home: Path, runs: int) -> list[dict[str, Any]]:
    from ..bench.measure import BYTECODE_ENV, measure_command, open_commands
    from ..config import env

    base = {**BYTECODE_ENV, env.HOME: str(home)}
    floor = measure_command(["wc", "-l", str(path)], runs=runs, warmup=1, name="wc -l (floor)")
    rows = [floor]
    for front, argv in open_commands(sys.executable, str(path)).items():
        rows.append(measure_command(argv, env={**base, env.INDEX: "off"}, runs=runs, warmup=1,
                                    name=f"commandcode {front} cold (no index)", capture=True))
        rows.append(measure_command(argv, env={**base, env.INDEX: None}, runs=runs, warmup=1,
                                    name=f"commandcode {front} warm (index)", capture=True))
    rows.append(measure_command([sys.executable, "-c", "pass"], env=base, runs=runs, warmup=1,
                                name="python -c pass (interpreter start)"))
    for row in rows:
        if row.get("wall_s") and floor.get("wall_s"):
            row["ratio_to_floor"] = round(row["wall_s"] / floor["wall_s"], 2)
    return rows


MIN_SIZE = 10_000
"""The smallest `--size` (bytes): a few whole turns, so every measured command has a session to open."""


@handle_errors
def bench_command(
    size: str = typer.Option("100MB", "--size", help="Session size: 10MB, 1GB, 2GiB, ..."),
    keep: bool = typer.Option(False, "--keep", help="Keep the generated session instead of deleting it."),
    runs: int = typer.Option(3, "--runs", min=1, max=50, help="Measured runs per row (after one warm-up)."),
    directory: Optional[Path] = typer.Option(None, "--dir", help="Where to generate (default: a temp folder)."),
    seed: int = typer.Option(1, "--seed", help="Generator seed."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Generate a session of --size and time cold and warm opens against the `wc -l` floor."""
    # Imported here: every other command would pay for them at start-up.
    from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn
    from rich.table import Table

    from ..bench.generate import generate_session, parse_size

    try:
        size_bytes = parse_size(size)
    except ValueError as error:
        raise UsageError(str(error), hint="sizes look like 10MB, 500MiB or 1GB") from None
    if size_bytes < MIN_SIZE:  # checked before any folder is made
        raise UsageError(f"--size {size} is too small: a bench session needs at least {MIN_SIZE // 1000} kB",
                         hint="sizes look like 10MB, 500MiB or 1GB")
    work = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="commandcode-bench-"))
    created = [work] if directory is None else _missing_folders(work)
    try:
        work.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(work).free
        if free < size_bytes * 2:
            raise CommandcodeError(f"{work} has {free // 2**20} MiB free; the bench needs about "
                                   f"{2 * size_bytes // 2**20} MiB", hint="pass a smaller --size, or --dir on a larger disk")
    except BaseException:
        for folder in created:  # a refused bench leaves no folder behind (only the empty ones it made)
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    try:
        with Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                      TransferSpeedColumn(), transient=True, disable=as_json) as progress:
            task = progress.add_task("generating session", total=size_bytes)
            generated = generate_session(work / "sessions", size_bytes, seed=seed,
                                         progress=lambda written: progress.update(task, completed=written))
        with os.fdopen(open_regular(generated.path), "rb") as handle:  # warm the page cache: we measure parsing, not the disk
            while handle.read(1 << 24):
                pass
        rows = _rows(generated.path, work / "home", runs)
        report = {"file": str(generated.path), "bytes": generated.bytes, "entries": generated.entries,
                  "context_entries": generated.context_entries, "rows": rows}
        if as_json:
            print_json(report)
            return
        table = Table(title=f"{generated.bytes / 1e6:,.0f} MB session, {generated.entries:,} entries "
                            f"(median of {runs} runs, page cache warm)")
        for column in ("what", "wall s", "MB/s", "peak RSS MiB", "× floor"):
            table.add_column(column, justify="left" if column == "what" else "right")
        for row in rows:
            wall = row.get("wall_s")
            table.add_row(safe(row["name"], one_line=True), f"{wall:.3f}" if wall else safe(row.get("error", "failed"), one_line=True),
                          f"{generated.bytes / 1e6 / wall:,.0f}" if wall else "",
                          f"{row['peak_rss_mib']:.0f}" if row.get("peak_rss_mib") else "",
                          f"{row['ratio_to_floor']:.1f}" if row.get("ratio_to_floor") else "")
        stdout.print(table)
        if keep:
            stdout.print(f"kept {safe(generated.path, one_line=True)}")
    finally:
        if not keep:
            shutil.rmtree(work / "sessions", ignore_errors=True)
            shutil.rmtree(work / "home", ignore_errors=True)
            if directory is None:
                shutil.rmtree(work, ignore_errors=True)


def _missing_folders(folder: Path) -> list[Path]:
    """The folders `folder.mkdir(parents=True)` would create, deepest first."""
    missing = []
    while not folder.exists() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    return missing


def register(app: typer.Typer) -> None:
    """Adds `bench` to the main app."""
    app.command("bench")(bench_command)
