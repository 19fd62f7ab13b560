#!/usr/bin/env python3
"""Forking a 1 GB session, side by side with copying its file, in one run.

    .venv/bin/python benches/bench_fork.py [--size 1GB] [--seed 1] [--data /work/bench/data] \\
        [--work /tmp/ccfork] [--runs 3] [--json OUT]

The generated session (`compare_open.session_for`, the same file the open benchmarks use) is
hard-linked into `--work/src/` (never written: every row only reads it), and each row writes its
copy into `--work/`, which is removed after every run; the page cache is warm for all rows. Rows,
each a whole process, median wall time and peak RSS (`commandcode.bench.measure`):

1. **commandcode fork**: `python -m commandcode sessions fork SRC --json` — a fresh header, the
   body copied by the kernel (`copy_file_range`) around skipped lines, checkpoints, meta, and an
   fsync of the new transcript (the index sidecar of the source is warm);
2. **cp --reflink=auto**: the byte copy of the file (the issue's target: within 1.5× of it);
3. **cp --reflink=auto + sync FILE**: the same made durable, as our fork is;
4. **line-by-line parse copy** (the real CLI's way, ref §8): every line parsed, `sessionId`
   added, re-serialised and written (`--line-copy SRC DST`, stdlib `json`).

The issue's other target: the fork's peak RSS under 100 MiB.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

BENCHES = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHES))

from commandcode.bench.measure import measure_command


def linked_session(size: str, seed: int, data: Path, work: Path) -> tuple[Path, dict[str, object], Path]:
    """The benchmark session hard-linked into `work/src/` (a copy where links are refused), its
    manifest, and the data dir the benches use for it (`work/home`, where its index sidecar lives)."""
    from compare_open import session_for

    transcript, info = session_for(size, seed, data)
    source = work / "src" / transcript.name
    source.parent.mkdir(parents=True, exist_ok=True)
    if not source.exists() or source.stat().st_size != transcript.stat().st_size:
        source.unlink(missing_ok=True)
        try:
            os.link(transcript, source)
        except OSError:
            shutil.copyfile(transcript, source)
    return source, info, work / "home"


def session_options(parser: argparse.ArgumentParser) -> None:
    """The options that pick the benchmark session and where it is linked (shared with
    `bench_tree_screen.py`)."""
    parser.add_argument("--size", default="1GB")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data", type=Path, default=Path("/work/bench/data"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/ccfork"), help="where the session is linked")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)


def line_copy(source: str, target: str) -> None:
    new_id = "00000000-0000-4000-8000-000000000000"
    with open(source, "rb") as reader, open(target, "wb") as writer:
        for raw in reader:
            try:
                value = json.loads(raw)
            except ValueError:
                writer.write(raw)
                continue
            if isinstance(value, dict):
                value["sessionId"] = new_id
            writer.write(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    session_options(parser)
    parser.add_argument("--line-copy", nargs=2, metavar=("SRC", "DST"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.line_copy:
        line_copy(*args.line_copy)
        return 0
    source, info, home = linked_session(args.size, args.seed, args.data, args.work.resolve())
    env = {"COMMANDCODE_HOME": str(home), "COMMANDCODE_INDEX": None}
    measure_command([sys.executable, "-c", f"from commandcode import open_session; open_session({str(source)!r})"],
                    env, runs=1, warmup=0)  # the index sidecar, warm
    with open(source, "rb") as handle:  # the page cache, warm
        while handle.read(1 << 24):
            pass
    target = source.parent / "copy.jsonl"
    rows = {
        "commandcode sessions fork": [sys.executable, "-m", "commandcode", "sessions", "fork", str(source), "--json"],
        "cp --reflink=auto": ["cp", "--reflink=auto", str(source), str(target)],
        "cp --reflink=auto + sync FILE": ["sh", "-c", f"cp --reflink=auto '{source}' '{target}' && sync '{target}'"],
        "line-by-line parse copy (real CLI)": [sys.executable, __file__, "--line-copy", str(source), str(target)],
    }
    results = []
    for name, argv in rows.items():
        runs = []
        for _ in range(args.runs):
            runs.append(measure_command(argv, env, runs=1, warmup=0, name=name, capture=True))
            _clean(source)
        walls = sorted(run["wall_s"] for run in runs if run["wall_s"] is not None)
        rss = sorted(run["peak_rss_mib"] for run in runs if run["peak_rss_mib"] is not None)
        errors = [run["error"] for run in runs if "error" in run]
        results.append({"name": name, "wall_s": walls[len(walls) // 2] if walls else None,
                        "peak_rss_mib": rss[len(rss) // 2] if rss else None, "errors": errors})
    base, durable = results[1]["wall_s"], results[2]["wall_s"]
    print(f"session: {info['bytes']:,} bytes, {info['entries']:,} entries; {args.runs} runs each, medians")
    print("| row | wall (s) | × cp | × cp + sync | peak RSS (MiB) |\n|---|---|---|---|---|")
    for row in results:
        ratio = f"{row['wall_s'] / base:.2f}" if row["wall_s"] and base else "—"
        ratio_durable = f"{row['wall_s'] / durable:.2f}" if row["wall_s"] and durable else "—"
        print(f"| {row['name']} | {row['wall_s']} | {ratio} | {ratio_durable} | {row['peak_rss_mib']} |" +
              (f" error: {row['errors'][0]}" if row["errors"] else ""))
    if args.json:
        args.json.write_text(json.dumps({"session": info, "runs": args.runs, "rows": results}, indent=2) + "\n")
    return 0


def _clean(source: Path) -> None:
    """Removes every file a row wrote beside the source (a fork's transcript, meta, checkpoints, a copy)."""
    for path in source.parent.iterdir():
        if path != source:
            path.unlink()


if __name__ == "__main__":
    raise SystemExit(main())
