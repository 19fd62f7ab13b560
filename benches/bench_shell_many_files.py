#!/usr/bin/env python3
"""One `bash` call that creates many files: the whole turn against the command's own time, side by
side with a baseline install (issue 26 §4: shell tracking was quadratic in the files a command
changes), in one run.

    .venv/bin/python benches/bench_shell_many_files.py --work /tmp/ccmany \\
        [--baseline /work/baseline/.venv/bin/python] [--sizes 2000,8000,20000]
        [--baseline-sizes 2000,8000] [--repeat 1] [--json OUT]

For each size N and each interpreter (this checkout's, and the baseline's), in a fresh data dir
(first contact: no store, no sidecar, no catalog) and a fresh 200-file project, a worker process
runs one turn on the offline model whose `bash` call writes N new files with distinct contents
(`checkpoints.trackShell` on, its default), timing `AgentSession.run_turn` whole: the baseline
pass, the command, recording what it changed, and the durable write of the records. The same
command is timed bare, in a fresh folder, by the same worker. Each worker checks its result: the
turn's checkpoint names all N files, and a code rewind to it deletes them all again.

Reported per size: the turn (`run_turn`), the turn and the session's close (what `-p` waits for
before it exits: the background pass storing what the command left), the command alone, the
ratios (target: ≤ 2x for 20,000 files), the turn against the command's own time inside it (the
same moment's load: on a shared machine one command's time varies threefold between runs), the
code rewind that deletes the files again, and this
checkout's speed-up over the baseline. On a loaded machine, `--repeat N` runs every worker N
times, interleaved (ours, baseline, ours, …), and keeps the run with the median ratio.
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
from typing import Any, cast

ROOT = Path(__file__).resolve().parents[1]


def _command(count: int) -> str:
    return f"mkdir -p gen && i=0; while [ $i -lt {count} ]; do echo \"file $i\" > gen/f$i.txt; i=$((i+1)); done"


def worker(work: Path, count: int) -> dict[str, object]:
    """Runs in its own process with `COMMANDCODE_HOME` already set (first contact)."""
    project = work / "project"
    for index in range(200):
        folder = project / f"src{index % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{index}.py").write_text(f"value = {index}\n" * 20)
    bare_folder = work / "bare"
    bare_folder.mkdir()
    start = time.perf_counter()
    subprocess.run(["/bin/sh", "-c", _command(count)], cwd=bare_folder, check=True)
    bare = time.perf_counter() - start
    os.chdir(project)
    from commandcode.agent import tools
    from commandcode.agent.runtime import AgentSession
    from commandcode.checkpoints.modes import RewindMode

    in_turn: list[float] = []  # the command's own time inside the turn (the same moment's load)
    run_bash = tools.run_bash

    def timed_bash(*args: Any, **options: Any) -> Any:
        began = time.perf_counter()
        try:
            return run_bash(*args, **options)
        finally:
            in_turn.append(time.perf_counter() - began)

    tools.run_bash = timed_bash

    prompt = "make files\ncall bash " + json.dumps({"command": _command(count)})
    agent = AgentSession.start(project, permission_mode="bypassPermissions").__enter__()
    start = time.perf_counter()
    getattr(agent, "turns", agent).run_turn(prompt)  # builds before #27 ran turns on the session itself
    turn = time.perf_counter() - start
    agent.close()  # what `-p` waits for before it exits: the store pass of what the command left
    closed = time.perf_counter() - start
    with AgentSession.for_reference(agent.session_id) as again:
        rewinds = getattr(again, "rewinds", again)  # ... and rewound it there too
        recorded = len(rewinds.checkpoint_records()[-1].files)
        assert recorded == count, (recorded, count)
        start = time.perf_counter()
        rewinds.rewind(1, RewindMode.CODE)
        rewound = time.perf_counter() - start
    assert not (project / "gen").exists() or not any((project / "gen").iterdir())
    command = sum(in_turn)
    return {"files": count, "turn_s": round(turn, 2), "closed_s": round(closed, 2), "bare_command_s": round(bare, 2),
            "ratio": round(turn / bare, 2) if bare else None, "closed_ratio": round(closed / bare, 2) if bare else None,
            "command_in_turn_s": round(command, 2), "in_turn_ratio": round(turn / command, 2) if command else None,
            "rewind_s": round(rewound, 2)}


def _run_worker(python: str, work: Path, count: int, *, use_checkout: bool) -> dict[str, object]:
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith("COMMANDCODE_")}
    env.update({"COMMANDCODE_HOME": str(work / "home"), "COMMANDCODE_INDEX": "off"})
    if use_checkout:
        env["PYTHONPATH"] = str(ROOT / "python")
    else:
        env.pop("PYTHONPATH", None)
    done = subprocess.run([python, str(Path(__file__).resolve()), "--worker", str(count), "--work", str(work)],
                          env=env, cwd=work, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"worker failed ({python}, {count} files):\n{done.stderr}")
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _median(runs: list[dict[str, object]]) -> dict[str, object]:
    """The run with the median turn/command ratio, with every run's ratio beside it."""
    ranked = sorted(runs, key=lambda run: float(cast(float, run["ratio"] or 0.0)))
    return {**ranked[len(ranked) // 2], "ratios": [run["ratio"] for run in runs]}


def _cell(figures: dict[str, object]) -> str:
    return (f"{figures['turn_s']} s ({figures['closed_s']} s) / {figures['bare_command_s']} s = "
            f"{figures['ratio']}x ({figures['closed_ratio']}x); command inside the turn {figures['command_in_turn_s']} s: "
            f"{figures['in_turn_ratio']}x; rewind {figures.get('rewind_s', '?')} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, help="scratch folder (emptied)")
    parser.add_argument("--baseline", default="/work/baseline/.venv/bin/python", help="the baseline's python ('' : none)")
    parser.add_argument("--sizes", default="2000,8000,20000")
    parser.add_argument("--baseline-sizes", default="2000,8000",
                        help="the sizes the baseline also runs (55fdfa8 took 199 s at 20,000 files)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per cell; the median ratio is kept")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.worker is not None:
        print(json.dumps(worker(arguments.work.resolve(), arguments.worker)))
        return
    if arguments.work is None:
        parser.error("--work is required")
    work = arguments.work.resolve()
    results: list[dict[str, object]] = []
    for size in (int(text) for text in arguments.sizes.split(",")):
        with_baseline = bool(arguments.baseline) and Path(arguments.baseline).exists() and \
            str(size) in arguments.baseline_sizes.split(",")
        ours, theirs = [], []
        for _ in range(max(1, arguments.repeat)):
            ours.append(_run_worker(sys.executable, work / f"ours-{size}", size, use_checkout=True))
            if with_baseline:
                theirs.append(_run_worker(arguments.baseline, work / f"baseline-{size}", size, use_checkout=False))
        row: dict[str, object] = {"files": size, "ours": _median(ours)}
        if theirs:
            row["baseline"] = _median(theirs)
        print(json.dumps(row), file=sys.stderr)
        results.append(row)
    print("| files | ours: turn (+ close) / command alone | baseline: turn (+ close) / command alone | speed-up |")
    print("|---|---|---|---|")
    for row in results:
        ours = row["ours"]
        assert isinstance(ours, dict)
        base = row.get("baseline")
        print(f"| {row['files']:,} | {_cell(ours)} | {_cell(base) if isinstance(base, dict) else '—'} | "
              + (f"{base['turn_s'] / ours['turn_s']:.1f}x |" if isinstance(base, dict) and ours["turn_s"] else "— |"))
    if arguments.json:
        arguments.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
