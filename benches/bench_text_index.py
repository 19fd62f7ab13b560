#!/usr/bin/env python3
"""The search's text index, side by side with today's catalog (a baseline install of 55fdfa8) and
ripgrep, in one run (whole processes; page cache warm).

    python benches/bench_text_index.py [--data /work/bench-cs] [--baseline /work/baseline/.venv/bin/python]
        [--big 1GB] [--search-sessions 1000] [--search-bytes 500MB] [--runs 5] [--skip-big] [--skip-search] [--json OUT]

Corpora are `benches/bench_catalog.py`'s (generated with `commandcode.bench.generate` when
missing). Rows:

1. Cold text index of the **big** session (no catalog): the background indexer
   (`python -m commandcode.catalog.text_index PATH`) against today's `doctor --reindex` (which
   reads the text in Python into a content-holding FTS5 table): seconds, MB/s, peak RSS, and the
   catalog's size as a share of the transcript bytes. Target: 10 s (100 MB/s), 200 MiB, 25%.
2. `sessions search QUERY --json --limit 20` over **search**, the catalog warm, against today's
   warm search and `rg -i -c QUERY` over the same transcripts. Target: 100 ms.

Each side has its own data dir (the transcripts hard-linked), so neither reads the other's catalog.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_catalog import _env, _in, corpus
from commandcode.bench.generate import parse_size
from commandcode.bench.measure import measure_command

PY = sys.executable
QUERY = "def __init__"
# The first pass alone (user, assistant and tool-call texts: what a search without --deep needs).
TEXT_PASS = """
import sys
from commandcode.catalog import db, text_index
with db.open_catalog() as catalog:
    text_index.prepare(catalog.connection)
    text_index.build(catalog.connection, text_index.states(catalog.connection, sys.argv[1:]))
