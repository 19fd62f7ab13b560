#!/usr/bin/env python3
"""Side-by-side "open a huge session" benchmark: commandcode against its peers.

This script owns benches/results/open.{json,md,png}. For each size asked for it

1. generates a deterministic Command Code v3 session with ``commandcode.bench.generate``
   into the data folder (default ``benches/.cache/data``; reused when the same size, seed
   and generator source are already there),
2. reads the file once so it sits in the page cache,
3. measures, each as the median of ``--runs`` whole-process runs after a warm-up
   (``benches/peers.py``): commandcode cold (``COMMANDCODE_INDEX=off``) and warm (its index
   sidecar primed by one run), each through the CLI (``commandcode sessions context FILE
   --stats``, the installed script: the whole context built, only its size printed) and through the library
   (``commandcode.open_session(FILE).context()`` in ``python -c``); the interpreter's own start
   (``python -c pass``, subtracted in the "minus interpreter start" column); a plain Python open
   with the stdlib ``json`` and with ``orjson``, pi's SessionManager, ``wc -l`` and ``cat``.
   Children run with bytecode caching on, as a pip install has it.

A loader that fails (the commandcode CLI is not built yet, pi cannot read a 1 GB file, ...)
keeps its error text in its row and the benchmark goes on.

    python3 benches/compare_open.py                       # 10MB 100MB
    python3 benches/compare_open.py --sizes 1GB 2GB --runs 3 --no-pi
    python3 benches/compare_open.py --sizes 1GB --no-pi --no-python-peers --baseline ../main/.venv/bin/python
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import peers
from commandcode.bench import measure

REPO = Path(__file__).resolve().parents[1]
BENCH_DIR = REPO / "python" / "commandcode" / "bench"
GENERATOR_FILES = ("generate.py", "generator.py", "corpus.py")
RESULTS = REPO / "benches" / "results"
WC = "wc -l"
INTERPRETER = "python -c pass (interpreter start)"


# --------------------------------------------------------------------------- sessions

def load_generator():
    """commandcode.bench.generate, loaded from its file: the package itself may not import yet."""
    name = "commandcode_bench"
    if f"{name}.generate" not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, BENCH_DIR / "__init__.py",
                                                      submodule_search_locations=[str(BENCH_DIR)])
        package = importlib.util.module_from_spec(spec)
        sys.modules[name] = package  # dataclasses look their module up while the class is built
        spec.loader.exec_module(package)
        importlib.import_module(f"{name}.generate")
    return sys.modules[f"{name}.generate"]


def session_for(size_text: str, seed: int, data_dir: Path) -> tuple[Path, dict]:
    """The session file for this size and seed, generated unless an identical one is there."""
    gen = load_generator()
    size = gen.parse_size(size_text)
    folder = data_dir.resolve() / f"{size}-seed{seed}"  # the manifest keeps an absolute path
    manifest = folder / "generated.json"
    source_sha = hashlib.sha256(b"".join((BENCH_DIR / file).read_bytes() for file in GENERATOR_FILES)).hexdigest()
    try:
        info = json.loads(manifest.read_text(encoding="utf-8"))
        path = Path(info["path"])
        if info["generator_sha256"] == source_sha and path.stat().st_size == info["bytes"]:
            return path, info
    except (OSError, ValueError, KeyError):
        pass
    if folder.exists():
        shutil.rmtree(folder)
    print(f"generating {size_text} (seed {seed}) into {folder} ...", file=sys.stderr, flush=True)
    s = gen.generate_session(folder, size, seed=seed)
    info = {**s.to_json(), "size_requested": size, "seed": seed, "generator_sha256": source_sha}
    manifest.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return s.path, info


def warm_page_cache(path: Path) -> None:
    with open(path, "rb", buffering=0) as f:
        while f.read(1 << 23):
            pass


# --------------------------------------------------------------------------- commandcode

def commandcode_env(python: str) -> tuple[dict[str, str | None], str | None]:
    """Extra environment under which ``python -m commandcode`` imports, or an error text.

    An installed (or ``maturin develop``-ed) package needs nothing; a source tree with the
    native module built in place needs ``python/`` on PYTHONPATH.
    """
    probe = [python, "-c", "import commandcode._native"]
    r = subprocess.run(probe, capture_output=True, text=True)
    if r.returncode == 0:
        return {}, None
    extra = {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "python"), os.environ.get("PYTHONPATH")]))}
    r2 = subprocess.run(probe, capture_output=True, text=True, env={**os.environ, **extra})
    if r2.returncode == 0:
        return extra, None
    lines = (r2.stderr or r.stderr).strip().splitlines()
    return extra, "commandcode does not import: " + (lines[-1] if lines else "unknown error")


def commandcode_rows(path: Path, python: str, runs: int, warmup: int, label: str = "") -> list[dict]:
    """Cold (``COMMANDCODE_INDEX=off``) and warm (index sidecar primed) opens to the context,
    through the CLI and through the library, plus the interpreter's own start as a floor.
    ``label`` (e.g. `` [baseline]``) ends the rows' names and names their own data dir."""
    env, error = commandcode_env(python)
    # Index sidecars of the warm rows go beside the data, never into the user's own data dir.
    home = path.parent / ("commandcode-home" + label.strip().strip("[]").replace(" ", "-"))
    env = {**env, **measure.BYTECODE_ENV, "COMMANDCODE_HOME": str(home)}
    rows = []
    for front, argv in measure.open_commands(python, str(path)).items():
        cold_name = f"commandcode {front} cold (COMMANDCODE_INDEX=off){label}"
        warm_name = f"commandcode {front} warm (index){label}"
        # Run it even when the import probe failed, so the row shows what commandcode itself says.
        cold = peers.measure_command(argv, env={**env, "COMMANDCODE_INDEX": "off"}, runs=runs, warmup=warmup,
                                     name=cold_name, capture=True)
        warm_env = {**env, "COMMANDCODE_INDEX": None}
        prime = peers.measure_command(argv, env=warm_env, runs=1, warmup=0, name=warm_name)
        if prime.get("error"):
            warm = prime
        else:
            warm = peers.measure_command(argv, env=warm_env, runs=runs, warmup=warmup, name=warm_name, capture=True)
        for row in (cold, warm):
            if error and row.get("error"):
                row["error"] = f"{row['error']} ({error})"
        rows += [cold, warm]
    rows.append(peers.measure_command([python, "-c", "pass"], env=env, runs=runs, warmup=warmup,
                                      name=INTERPRETER))
    return rows


