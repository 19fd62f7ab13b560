#!/usr/bin/env python3
"""The session catalog, side by side with a folder scan and with reading every file whole, in one run.

    python benches/bench_catalog.py [--data /work/bench/catalog-data] [--sessions 10000]
        [--search-sessions 1000] [--search-bytes 500MB] [--big 1GB] [--runs 5] [--json OUT]

Corpora (generated once with `commandcode.bench.generate`, kept under `--data`, never in the repo):

- **many**: `--sessions` small sessions in one project (a few templates copied under new ids);
- **search**: `--search-sessions` sessions holding `--search-bytes` of transcripts together;
- **big**: one session of `--big` bytes (the cold build rate on big transcripts).

Rows (whole processes, median of `--runs` after a warm-up, minus a bare interpreter start):

1. `sessions list --limit 20 --json` over **many**: the catalog warm; today's folder scan
   (`COMMANDCODE_CATALOG=off`, index sidecars warm); every file read whole and parsed (the peers'
   way). The catalog's rows are checked against the folder scan's. Target: 100 ms over start-up.
2. `sessions search QUERY --json` over **search**: the catalog warm (FTS5); the folder scan (every
   transcript's text read); every file read whole and grepped. Target: 100 ms over start-up.
3. Cold builds (`doctor --reindex`): MB/s and sessions/s on **big** and on **many**.
4. Picker first paint with **many**: from spawning a process that opens the picker headless to
   its first frame with rows (the child reports the moment), beside the same with the whole list
   loaded before the screen opens (the previous picker's way) and a bare Textual screen with one
   line of text (the framework's own floor). Target: 300 ms over start-up.

Every row gives wall time and the process's CPU time (the machine may be shared: the load
average is printed with the interpreter start).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
try:
    import commandcode  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT / "python"))

from commandcode.bench.generate import generate_session, parse_size
from commandcode.bench.measure import measure_command

PY = sys.executable
TEMPLATES = 20
QUERY = "def __init__"

READ_WHOLE = """
import json, os, sys
folder, needle = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else None)
rows, hits = [], 0
for name in os.listdir(folder):
    if not name.endswith('.jsonl'):
        continue
    with open(os.path.join(folder, name), 'rb') as handle:
        data = handle.read()
    if needle is not None:
        hits += data.count(needle.encode())
        continue
    entries = [json.loads(line) for line in data.splitlines() if line.strip()]
    rows.append((entries[-1].get('timestamp', ''), name, len(entries)))
rows.sort(reverse=True)
print(json.dumps({'rows': len(rows[:20]), 'hits': hits}))
"""

# Prints when the first frame with session rows was drawn (epoch seconds, and this process's CPU
# seconds until then), then leaves. `--loaded-first` loads the whole list before the screen opens
# (the previous picker's way: the baseline of the first paint).
FIRST_PAINT = """
import os, sys, time
from pathlib import Path
from commandcode.ui.screens.picker_data import FIRST_PAINT, PickerData

if '--bare' not in sys.argv:  # as `pick_session` does: the first screenful is read while Textual loads
    data = PickerData(Path(os.getcwd()))
    if '--loaded-first' in sys.argv:
        data.sessions()
    else:
        data.prefetch(FIRST_PAINT)
from commandcode.ui.app import ScreenApp
from commandcode.ui.screens.picker import PickerScreen


def painted(screen, shown):  # called once the frame drawn by the screen's on_mount is on screen
    screen.app.exit((time.time(), time.process_time(), shown))


if '--bare' in sys.argv:  # the framework's floor: a screen with one line of text, no rows to read
    from textual.screen import Screen
    from textual.widgets import Static

    class Measured(Screen):
        def compose(self):
            yield Static("one line")

        def on_mount(self):
            self.call_after_refresh(painted, self, 1)

    screen = Measured()
else:
    import commandcode.ui.screens.picker as picker

    class Measured(PickerScreen):
        CSS_PATH = str(Path(picker.__file__).with_name("picker.tcss"))  # relative paths need a class in a file

        def on_mount(self):  # Textual calls PickerScreen.on_mount after this one: calling it here drew twice
            self.call_after_refresh(lambda: painted(self, len(self.shown)))

    screen = Measured(data)
