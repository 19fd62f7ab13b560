#!/usr/bin/env python3
"""Generates a synthetic project for the checkpoint benchmarks: by default 5,000 files and
100 MiB of real source text taken from this Python's standard library and installed packages
(site-packages; the stdlib alone holds too few files), plus any `--src` folders.

    python benches/make_project.py --out DIR [--files 5000] [--mib 100] [--seed 1] [--src DIR ...]

About 99% of the files are real stdlib files under 256 KiB, copied into a `src/`, `lib/`,
`tests/`, `docs/` … tree; the remaining bytes go into the last ~1% as larger files (vendored
bundles, fixtures, lockfiles) made by concatenating other stdlib files, so the size mix looks
like a real repository (median ~1-2 KB, a few files of 0.5-2 MiB). The output is the same for
the same seed and Python. Prints a JSON summary (files, bytes, unique bytes).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sysconfig
from pathlib import Path

SOURCE_SUFFIXES = {".py", ".txt", ".rst", ".json", ".c", ".h", ".html", ".css", ".js", ".toml", ".cfg", ".xml"}
SMALL_FILE_LIMIT = 256 << 10
TOP_FOLDERS = ["src", "lib", "tests", "docs", "packages/core", "packages/cli", "tools", "examples"]
BIG_FOLDERS = ["vendor", "fixtures", "assets"]


def source_files(root: Path) -> list[tuple[Path, int]]:
    """Regular, non-empty stdlib files under the size limit, in a stable order."""
    found = []
    for folder, folders, names in os.walk(root):
        folders[:] = sorted(name for name in folders if name not in {"__pycache__", "site-packages"})
        for name in sorted(names):
            path = Path(folder) / name
            if path.suffix not in SOURCE_SUFFIXES or path.is_symlink():
                continue
            size = path.stat().st_size
            if 0 < size <= SMALL_FILE_LIMIT:
                found.append((path, size))
    return found


def default_sources() -> list[Path]:
    """The stdlib and site-packages folders of the running Python."""
    paths = sysconfig.get_paths()
    return sorted({Path(paths[key]) for key in ("stdlib", "purelib", "platlib") if Path(paths[key]).is_dir()})


def generate(out: Path, files: int, mib: float, seed: int, sources: list[Path]) -> dict[str, int | str]:
    """Writes the project under `out`; returns a summary."""
    rng = random.Random(seed)
    pool = [entry for root in sources for entry in source_files(root)]
    rng.shuffle(pool)
    target_bytes = int(mib * (1 << 20))
    small_count = int(files * 0.99)
    written = total = 0
    digests: set[str] = set()
    unique = 0
    used: set[str] = set()

    def put(relative: str, data: bytes) -> None:
        nonlocal written, total, unique
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written += 1
        total += len(data)
        digest = hashlib.sha256(data).hexdigest()
        if digest not in digests:
            digests.add(digest)
            unique += len(data)

    cursor = 0
    while written < small_count and cursor < len(pool):
        path, _ = pool[cursor]
        cursor += 1
        relative = os.path.join(rng.choice(TOP_FOLDERS), *path.parts[-4:])
        if relative in used:
            continue
        used.add(relative)
        put(relative, path.read_bytes())
    remaining = pool[cursor:] or pool
    big_count = max(1, files - written)
    index = 0
    for number in range(big_count):
        want = max(64 << 10, (target_bytes - total) // (big_count - number))
        chunks, got = [], 0
        while got < want:
            data = remaining[index % len(remaining)][0].read_bytes()
            index += 1
            chunks.append(data)
            got += len(data)
        suffix = rng.choice([".json", ".js", ".txt"])
        put(f"{rng.choice(BIG_FOLDERS)}/bundle_{number:03d}{suffix}", b"".join(chunks)[:want])
    return {"out": str(out), "files": written, "bytes": total, "unique_bytes": unique}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--mib", type=float, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--src", type=Path, action="append", default=[], help="extra source folders")
    arguments = parser.parse_args()
    if arguments.out.exists() and any(arguments.out.iterdir()):
        parser.error(f"{arguments.out} is not empty")
    print(json.dumps(generate(arguments.out, arguments.files, arguments.mib, arguments.seed, default_sources() + arguments.src)))


if __name__ == "__main__":
    main()