# --------------------------------------------------------------------------- measuring

def measure_size(size_text: str, seed: int, data_dir: Path, runs: int, warmup: int, pi: bool,
                 python: str, baseline: str | None = None, python_peers: bool = True) -> dict:
    path, info = session_for(size_text, seed, data_dir)
    warm_page_cache(path)
    rows = []
    # With a baseline, the two builds alternate run by run, so load on the machine hits both alike.
    for _ in range(runs if baseline else 1):
        rows += commandcode_rows(path, python, 1 if baseline else runs, warmup)
        if baseline:
            rows += commandcode_rows(path, baseline, 1, warmup, BASELINE)
            rows.append(peers.wc_lines(path, 1, warmup))
    if baseline:
        rows = merge_runs(rows)
    if python_peers:
        rows.append(peers.python_full_load(path, "stdlib", runs, warmup, python))
        rows.append(peers.python_full_load(path, "orjson", runs, warmup, python))
    if pi:
        rows.append(peers.pi_session_manager(path, runs, warmup))
    if not baseline:
        rows.append(peers.wc_lines(path, runs, warmup))
    rows.append(peers.cat(path, runs, warmup))
    add_derived(rows, info["bytes"])
    notes = cross_check(rows, info)
    for row in rows:
        state = f"{row['wall_s']:.3f} s" if row["wall_s"] is not None else row.get("error", "failed")
        print(f"  {size_text:>8}  {row['name']:<42} {state}", file=sys.stderr, flush=True)
    return {"size": size_text, "bytes": info["bytes"], "file": str(path), "session": info, "rows": rows,
            "notes": notes}


BASELINE = " [baseline]"