painted_at, cpu, shown = ScreenApp(screen).run(headless=True, size=(140, 40))
print('{"painted_at": %r, "cpu_s": %r, "shown": %d}' % (painted_at, cpu, shown))
"""


def first_paint(argv: list[str], env: dict[str, str | None], runs: int) -> dict[str, object]:
    """Median seconds from spawning `argv` to its first frame with rows (and its CPU seconds then)."""
    import statistics
    import subprocess

    full = {key: value for key, value in {**os.environ, **env}.items() if value is not None}
    walls, cpus, shown = [], [], 0
    for run in range(runs + 1):
        began = time.time()
        done = subprocess.run(argv, env=full, capture_output=True, text=True)
        if done.returncode != 0:
            return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
        detail = json.loads(done.stdout.strip().splitlines()[-1])
        if run:  # the first run warms the caches
            walls.append(detail["painted_at"] - began)
            cpus.append(detail["cpu_s"])
            shown = detail["shown"]
    return {"wall_s": round(statistics.median(walls), 4), "cpu_s": round(statistics.median(cpus), 4), "shown": shown}


def _copies(template_dir: Path, folder: Path, count: int, cwd: str) -> None:
    """`count` sessions in `folder`, copies of the templates under new ids, their headers' cwd set."""
    templates = sorted(path for path in template_dir.glob("*.jsonl"))
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(count):
        source = templates[number % len(templates)]
        data = source.read_bytes()
        first, rest = data.split(b"\n", 1)
        header = json.loads(first)
        header["cwd"] = cwd
        session_id = f"{number:08x}-0000-4000-8000-{number:012x}"
        (folder / f"{session_id}.jsonl").write_bytes(json.dumps(header).encode() + b"\n" + rest)
        os.utime(folder / f"{session_id}.jsonl", (1_700_000_000 + number, 1_700_000_000 + number))