"""


def _linked_home(home: Path, name: str, *, fresh: bool = True) -> Path:
    """A data dir beside `home` whose projects are hard links of `home`'s, and no catalog (unless
    not `fresh`)."""
    other = home.parent / name
    if not (other / "projects").exists():
        shutil.rmtree(other, ignore_errors=True)
        shutil.copytree(home / "projects", other / "projects", copy_function=os.link)
    for suffix in ("", "-wal", "-shm", ".text-lock") if fresh else ():
        (other / f"catalog.sqlite3{suffix}").unlink(missing_ok=True)
    return other


def _catalog_bytes(home: Path) -> int:
    return sum((home / f"catalog.sqlite3{suffix}").stat().st_size for suffix in ("", "-wal")
               if (home / f"catalog.sqlite3{suffix}").exists())


def _cold(label: str, argv: list[str], home: Path, cwd: Path, size: int) -> dict[str, object]:
    began = time.perf_counter()
    row = measure_command(_in(cwd, argv), _env(home), runs=1, warmup=0, name=label)
    row["elapsed_s"] = round(time.perf_counter() - began, 2)
    catalog = _catalog_bytes(home)
    wall = row["wall_s"] if isinstance(row["wall_s"], float) else float("nan")
    row.update(mb_per_s=round(size / 1e6 / wall, 1), catalog_bytes=catalog, catalog_share=round(catalog / size, 3))
    print(f"  {label:34} {wall:7.1f} s = {size / 1e6 / wall:6.1f} MB/s, peak {row['peak_rss_mib']} MiB, "
          f"catalog {catalog / 1e6:.0f} MB = {100 * catalog / size:.0f}% of the transcript")
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/work/bench-cs"))
    parser.add_argument("--baseline", default="/work/baseline/.venv/bin/python")
    parser.add_argument("--big", type=parse_size, default=parse_size("1GB"))
    parser.add_argument("--search-sessions", type=int, default=1_000)
    parser.add_argument("--search-bytes", type=parse_size, default=parse_size("500MB"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-big", action="store_true")
    parser.add_argument("--skip-search", action="store_true", help="the cold big build only")
    parser.add_argument("--warm-only", action="store_true", help="search rows only, on the catalogs a run left")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    # Both sides run from cached bytecode: the baseline's site-packages has it, and an editable
    # install left under PYTHONDONTWRITEBYTECODE would compile every module on every run (~50 ms).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    report: dict[str, object] = {}
    print(f"load average {' '.join(f'{value:.1f}' for value in os.getloadavg())} on {os.cpu_count()} CPUs")
    bare = measure_command([PY, "-c", "pass"], runs=args.runs)
    print(f"interpreter start: {bare['wall_s'] * 1000:.1f} ms")

    if not args.skip_big:
        home, cwd = corpus(args.data, "big", 1, args.big, seed=7)
        transcript = next((home / "projects").rglob("*.jsonl"))
        size = transcript.stat().st_size
        print(f"\ncold text index, one session of {size / 1e6:.0f} MB (target 10 s, 200 MiB, catalog under 25%)")
        ours = _linked_home(home, "home-ours")
        theirs = _linked_home(home, "home-baseline")
        own = str(ours / transcript.relative_to(home))
        mine = _cold("text pass (this branch)", [PY, "-c", TEXT_PASS, own], ours, cwd, size)
        rest = _cold("+ tool-results pass (background)", [PY, "-m", "commandcode.catalog.text_index", own], ours, cwd,
                     size)
        mine["results_pass"] = rest
        today = _cold("doctor --reindex (55fdfa8)", [args.baseline, "-m", "commandcode", "doctor", "--reindex"],
                      theirs, cwd, size)
        started = time.perf_counter()
        subprocess.run(["rg", "-c", "-i", QUERY, str(transcript)], stdout=subprocess.DEVNULL, check=False)
        rg_s = time.perf_counter() - started
        print(f"  {'rg -c -i (one pass, for scale)':34} {rg_s:7.2f} s")
        if isinstance(mine["wall_s"], float) and isinstance(today["wall_s"], float):
            print(f"  ratio: text pass {today['wall_s'] / mine['wall_s']:.1f}x faster, both passes "
                  f"{today['wall_s'] / (mine['wall_s'] + float(rest['wall_s'] or 'nan')):.1f}x faster; catalog "
                  f"{today['catalog_bytes'] / max(1, int(mine['catalog_bytes'])):.1f}x smaller")  # type: ignore[arg-type]
        report["cold_big"] = {"ours": mine, "baseline": today, "rg_s": round(rg_s, 3)}

    if args.skip_search:
        if args.json:
            args.json.write_text(json.dumps(report, indent=2))
        return 0
    home, cwd = corpus(args.data, "search", args.search_sessions, args.search_bytes, seed=100)
    ours = _linked_home(home, "home-ours", fresh=not args.warm_only)
    theirs = _linked_home(home, "home-baseline", fresh=not args.warm_only)
    size = sum(path.stat().st_size for path in (home / "projects").rglob("*.jsonl"))
    search = ["sessions", "search", QUERY, "--json", "--limit", "20"]
    print(f"\nsessions search {QUERY!r}, {args.search_sessions} sessions, {size / 1e6:.0f} MB, warm (target 100 ms)")
    if not args.warm_only:
        print("  first contact (builds each side's catalog):")
        _cold("search, cold (this branch)", [PY, "-m", "commandcode", *search], ours, cwd, size)
        _cold("search, cold (55fdfa8)", [args.baseline, "-m", "commandcode", *search], theirs, cwd, size)
        paths = [str(path) for path in (ours / "projects").rglob("*.jsonl")]
        _cold("background indexer finishing", [PY, "-m", "commandcode.catalog.text_index", *paths], ours, cwd, size)
    folder = next((home / "projects").iterdir())
    rows = {
        "this branch, warm": measure_command(_in(cwd, [PY, "-m", "commandcode", *search]), _env(ours), runs=args.runs),
        "55fdfa8, warm": measure_command(_in(cwd, [args.baseline, "-m", "commandcode", *search]), _env(theirs),
                                         runs=args.runs),
        "rg -i -c": measure_command(["rg", "-i", "-c", QUERY, str(folder)], runs=args.runs),
    }
    start = bare["wall_s"]
    for label, row in rows.items():
        wall = row["wall_s"]
        text = f"{wall * 1000:8.1f} ms ({(wall - start) * 1000:7.1f} ms over start-up)" if isinstance(wall, float) \
            else f"failed: {row.get('error')}"
        print(f"  {label:34} {text}")
    same = [json.loads(subprocess.run(_in(cwd, [py, "-m", "commandcode", *search]), capture_output=True, text=True,
                                      env={**os.environ, **{k: v for k, v in _env(h).items() if v}}).stdout or "[]")
            for py, h in ((PY, ours), (args.baseline, theirs))]
    overlap = {(hit["session_id"], hit["entry_id"]) for hit in same[0]} & {(hit["session_id"], hit["entry_id"])
                                                                           for hit in same[1]}
    print(f"  hits: {len(same[0])} here, {len(same[1])} on 55fdfa8, {len(overlap)} the same")
    report["search"] = rows
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
