#!/usr/bin/env python3
"""Start-up of the interactive shell: time from launch to the first prompt, through a pty, side
by side with its floors, in one run.

    .venv/bin/python benches/bench_shell_startup.py [--runs 15] [--big /work/bench/data/1000000000-seed1]
        [--baseline OTHER-VENV/bin/python] [--json OUT]

Each row spawns the program in a fresh pseudo-terminal (120 × 40), answers its cursor-position
requests as a terminal does (pyte), and stops the clock when the screen first shows the prompt
(a line starting with `>`); the process is then killed. Rows:

1. **floor: python -c pass** — the interpreter's own start (clock stops at exit).
2. **floor: bare prompt_toolkit** — `PromptSession().prompt("> ")` in a fresh interpreter: the
   editor alone, what any prompt_toolkit shell pays.
3. **commandcode, new session** — the `commandcode` launcher of this environment (what a user
   types; `python -m commandcode` when there is none) in an empty project (target: 250 ms).
4. **commandcode, resume 1 GB** — `commandcode --session <the benchmark's 1 GB transcript>` with
   its warm index (target: 1 s). Skipped when `--big` has no transcript.
5. **baseline, new session** — with `--baseline`, row 3 for another environment (say, a release
   build of main), so a change is measured against its baseline in the same run.

The rows run interleaved, one run of each per round.

Medians and minimums in milliseconds — wall time, and the CPU time the process had used when the
prompt appeared (every thread's run time from `/proc/PID/task/*/schedstat`, which a loaded machine
inflates far less than wall time; "main cpu" is the main thread's alone, which leaves out what a
background thread did between the prompt's drawing and the clock's reading) — and each row's wall
and CPU ratios to the bare prompt_toolkit floor. Start-up runs the editor first and makes a new session behind the prompt
(`shell/warm_start.py`), so CPU a row spends after its prompt is not counted: that is the point.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pexpect
import pyte

BARE = "from prompt_toolkit import PromptSession\nPromptSession().prompt('> ')\n"


def cpu_seconds(pid: int, *, main_thread: bool = False) -> float:
    """The CPU time all threads of `pid` (or only its main thread) have run so far (0.0 once it is gone)."""
    total = 0
    try:
        tasks = [str(pid)] if main_thread else os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0.0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as stat:
                total += int(stat.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return total / 1e9


def time_to_prompt(argv: list[str], cwd: str, env: dict[str, str], *,
                   until_exit: bool = False) -> tuple[float, float, float]:
    """Seconds (wall, CPU of every thread, CPU of the main thread) from spawn to the first `>`
    line on the screen (or to exit; CPU is then the children's rusage, both times)."""
    holder: list[Any] = []

    class Screen(pyte.Screen):  # type: ignore[misc]
        def write_process_input(self, data: str) -> None:
            holder[0].send(data)

    screen = Screen(120, 40)
    stream = pyte.ByteStream(screen)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    children_cpu = before.ru_utime + before.ru_stime
    start = time.perf_counter()
    child = pexpect.spawn(argv[0], argv[1:], cwd=cwd, env=env, dimensions=(40, 120))
    holder.append(child)
    try:
        while True:
            try:
                chunk = child.read_nonblocking(65536, timeout=30)
            except pexpect.EOF:
                if until_exit:
                    wall = time.perf_counter() - start
                    child.close()  # reaps it: its CPU time joins this process's children's
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    cpu = after.ru_utime + after.ru_stime - children_cpu
                    return wall, cpu, cpu
                raise RuntimeError(f"{argv} exited before its prompt:\n" + "\n".join(screen.display)) from None
            stream.feed(chunk)
            if not until_exit and any(line.startswith(">") for line in screen.display):
                wall = time.perf_counter() - start
                return wall, cpu_seconds(child.pid), cpu_seconds(child.pid, main_thread=True)
    finally:
        child.terminate(force=True)


def launcher_of(python: str) -> list[str]:
    """The `commandcode` launcher beside `python` (what a user types), else `python -m commandcode`."""
    launcher = Path(python).parent / "commandcode"
    return [str(launcher)] if launcher.is_file() else [python, "-m", "commandcode"]


def measure(rows: list[dict[str, Any]], cwd: str, runs: int) -> None:
    """Times every row `runs` times, interleaved (one run of each row per round, so a change in the
    machine's load falls on every row alike), after one warm-up run each; fills in the figures."""
    for row in rows:
        time_to_prompt(row["argv"], cwd, row["env"], **row["options"])  # warm the page cache once
        row["samples"] = []
    for _ in range(runs):
        for row in rows:
            row["samples"].append(time_to_prompt(row["argv"], cwd, row["env"], **row["options"]))
    for row in rows:
        wall = [sample[0] * 1000 for sample in row["samples"]]
        cpu = [sample[1] * 1000 for sample in row["samples"]]
        main_cpu = [sample[2] * 1000 for sample in row["samples"]]
        row.update({"median_ms": statistics.median(wall), "min_ms": min(wall), "cpu_median_ms": statistics.median(cpu),
                    "cpu_min_ms": min(cpu), "main_cpu_median_ms": statistics.median(main_cpu), "runs": runs})
        for key in ("argv", "env", "options", "samples"):
            del row[key]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--big", type=Path, default=Path("/work/bench/data/1000000000-seed1"))
    parser.add_argument("--baseline", metavar="PYTHON", help="another environment's python (say, main's release "
                        "build): its new-session row runs beside ours, interleaved")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    python = sys.executable
    ours = launcher_of(python)
    scratch = Path(tempfile.mkdtemp(prefix="cc-startup-"))
    project = scratch / "project"
    project.mkdir()
    base_env = {key: value for key, value in os.environ.items() if not key.startswith("COMMANDCODE_")}
    base_env.update({"TERM": "xterm-256color", "NO_COLOR": "1"})
    env = {**base_env, "COMMANDCODE_HOME": str(scratch / "data")}

    def row(name: str, argv: list[str], row_env: dict[str, str] = env, **options: Any) -> dict[str, Any]:
        return {"name": name, "argv": argv, "env": row_env, "options": options}

    rows = [row("floor: python -c pass", [python, "-c", "pass"], until_exit=True),
            row("floor: bare prompt_toolkit", [python, "-c", BARE]),
            row("commandcode, new session", ours)]
    if args.baseline:
        rows.append(row("baseline, new session", launcher_of(args.baseline)))
    transcripts = sorted(args.big.glob("*.jsonl")) if args.big.is_dir() else []
    if transcripts:
        big_env = {**base_env, "COMMANDCODE_HOME": str(args.big / "commandcode-home")}
        size = transcripts[0].stat().st_size
        rows.append(row(f"commandcode, resume {size / 1e9:.1f} GB", [*ours, "--session", str(transcripts[0])], big_env))
    measure(rows, str(project), args.runs)
    floor, cpu_floor = rows[1]["median_ms"], rows[1]["cpu_median_ms"]
    print(f"{'row':<36} {'wall med':>9} {'wall min':>9} {'cpu med':>8} {'cpu min':>8} {'main cpu':>9} {'× editor':>9} "
          f"{'cpu ×':>6}")
    for result in rows:
        result["ratio_to_editor"] = result["median_ms"] / floor
        result["cpu_ratio_to_editor"] = result["cpu_median_ms"] / cpu_floor
        print(f"{result['name']:<36} {result['median_ms']:>9.1f} {result['min_ms']:>9.1f} {result['cpu_median_ms']:>8.1f} "
              f"{result['cpu_min_ms']:>8.1f} {result['main_cpu_median_ms']:>9.1f} {result['ratio_to_editor']:>9.2f} "
              f"{result['cpu_ratio_to_editor']:>6.2f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
