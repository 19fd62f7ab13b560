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
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

BENCHES = Path(__file__).resolve().parent
CACHE = BENCHES / ".cache"
PI_PACKAGE = "@mariozechner/pi-coding-agent"
PI_VERSION = "0.73.1"
TIME_BIN = "/usr/bin/time"
ERROR_CHARS = 400


@functools.lru_cache(maxsize=1)
def gnu_time() -> bool:
    """True when /usr/bin/time is GNU time (it understands -f and -o)."""
    if not os.access(TIME_BIN, os.X_OK):
        return False
    with tempfile.NamedTemporaryFile("r") as tf:
        r = subprocess.run([TIME_BIN, "-f", "%e %M", "-o", tf.name, "true"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return r.returncode == 0 and len(tf.read().split()) == 2


def meter() -> str:
    """How peak RSS is measured here, for reports."""
    return "GNU time %M" if gnu_time() else "os.wait4 ru_maxrss"


def _environment(env: Mapping[str, str | None] | None) -> dict[str, str] | None:
    """os.environ with env's entries set (a None value removes the variable)."""
    if env is None:
        return None
    merged = dict(os.environ)
    for key, value in env.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def _tail(data: bytes) -> str:
    lines = [ln.strip() for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()]
    return lines[-1][-ERROR_CHARS:] if lines else ""


def _run_once(argv: Sequence[str], env: dict[str, str] | None, capture: bool) -> tuple[int, float, float, bytes, bytes]:
    """One run: (exit code, wall seconds, peak RSS MiB, stdout if captured, stderr)."""
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as out, \
            tempfile.NamedTemporaryFile("r") as timing:
        stdout = out if capture else subprocess.DEVNULL
        if gnu_time():
            cmd = [TIME_BIN, "-f", "%e %M", "-o", timing.name, *argv]
            t0 = time.perf_counter()
            rc = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=err).returncode
            wall = time.perf_counter() - t0
            fields = timing.read().strip().splitlines()[-1:]  # "Command exited with ..." may come first
            parts = fields[0].split() if fields else []
            rss_mib = int(parts[1]) / 1024 if len(parts) == 2 and parts[1].isdigit() else float("nan")
        else:
            t0 = time.perf_counter()
            try:
                proc = subprocess.Popen(list(argv), env=env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=err)
            except OSError as e:
                return 127, 0.0, float("nan"), b"", str(e).encode()
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            proc.returncode = rc = os.waitstatus_to_exitcode(status)
            rss_mib = usage.ru_maxrss / 1024  # KiB on Linux
        err.seek(0)
        out.seek(0)
        return rc, wall, rss_mib, out.read() if capture else b"", err.read()


def measure_command(argv: Sequence[str], env: Mapping[str, str | None] | None = None, runs: int = 5,
                    warmup: int = 1, *, name: str | None = None, capture: bool = False) -> dict:
    """Run ``argv`` ``warmup`` times unmeasured, then ``runs`` times; report the medians.

    ``env`` holds variables to set on top of this process's environment (``None``
    removes one). stdout goes to /dev/null unless ``capture``: then the last run's
    stdout is parsed as one JSON line into ``"detail"`` when it is one. The first
    failing run (non-zero exit) stops the measurement; its stderr (or stdout) tail
    becomes ``"error"``.
    """
    result: dict = {"name": name or " ".join(argv), "wall_s": None, "peak_rss_mib": None}
    full_env = _environment(env)
    walls: list[float] = []
    rss: list[float] = []
    out = b""
    for i in range(warmup + runs):
        rc, wall, rss_mib, out, err = _run_once(argv, full_env, capture)
        if rc != 0:
            why = _tail(err) or _tail(out) or "no output"
            result["error"] = f"exit {rc}: {why}"
            _add_detail(result, out)
            return result
        if i >= warmup:
            walls.append(wall)
            rss.append(rss_mib)
    result["wall_s"] = round(statistics.median(walls), 4)
    result["peak_rss_mib"] = round(statistics.median(rss), 1)
    result["runs"] = runs
    _add_detail(result, out)
    return result


def _add_detail(result: dict, out: bytes) -> None:
    text = out.decode("utf-8", "replace").strip()
    if text and "\n" not in text and len(text) < 10_000:
        try:
            detail = json.loads(text)
        except ValueError:
            return
        if isinstance(detail, dict):
            result["detail"] = detail
            if "error" in result and isinstance(detail.get("error"), str):
                result["error"] = detail["error"][-ERROR_CHARS:]


def failed(name: str, error: str) -> dict:
    """A measurement that could not be taken."""
    return {"name": name, "wall_s": None, "peak_rss_mib": None, "error": error}


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
        return None, f"npm install failed: {_tail(r.stderr) or _tail(r.stdout)}"
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
