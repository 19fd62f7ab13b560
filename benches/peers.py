#!/usr/bin/env python3
"""Whole-process baselines for the open benchmarks, and the timer they share.

This module owns how a command is measured (:func:`measure_command`: the median wall
time and median peak RSS of N runs after a warm-up) and the peers that commandcode is
compared with on one session file:

* ``wc -l FILE`` and ``cat FILE > /dev/null``: the floor of reading the bytes;
* ``benches/py_full_load.py``: a plain Python open (every line parsed with the stdlib
  ``json`` or ``orjson``, parent map, leaf, path walk, context);
* pi's ``SessionManager`` (npm ``@mariozechner/pi-coding-agent``, installed on demand
  into ``benches/.cache/pi``), driven by ``benches/pi_load.mjs``.

Each measurement is a dict ``{"name", "wall_s", "peak_rss_mib"}``; a peer that cannot
run (node missing, pi failing with ERR_STRING_TOO_LONG on a 1 GB file, ...) gets
``wall_s``/``peak_rss_mib`` of ``None`` and an ``"error"`` with the failure text.

Wall time is taken with ``time.perf_counter`` around each process. Peak RSS comes from
GNU ``/usr/bin/time -f "%e %M"`` when it is installed (``apt-get install -y time``),
else from ``os.wait4`` on the child: unlike ``getrusage(RUSAGE_CHILDREN)``, whose
``ru_maxrss`` is a maximum over every child so far, it is per run.

    python3 benches/peers.py FILE [--runs 5] [--no-pi]     # prints the baselines as JSON
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from commandcode.bench.measure import failed, measure_command, meter, output_tail

# compare_open.py uses `meter` and `measure_command` through this module.
__all__ = ["baselines", "cat", "measure_command", "meter", "pi_session_manager", "python_full_load", "wc_lines"]

BENCHES = Path(__file__).resolve().parent
CACHE = BENCHES / ".cache"
PI_PACKAGE = "@mariozechner/pi-coding-agent"
PI_VERSION = "0.73.1"

# --------------------------------------------------------------------------- baselines

def wc_lines(file: Path, runs: int = 5, warmup: int = 1) -> dict:
    """``wc -l FILE``."""
    return measure_command(["wc", "-l", str(file)], runs=runs, warmup=warmup, name="wc -l")


def cat(file: Path, runs: int = 5, warmup: int = 1) -> dict:
    """``cat FILE > /dev/null``."""
    return measure_command(["cat", str(file)], runs=runs, warmup=warmup, name="cat > /dev/null")


def orjson_available(python: str = sys.executable) -> bool:
    return subprocess.run([python, "-c", "import orjson"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def python_full_load(file: Path, json_lib: str = "stdlib", runs: int = 5, warmup: int = 1,
                     python: str = sys.executable) -> dict:
    """benches/py_full_load.py with the stdlib ``json`` or ``orjson``."""
    name = "python json (stdlib)" if json_lib == "stdlib" else "python orjson"
    if json_lib == "orjson" and not orjson_available(python):
        return failed(name, "skipped: orjson is not installed (pip install orjson)")
    return measure_command([python, str(BENCHES / "py_full_load.py"), str(file), "--json", json_lib],
                           runs=runs, warmup=warmup, name=name, capture=True)


def ensure_pi(cache_dir: Path = CACHE / "pi") -> tuple[Path | None, str | None]:
    """Install pi into cache_dir with npm unless it is there: (package folder, None) or (None, error)."""
    pkg = cache_dir / "node_modules" / PI_PACKAGE
    try:
        if json.loads((pkg / "package.json").read_text(encoding="utf-8")).get("version") == PI_VERSION:
            return pkg, None
    except (OSError, ValueError):
        pass
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            return None, f"{tool} is not installed"
    cache_dir.mkdir(parents=True, exist_ok=True)
    cmd = ["npm", "install", "--prefix", str(cache_dir), "--no-audit", "--no-fund", "--save-exact",
           "--loglevel=error", f"{PI_PACKAGE}@{PI_VERSION}"]
    try:
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=900)
    except subprocess.TimeoutExpired:
        return None, "npm install timed out"
    if r.returncode != 0 or not (pkg / "package.json").exists():
        return None, f"npm install failed: {output_tail(r.stderr) or output_tail(r.stdout)}"
    return pkg, None


def pi_session_manager(file: Path, runs: int = 5, warmup: int = 1, cache_dir: Path = CACHE / "pi") -> dict:
    """pi's SessionManager.open + buildSessionContext (benches/pi_load.mjs --light)."""
    name = f"pi {PI_VERSION} SessionManager"
    pkg, error = ensure_pi(cache_dir)
    if error:
        return failed(name, error)
    return measure_command(["node", str(BENCHES / "pi_load.mjs"), str(file), "--light"], env={"PI_PKG": str(pkg)},
                           runs=runs, warmup=warmup, name=name, capture=True)


def baselines(file: Path, runs: int = 5, warmup: int = 1, pi: bool = True) -> list[dict]:
    """Every peer on one file, in the order a report lists them."""
    rows = [wc_lines(file, runs, warmup), cat(file, runs, warmup),
            python_full_load(file, "stdlib", runs, warmup), python_full_load(file, "orjson", runs, warmup)]
    if pi:
        rows.append(pi_session_manager(file, runs, warmup))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description="Measure the whole-process baselines on one session file.")
    ap.add_argument("file", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--no-pi", action="store_true")
    a = ap.parse_args()
    for row in baselines(a.file, a.runs, a.warmup, pi=not a.no_pi):
        print(json.dumps(row))


if __name__ == "__main__":
    main()
