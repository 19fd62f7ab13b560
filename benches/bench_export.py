#!/usr/bin/env python3
"""Exporting big sessions, side by side with the floor, in one run.

    .venv/bin/python benches/bench_export.py --work /tmp/ccexport [--sizes 100MB,1GB] [--json OUT]

For each session size (100 MB generated with `commandcode.bench.generate`, seed 1; 1 GB from
`/work/bench/data/1000000000-seed1/` when it is there, else generated too), each row is one
whole `python -m commandcode export SESSION --full` process (the active path through every
compaction, the biggest export there is), timed from start to exit, with its peak RSS from
`wait4`:

1. **floor: cp** — `cp` of the transcript to the same folder: what the disk allows;
2. **jsonl** — the byte copy `commandcode export` makes (corrupt lines left out);
3. **md** and **html** — rendered, with every text through secret redaction and path
   sanitizing (the Rust core's matchers).

MB/s is transcript bytes over wall time. The issue's targets: streamed, peak RSS under 200 MiB
at 1 GB. A second table measures the redaction matcher alone, the Rust core's `regex` against
Python's `re` with the same rule table, over the same lines in the same run: by default the
first 10 MB of lines of the 100 MB session; with `--matchers-on 1GB` every line of the 1 GB
session, streamed (Python's `re` takes about ten minutes there). Both engines must find the
same secrets, rule by rule, or the run fails. Only the matchers:

    .venv/bin/python benches/bench_export.py --work /tmp/ccexport --sizes "" --matchers-on 1GB
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIG = Path("/work/bench/data/1000000000-seed1")
SIZES = {"100MB": 100_000_000, "1GB": 1_000_000_000}


def session_for(size: str, work: Path) -> Path:
    if size == "1GB" and BIG.is_dir():
        return next(path for path in BIG.glob("*.jsonl"))
    folder = work / f"session-{size}"
    found = list(folder.glob("*.jsonl"))
    if found:
        return found[0]
    subprocess.run([sys.executable, "-m", "commandcode.bench.generate", "--out", str(folder), "--size", size,
                    "--seed", "1"], check=True, stdout=subprocess.DEVNULL)
    return next(folder.glob("*.jsonl"))


def timed(command: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of one process."""
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    stderr = process.stderr.read().decode() if process.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{command} failed: {stderr}")
    return elapsed, usage.ru_maxrss * 1024


def bench_exports(sizes: list[str], work: Path) -> list[dict[str, object]]:
    env = {**os.environ, "COMMANDCODE_HOME": str(work / "home"), "COMMANDCODE_INDEX": "off", "NO_COLOR": "1"}
    rows = []
    for size in sizes:
        transcript = session_for(size, work)
        size_bytes = transcript.stat().st_size
        for name, command in (
            ("floor: cp", ["cp", str(transcript), str(work / "copy.jsonl")]),
            ("jsonl", [sys.executable, "-m", "commandcode", "export", str(transcript), "-o", str(work / "out.jsonl")]),
            ("md", [sys.executable, "-m", "commandcode", "export", str(transcript), "--full", "-o", str(work / "out.md")]),
            ("html", [sys.executable, "-m", "commandcode", "export", str(transcript), "--full", "-o",
                      str(work / "out.html")]),
        ):
            seconds, rss = timed(command, env)
            output = work / {"floor: cp": "copy.jsonl", "jsonl": "out.jsonl", "md": "out.md", "html": "out.html"}[name]
            rows.append({"size": size, "row": name, "seconds": round(seconds, 2),
                         "mb_per_s": round(size_bytes / 1e6 / seconds, 1), "peak_rss_mib": round(rss / 2**20, 1),
                         "output_mb": round(output.stat().st_size / 1e6, 1)})
            print(json.dumps(rows[-1]), flush=True)
            output.unlink()
    return rows


def _lines(transcript: Path, limit: int | None) -> Iterator[str]:
    """The transcript's lines (up to about `limit` bytes), read as they are matched."""
    total = 0
    with open(transcript, encoding="utf-8", errors="surrogateescape") as source:
        for line in source:
            if limit is not None and total > limit:
                return
            total += len(line)
            yield line


def bench_matchers(work: Path, on: str) -> list[dict[str, object]]:
    """The redaction rule table on the same texts: native `regex` against Python's `re`."""
    from commandcode.export.redact import Redactor

    transcript, limit = (session_for("1GB", work), None) if on == "1GB" else (session_for("100MB", work), 10_000_000)
    if limit is None:
        texts: Iterable[str] | None = None
    else:
        texts = list(_lines(transcript, limit))  # in memory: both engines time the matching only
    rows: list[dict[str, object]] = []
    counts = []
    for engine in ("native", "re"):
        redactor = Redactor(engine=engine)
        total = 0
        started = time.perf_counter()
        for text in texts if texts is not None else _lines(transcript, None):
            total += len(text)
            redactor.redact(text)
        seconds = time.perf_counter() - started
        counts.append(dict(sorted(redactor.counts.items())))
        rows.append({"engine": engine, "on": str(transcript), "mb": round(total / 1e6, 1), "seconds": round(seconds, 2),
                     "mb_per_s": round(total / 1e6 / seconds, 1), "found": redactor.total})
        print(json.dumps(rows[-1]), flush=True)
    if counts[0] != counts[1]:
        raise SystemExit(f"the engines disagree: native {counts[0]}, re {counts[1]}")
    ratio = float(rows[1]["seconds"]) / float(rows[0]["seconds"])  # type: ignore[arg-type]
    print(json.dumps({"native_speedup_over_re": round(ratio, 1), "found_by_rule": counts[0]}), flush=True)
    rows.append({"engine": "ratio re/native", "seconds": round(ratio, 1)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--sizes", default="100MB,1GB")
    parser.add_argument("--no-matchers", action="store_true", help="skip the native-against-re table")
    parser.add_argument("--matchers-on", choices=("10MB", "1GB"), default="10MB",
                        help="the matchers' text: the first 10 MB of the 100 MB session, or all of the 1 GB one")
    parser.add_argument("--json", type=Path)
    options = parser.parse_args()
    options.work.mkdir(parents=True, exist_ok=True)
    sizes = [size for size in options.sizes.split(",") if size]
    unknown = [size for size in sizes if size not in SIZES]
    if unknown:
        raise SystemExit(f"unknown sizes {unknown}; use {', '.join(SIZES)}")
    result = {"exports": bench_exports(sizes, options.work),
              "matchers": [] if options.no_matchers else bench_matchers(options.work, options.matchers_on)}
    if options.json:
        options.json.write_text(json.dumps(result, indent=2) + "\n")
    shutil.rmtree(options.work / "home", ignore_errors=True)


if __name__ == "__main__":
    main()
