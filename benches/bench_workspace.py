#!/usr/bin/env python3
"""Retention benchmarks, side by side with their baselines, in one run.

    .venv/bin/python benches/bench_workspace.py --work /tmp/ccws [--sessions 5] [--size 10MB]
                                                [--objects 5000] [--json OUT]

`--work` gets a data dir with `--sessions` generated sessions of `--size` each (the bench
generator's realistic transcripts) and a store of `--objects` old unreferenced 4 KiB objects.
Each figure is one whole `commandcode` process (`python -m commandcode`), against:

1. **du**: `commandcode sessions du --all-projects --json` against `du -sb` of the data dir;
2. **archive**: `commandcode sweep --archive --older-than 0h --include-named` against
   `tar -I 'zstd -10 -T1' -cf` of the same project folder (time and bytes written);
3. **restore**: `commandcode sweep --restore ID` of every archived session against `tar -xf`;
4. **gc**: `commandcode doctor --gc` over the unreferenced objects against
   `find objects -mindepth 2 -type f -delete`.

Every step checks its result (sessions gone and back byte for byte, objects removed).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from commandcode.bench.generate import generate_session, parse_size


def _timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    completed = subprocess.run(command, cwd=cwd, env=env, capture_output=True)
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"{command} failed: {completed.stderr.decode(errors='replace')}")
    return elapsed


def _tree(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in root.rglob("*") if path.is_file()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--sessions", type=int, default=5)
    parser.add_argument("--size", default="10MB")
    parser.add_argument("--objects", type=int, default=5000)
    parser.add_argument("--json", type=Path)
    options = parser.parse_args(argv)
    work = options.work.resolve()
    shutil.rmtree(work, ignore_errors=True)
    data, cwd, scratch = work / "data", work / "proj", work / "scratch"
    cwd.mkdir(parents=True)
    env = {**{key: value for key, value in os.environ.items() if not key.startswith("COMMANDCODE_")},
           "COMMANDCODE_HOME": str(data), "COMMANDCODE_SCRATCHPAD_BASE": str(scratch), "NO_COLOR": "1",
           "COMMANDCODE_INDEX": "off"}
    cli = [sys.executable, "-m", "commandcode"]
    from commandcode.config.paths import project_folder_name
    from commandcode.config.slug import project_slug

    project = data / "projects" / project_folder_name(project_slug(str(cwd)))
    ids = [generate_session(project, parse_size(options.size), seed=seed, cwd=str(cwd)).session_id
           for seed in range(1, options.sessions + 1)]
    original = _tree(project)
    results: dict[str, dict[str, float]] = {}

    results["du"] = {"ours_s": _timed([*cli, "sessions", "du", "--all-projects", "--json"], cwd, env),
                     "baseline_s": _timed(["du", "-sb", str(data)], cwd, env)}

    tarball = work / "baseline.tar.zst"
    baseline_archive = _timed(["tar", "-I", "zstd -10 -T1", "-cf", str(tarball), "-C", str(data), "projects"], cwd, env)
    ours_archive = _timed([*cli, "sweep", "--archive", "--older-than", "0h", "--include-named", "--json"], cwd, env)
    archives = sorted((data / "archives").rglob("*.ccarchive"))
    assert len(archives) == len(ids) and not any(project.glob("*.jsonl")), "every session archived"
    results["archive"] = {"ours_s": ours_archive, "baseline_s": baseline_archive,
                          "ours_bytes": sum(path.stat().st_size for path in archives),
                          "baseline_bytes": tarball.stat().st_size, "original_bytes": sum(map(len, original.values()))}

    extract = work / "extract"
    extract.mkdir()
    baseline_restore = _timed(["tar", "-I", "zstd -T1", "-xf", str(tarball), "-C", str(extract)], cwd, env)
    started = time.perf_counter()
    for session_id in ids:
        _timed([*cli, "sweep", "--restore", session_id], cwd, env)
    ours_restore = time.perf_counter() - started
    assert _tree(project) == original, "restored byte for byte"
    results["restore"] = {"ours_s": ours_restore, "baseline_s": baseline_restore}

    from commandcode.checkpoints.store import BackupStore

    os.environ["COMMANDCODE_HOME"] = str(data)
    rng = random.Random(7)
    store = BackupStore(data / "objects")
    for _ in range(options.objects):
        store.put_bytes(rng.randbytes(4096))
    old = time.time() - 7200
    objects = [path for path in (data / "objects").rglob("*") if path.is_file() and len(path.name) == 62]
    for path in objects:
        os.utime(path, (old, old))
    copy = work / "objects-copy"
    shutil.copytree(data / "objects", copy)
    ours_gc = _timed([*cli, "doctor", "--gc", "--json"], cwd, env)
    assert not [path for path in (data / "objects").rglob("*") if path.is_file() and len(path.name) == 62]
    baseline_gc = _timed(["find", str(copy), "-mindepth", "2", "-type", "f", "-delete"], cwd, env)
    results["gc"] = {"ours_s": ours_gc, "baseline_s": baseline_gc, "objects": len(objects)}

    print("| step | ours | baseline | ratio | notes |\n|---|---|---|---|---|")
    notes = {"du": "`du -sb`", "archive": f"`tar` + `zstd -10`: {results['archive']['baseline_bytes']:,} B vs ours "
             f"{results['archive']['ours_bytes']:,} B of {results['archive']['original_bytes']:,} B",
             "restore": "`tar -x`", "gc": f"`find -delete`, {len(objects):,} objects"}
    for step, row in results.items():
        print(f"| {step} | {row['ours_s'] * 1000:.0f} ms | {row['baseline_s'] * 1000:.0f} ms | "
              f"{row['ours_s'] / row['baseline_s']:.1f}x | {notes[step]} |")
    if options.json:
        options.json.write_text(json.dumps(results, indent=2))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
