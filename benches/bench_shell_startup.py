#!/usr/bin/env python3
"""Start-up of the interactive shell: time from launch to the first prompt, through a pty, side
by side with its floors, in one run.

    .venv/bin/python benches/bench_shell_startup.py [--runs 15] [--big /work/bench/data/1000000000-seed1] [--json OUT]

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

Medians and minimums in milliseconds — wall time, and the CPU time the process had used when the
prompt appeared (every thread's run time from `/proc/PID/task/*/schedstat`, which a loaded machine
inflates far less than wall time) — and each row's wall and CPU ratios to the bare prompt_toolkit
floor. Start-up runs the editor first and makes a new session behind the prompt
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


def cpu_seconds(pid: int) -> float:
    """The CPU time all threads of `pid` have run so far (0.0 once it is gone)."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0.0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as stat:
                total += int(stat.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return total / 1e9


def time_to_prompt(argv: list[str], cwd: str, env: dict[str, str], *, until_exit: bool = False) -> tuple[float, float]:
    """Seconds (wall, CPU) from spawn to the first `>` line on the screen (or to exit; CPU is
    then the children's rusage)."""
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
                    return wall, after.ru_utime + after.ru_stime - children_cpu
                raise RuntimeError(f"{argv} exited before its prompt:\n" + "\n".join(screen.display)) from None
            stream.feed(chunk)
            if not until_exit and any(line.startswith(">") for line in screen.display):
                return time.perf_counter() - start, cpu_seconds(child.pid)
    finally:
        child.terminate(force=True)


def measure(name: str, argv: list[str], cwd: str, env: dict[str, str], runs: int, **options: Any) -> dict[str, Any]:
    time_to_prompt(argv, cwd, env, **options)  # warm the page cache once
    samples = [time_to_prompt(argv, cwd, env, **options) for _ in range(runs)]
    wall = [sample[0] * 1000 for sample in samples]
    cpu = [sample[1] * 1000 for sample in samples]
    return {"name": name, "median_ms": statistics.median(wall), "min_ms": min(wall), "cpu_median_ms": statistics.median(cpu),
            "cpu_min_ms": min(cpu), "runs": runs}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--big", type=Path, default=Path("/work/bench/data/1000000000-seed1"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    python = sys.executable
    launcher = Path(python).parent / "commandcode"
    ours = [str(launcher)] if launcher.is_file() else [python, "-m", "commandcode"]
    scratch = Path(tempfile.mkdtemp(prefix="cc-startup-"))
    project = scratch / "project"
    project.mkdir()
    base_env = {key: value for key, value in os.environ.items() if not key.startswith("COMMANDCODE_")}
    base_env.update({"TERM": "xterm-256color", "NO_COLOR": "1"})
    env = {**base_env, "COMMANDCODE_HOME": str(scratch / "data")}
    rows = [
        measure("floor: python -c pass", [python, "-c", "pass"], str(project), env, args.runs, until_exit=True),
        measure("floor: bare prompt_toolkit", [python, "-c", BARE], str(project), env, args.runs),
        measure("commandcode, new session", ours, str(project), env, args.runs),
    ]
    transcripts = sorted(args.big.glob("*.jsonl")) if args.big.is_dir() else []
    if transcripts:
        big_env = {**base_env, "COMMANDCODE_HOME": str(args.big / "commandcode-home")}
        size = transcripts[0].stat().st_size
        rows.append(measure(f"commandcode, resume {size / 1e9:.1f} GB", [*ours, "--session", str(transcripts[0])],
                            str(project), big_env, args.runs))
    floor, cpu_floor = rows[1]["median_ms"], rows[1]["cpu_median_ms"]
    print(f"{'row':<36} {'wall med':>9} {'wall min':>9} {'cpu med':>8} {'cpu min':>8} {'× editor':>9} {'cpu ×':>6}")
    for row in rows:
        row["ratio_to_editor"] = row["median_ms"] / floor
        row["cpu_ratio_to_editor"] = row["cpu_median_ms"] / cpu_floor
        print(f"{row['name']:<36} {row['median_ms']:>9.1f} {row['min_ms']:>9.1f} {row['cpu_median_ms']:>8.1f} "
              f"{row['cpu_min_ms']:>8.1f} {row['ratio_to_editor']:>9.2f} {row['cpu_ratio_to_editor']:>6.2f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