def corpus(data: Path, name: str, count: int, total: int, *, seed: int) -> tuple[Path, Path]:
    """(data dir, working directory) of a corpus, generated when missing."""
    from commandcode.config.env import set_home
    from commandcode.config.paths import sessions_folder

    root = data / f"{name}-{count}x{total}"
    home, cwd = root / "home", root / "work"
    done = root / "done"
    if not done.exists():
        shutil.rmtree(root, ignore_errors=True)
        cwd.mkdir(parents=True)
        templates = root / "templates"
        per = max(1, total // count)
        for index in range(min(TEMPLATES, count)):
            generate_session(templates, per, seed=seed + index, cwd=str(cwd), sidecars=False)
        set_home(str(home))
        _copies(templates, Path(sessions_folder(str(cwd))), count, str(cwd.resolve()))
        shutil.rmtree(templates)
        done.write_text("ok")
    return home, cwd


def _env(home: Path, **extra: str) -> dict[str, str | None]:
    env: dict[str, str | None] = {"COMMANDCODE_HOME": str(home), "NO_COLOR": "1", "COMMANDCODE_INDEX": "on"}
    env.update(extra)
    return env


def _in(cwd: Path, argv: list[str]) -> list[str]:
    return ["/bin/sh", "-c", 'cd "$0" && exec "$@"', str(cwd), *argv]


def _over(row: dict[str, object], start: float) -> str:
    wall, cpu = row.get("wall_s"), row.get("cpu_s")
    if not isinstance(wall, float):
        return f"failed: {row.get('error')}"
    cpu_text = f", CPU {cpu * 1000:7.1f} ms" if isinstance(cpu, float) else ""
    return f"{wall * 1000:8.1f} ms  ({(wall - start) * 1000:7.1f} ms over start-up{cpu_text})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/work/bench/catalog-data"))
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--search-sessions", type=int, default=1_000)
    parser.add_argument("--search-bytes", type=parse_size, default=parse_size("500MB"))
    parser.add_argument("--big", type=parse_size, default=parse_size("1GB"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-big", action="store_true", help="no cold build of the big corpus")
    parser.add_argument("--skip-cold", action="store_true", help="no cold builds (the warm-up run builds what is missing)")
    parser.add_argument("--skip-search", action="store_true", help="no search rows (and no search corpus)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    report: dict[str, object] = {}
    many_home, many_cwd = corpus(args.data, "many", args.sessions, args.sessions * 4000, seed=1)
    search_home, search_cwd = (None, None) if args.skip_search else corpus(
        args.data, "search", args.search_sessions, args.search_bytes, seed=100)
    big = [] if args.skip_big or args.skip_cold else [("big", *corpus(args.data, "big", 1, args.big, seed=7))]
    bare = measure_command([PY, "-c", "pass"], runs=args.runs)
    start = bare["wall_s"]
    assert isinstance(start, float)
    print(f"interpreter start: {start * 1000:.1f} ms (CPU {bare['cpu_s'] * 1000:.1f} ms); load average "
          f"{' '.join(f'{value:.1f}' for value in os.getloadavg())} on {os.cpu_count()} CPUs")
    cli = [PY, "-m", "commandcode"]

    # 3. cold builds first: they also leave the catalogs warm for the rows below.
    builds = [] if args.skip_cold else [*big, ("many", many_home, many_cwd), ("search", search_home, search_cwd)]
    for label, home, cwd in builds:
        if home is None or cwd is None:
            continue
        began = time.perf_counter()
        row = measure_command(_in(cwd, [*cli, "doctor", "--reindex"]), _env(home), runs=1, warmup=0, capture=True,
                              name=f"cold build {label}")
        row["elapsed_s"] = round(time.perf_counter() - began, 2)
        report[f"cold_{label}"] = row
        folder = next((home / "projects").iterdir())
        size = sum(path.stat().st_size for path in folder.glob("*.jsonl"))
        count = len(list(folder.glob("*.jsonl")))
        wall = row["wall_s"] if isinstance(row["wall_s"], float) else float("nan")
        row.update(bytes=size, sessions=count, mb_per_s=round(size / 1e6 / wall, 1), sessions_per_s=round(count / wall))
        print(f"cold build {label:6}: {count} sessions, {size / 1e6:.0f} MB in {wall:.1f} s "
              f"= {size / 1e6 / wall:.1f} MB/s, {count / wall:.0f} sessions/s")

    # 1. listing
    listing = [*cli, "sessions", "list", "--limit", "20", "--json"]
    rows = {
        "catalog warm": measure_command(_in(many_cwd, listing), _env(many_home), runs=args.runs),
        "folder scan (today)": measure_command(_in(many_cwd, listing), _env(many_home, COMMANDCODE_CATALOG="off"),
                                               runs=args.runs),
        "every file read whole": measure_command([PY, "-c", READ_WHOLE, str(next((many_home / "projects").iterdir()))],
                                                 runs=args.runs),
    }
    import subprocess

    same = [subprocess.run(_in(many_cwd, listing), env={**os.environ, **{k: v for k, v in _env(many_home, **extra).items() if v}},
                           capture_output=True, text=True).stdout for extra in ({}, {"COMMANDCODE_CATALOG": "off"})]
    rows_right = same[0] == same[1] and len(json.loads(same[0])) == 20
    print(f"\nsessions list --limit 20 --json, {args.sessions} sessions, target 100 ms over start-up "
          f"(rows equal to the folder scan's: {rows_right})")
    for label, row in rows.items():
        print(f"  {label:24} {_over(row, start)}")
    report["list"] = {**rows, "rows_right": rows_right}

    # 2. search
    if search_home is not None and search_cwd is not None:
        search = [*cli, "sessions", "search", QUERY, "--json", "--limit", "20"]
        rows = {
            "catalog warm (FTS5)": measure_command(_in(search_cwd, search), _env(search_home), runs=args.runs),
            "no catalog (text read)": measure_command(_in(search_cwd, search), _env(search_home, COMMANDCODE_CATALOG="off"),
                                                      runs=1),
            "every file read whole": measure_command([PY, "-c", READ_WHOLE, str(next((search_home / "projects").iterdir())),
                                                      QUERY], runs=args.runs),
        }
        print(f"\nsessions search {QUERY!r}, {args.search_sessions} sessions, {args.search_bytes / 1e6:.0f} MB, "
              "target 100 ms over start-up")
        for label, row in rows.items():
            print(f"  {label:24} {_over(row, start)}")
        report["search"] = rows

    # 4. picker first paint (target: 300 ms over start-up)
    paints = {
        "first screenful, rest later": first_paint(_in(many_cwd, [PY, "-c", FIRST_PAINT]), _env(many_home), args.runs),
        "whole list loaded first": first_paint(_in(many_cwd, [PY, "-c", FIRST_PAINT, "--loaded-first"]),
                                               _env(many_home), args.runs),
        "bare Textual screen (floor)": first_paint(_in(many_cwd, [PY, "-c", FIRST_PAINT, "--bare"]), _env(many_home),
                                                   args.runs),
    }
    print(f"\npicker first paint (spawn to the first frame with rows), {args.sessions} sessions")
    for label, row in paints.items():
        print(f"  {label:28} {_over(row, start)}  rows drawn: {row.get('shown')}")
    report["picker_first_paint"] = paints
    report["interpreter_start_s"] = start
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
