#!/usr/bin/env python3
"""How a redo point's 1,000 new files are best made durable: one `syncfs`, or a flush per file.

    python benches/bench_flush.py --dir DIR [--files 1000] [--kib 32] [--runs 5] [--dirty-mib 1024]
                                  [--only syncfs,fdatasync,range,parallel]

A rewind's redo point (`rust/src/store/batch.rs`) and its commit (`restore/apply.rs`) flush with
`syncfs`: one call, but it writes out every dirty page of the whole file system, so a rewind pays
for other programs' unwritten data (a build's output, a fresh fork's deferred body). The
alternative is to flush only the files written: `fdatasync` each, or `sync_file_range(WRITE)` on
all of them first (the writeback of all starts at once) and then `fdatasync` each (`range`), on
16 threads (`parallel`: concurrent fdatasyncs may share one journal commit); the names then
need an `fsync` of each folder they were renamed in.

Each run writes `--files` new files of `--kib` KiB into 256 fan-out folders under `--dir`, as a
batch of objects does (temp names, renamed after the data flush), and times only the flush: data
flush, renames, names flush. Every strategy runs in every run, in rotating order, under two
conditions: `quiet` (the file system was synced just before) and `dirty` (a `--dirty-mib` file
was written just before, without a sync, as `dd` does). Prints the median milliseconds per
strategy and condition, and each one's ratio to `syncfs` in the same condition. `--dir` must be
on the file system under test (the data dir's).
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import os
import shutil
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
SYNC_FILE_RANGE_WRITE = 2


def syncfs(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if _libc.syncfs(fd) != 0:
            raise OSError(ctypes.get_errno(), "syncfs")
    finally:
        os.close(fd)


def start_writeback(fd: int) -> None:
    if _libc.sync_file_range(fd, ctypes.c_int64(0), ctypes.c_int64(0), SYNC_FILE_RANGE_WRITE) != 0:
        raise OSError(ctypes.get_errno(), "sync_file_range")


def write_batch(root: Path, files: int, size: int, run: int) -> list[tuple[Path, Path]]:
    """`files` new temp files of `size` bytes (each distinct) in fan-out folders; their final names."""
    pairs = []
    for number in range(files):
        folder = root / f"{number % 256:02x}"
        folder.mkdir(parents=True, exist_ok=True)
        temp, final = folder / f"{run}-{number}.cctmp", folder / f"{run}-{number}"
        head = f"{run} {number}\n".encode()
        temp.write_bytes(head + os.urandom(64) * ((size - len(head)) // 64))
        pairs.append((temp, final))
    return pairs


def rename_all(pairs: list[tuple[Path, Path]]) -> None:
    for temp, final in pairs:
        os.rename(temp, final)


def fsync_folders(pairs: list[tuple[Path, Path]]) -> None:
    for folder in sorted({final.parent for _, final in pairs}):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def by_syncfs(root: Path, pairs: list[tuple[Path, Path]]) -> None:
    syncfs(root)
    rename_all(pairs)
    syncfs(root)


def by_fdatasync(root: Path, pairs: list[tuple[Path, Path]], start_first: bool = False, threads: int = 1) -> None:
    fds = []
    try:
        for temp, _ in pairs:
            fds.append(os.open(temp, os.O_RDONLY))
            if start_first:
                start_writeback(fds[-1])
        if threads > 1:  # concurrent fdatasyncs share journal commits
            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(os.fdatasync, fds))
        else:
            for fd in fds:
                os.fdatasync(fd)
    finally:
        for fd in fds:
            os.close(fd)
    rename_all(pairs)
    fsync_folders(pairs)


STRATEGIES: dict[str, Callable[[Path, list[tuple[Path, Path]]], None]] = {
    "syncfs": by_syncfs,
    "fdatasync": by_fdatasync,
    "range": lambda root, pairs: by_fdatasync(root, pairs, start_first=True),
    "parallel": lambda root, pairs: by_fdatasync(root, pairs, start_first=True, threads=16),
}


def dirty(path: Path, mib: int) -> None:
    """A `mib` MiB file written and not synced (as `dd` without `conv=fsync` leaves it)."""
    block = os.urandom(1 << 20)
    with path.open("wb") as file:
        for _ in range(mib):
            file.write(block)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--kib", type=int, default=32)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dirty-mib", type=int, default=1024)
    parser.add_argument("--only", default=",".join(STRATEGIES))
    arguments = parser.parse_args()
    names = arguments.only.split(",")
    figures: dict[tuple[str, str], list[float]] = {}
    base = arguments.dir / "bench-flush"
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    for run in range(arguments.runs):
        order = names[run % len(names):] + names[:run % len(names)]
        for condition in ("quiet", "dirty"):
            for name in order:
                root = base / f"{name}-{condition}-{run}"
                big = base / "dirty.bin"
                os.sync()
                if condition == "dirty":
                    dirty(big, arguments.dirty_mib)
                pairs = write_batch(root, arguments.files, arguments.kib << 10, run)
                start = time.perf_counter()
                STRATEGIES[name](root, pairs)
                figures.setdefault((name, condition), []).append((time.perf_counter() - start) * 1000)
                print(run, condition, name, f"{figures[name, condition][-1]:.1f} ms", flush=True)
                shutil.rmtree(root)
                big.unlink(missing_ok=True)
    for condition in ("quiet", "dirty"):
        reference = statistics.median(figures.get(("syncfs", condition), [float("nan")]))
        for name in names:
            values = figures[name, condition]
            median = statistics.median(values)
            print(f"{condition:5} {name:9} median {median:8.1f} ms (spread {min(values):.0f}-{max(values):.0f}), "
                  f"x syncfs {median / reference:.2f}")
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