def merge_runs(rows: list[dict]) -> list[dict]:
    """Rows of the same name measured one run at a time, merged into one row each (in first-seen
    order): the median of their times and peak memory, the first error if any run failed."""
    merged: dict[str, list[dict]] = {}
    for row in rows:
        merged.setdefault(row["name"], []).append(row)
    out = []
    for same in merged.values():
        row = dict(same[0])
        failed = next((r for r in same if r.get("error")), None)
        if failed is not None:
            row.update(failed)
        for key in ("wall_s", "cpu_s", "peak_rss_mib"):
            values = sorted(r[key] for r in same if r.get(key) is not None)
            row[key] = values[len(values) // 2] if values else None
        row["runs"] = len(same)
        out.append(row)
    return out


def cross_check(rows: list[dict], info: dict) -> list[str]:
    """Loaders that report their context size must agree with the generator's count."""
    notes = []
    for row in rows:
        got = (row.get("detail") or {}).get("context_messages")
        if got is not None and got != info["context_entries"]:
            notes.append(f"{row['name']} built {got} context messages, the generator expects "
                         f"{info['context_entries']}")
    return notes


def add_derived(rows: list[dict], size_bytes: int) -> None:
    """MB/s, the ratio to ``wc -l``, and for commandcode the time minus interpreter start."""
    wc = next((r["wall_s"] for r in rows if r["name"] == WC and r["wall_s"]), None)
    interpreter = next((r["wall_s"] for r in rows if r["name"] == INTERPRETER and r["wall_s"]), None)
    for row in rows:
        wall = row["wall_s"]
        row["mb_per_s"] = round(size_bytes / 1e6 / wall, 1) if wall else None
        row["x_wc"] = round(wall / wc, 1) if wall and wc else None
        if wall and interpreter and row["name"].startswith("commandcode"):
            row["minus_interpreter_ms"] = round((wall - interpreter) * 1e3, 1)


# --------------------------------------------------------------------------- reports

def machine() -> dict:
    node = shutil.which("node")
    node_version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip() if node else None
    return {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "node": node_version, "rss_meter": peers.meter()}


def fmt(value, digits: int) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def markdown(report: dict) -> str:
    lines = [
        "# Opening a session: commandcode vs peers",
        "",
        f"Generated {report['generated_at']} by `benches/compare_open.py` (seed {report['seed']}, "
        f"median of {report['runs']} runs after {report['warmup']} warm-up, page cache warm). "
        f"Machine: {report['machine']['platform']}, {report['machine']['cpus']} CPUs, "
        f"Python {report['machine']['python']}, node {report['machine']['node'] or 'missing'}; "
        f"peak RSS from {report['machine']['rss_meter']}.",
        "",
        "| size | loader | wall s | MB/s | peak RSS MiB | × wc -l | minus interpreter start, ms | note |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for size in report["sizes"]:
        for row in size["rows"]:
            note = row.get("error", "").replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {size['size']} | {row['name']} | {fmt(row['wall_s'], 3)} | {fmt(row['mb_per_s'], 1)} | "
                         f"{fmt(row['peak_rss_mib'], 1)} | {fmt(row['x_wc'], 1)} | "
                         f"{fmt(row.get('minus_interpreter_ms'), 1)} | {note} |")
    lines.append("")
    for size in report["sizes"]:
        s = size["session"]
        lines.append(f"- {size['size']}: {s['bytes']:,} bytes, {s['entries']:,} entries, active path "
                     f"{s['active_path_length']:,}, {s['context_entries']} context entries, "
                     f"{s['compactions']} compactions, {s['rewinds']} rewinds.")
        lines.extend(f"- {size['size']}: {note}" for note in size["notes"])
    for note in report["notes"]:
        lines.append(f"- {note}")
    return "\n".join(lines) + "\n"


def plot(report: dict, out: Path) -> str | None:
    """Time and peak RSS against size, log-log; returns a note when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "open.png not written: matplotlib is not installed (pip install matplotlib)"
    series: dict[str, list[tuple[float, float, float]]] = {}
    for size in report["sizes"]:
        for row in size["rows"]:
            if row["wall_s"] is not None:
                series.setdefault(row["name"], []).append((size["bytes"] / 1e6, row["wall_s"], row["peak_rss_mib"]))
    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(12, 4.8))
    for name, points in series.items():
        points.sort()
        mb = [p[0] for p in points]
        ax_t.plot(mb, [p[1] for p in points], marker="o", label=name)
        ax_m.plot(mb, [p[2] for p in points], marker="o", label=name)
    for ax, title, ylabel in ((ax_t, "Open + context: wall time", "seconds"),
                              (ax_m, "Open + context: peak RSS", "MiB")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("session size (MB)")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
    ax_m.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return None


def write_reports(report: dict, results: Path) -> None:
    results.mkdir(parents=True, exist_ok=True)
    note = plot(report, results / "open.png")
    if note:
        report["notes"].append(note)
        print(note, file=sys.stderr)
    (results / "open.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (results / "open.md").write_text(markdown(report), encoding="utf-8")


# --------------------------------------------------------------------------- main

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", nargs="+", default=["10MB", "100MB"], help="session sizes, e.g. 10MB 100MB 1GB 2GB")
    ap.add_argument("--runs", type=int, default=5, help="measured runs per loader (median reported)")
    ap.add_argument("--warmup", type=int, default=1, help="unmeasured runs before them")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data-dir", type=Path, default=REPO / "benches" / ".cache" / "data")
    ap.add_argument("--results-dir", type=Path, default=RESULTS)
    ap.add_argument("--python", default=sys.executable, help="interpreter for commandcode and the Python peers")
    ap.add_argument("--no-pi", action="store_true", help="skip pi (no node/npm, or no time to install it)")
    ap.add_argument("--baseline", metavar="PYTHON",
                    help="also measure commandcode under this interpreter (the build before a change), "
                         "alternating run by run with --python; its rows end in [baseline]")
    ap.add_argument("--no-python-peers", action="store_true",
                    help="skip the plain Python loaders (stdlib json, orjson): minutes on 1 GB")
    a = ap.parse_args()
    gen = load_generator()
    try:
        for size in a.sizes:
            gen.parse_size(size)
    except ValueError as e:
        ap.error(str(e))
    report = {"generated_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "seed": a.seed,
              "runs": a.runs, "warmup": a.warmup, "machine": machine(), "sizes": [], "notes": []}
    if a.no_pi:
        report["notes"].append("pi skipped (--no-pi)")
    for size in a.sizes:
        report["sizes"].append(measure_size(size, a.seed, a.data_dir, a.runs, a.warmup, not a.no_pi, a.python,
                                            a.baseline, not a.no_python_peers))
    write_reports(report, a.results_dir)
    print(markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
