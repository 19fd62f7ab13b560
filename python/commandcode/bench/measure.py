"""Measuring a command as a whole process: median wall time and peak RSS over repeated runs.

Shared by `commandcode bench` and the benchmark scripts in `benches/`. Wall time is taken with
`time.perf_counter` around each process; peak RSS comes from GNU `/usr/bin/time -f "%e %M"`
when installed, else from `os.wait4` on the child (per run, unlike `RUSAGE_CHILDREN`).
"""

from __future__ import annotations

import functools
import json
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from typing import Any

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


# What "open a session to its context" means for the two front ends, as whole processes. Each
# prints one JSON line with the number of context messages (a cross-check against the generator).
LIBRARY_OPEN = ("import sys, commandcode; session = commandcode.open_session(sys.argv[1]); "
                "print('{\"context_messages\": %d}' % len(session.context().messages))")


def open_commands(python: str, transcript: str) -> dict[str, list[str]]:
    """argv per front end: the CLI (`sessions context --stats --json`, which builds the whole
    context and prints only its size as one JSON line) and the library as an embedder calls it.

    The CLI runs as users run it, through the `commandcode` script installed beside the
    interpreter (pip's launcher, which itself imports `re`); `python -m commandcode` only when
    there is no such script (a source checkout)."""
    script = os.path.join(os.path.dirname(python), "commandcode")
    cli = [script] if os.access(script, os.X_OK) and not os.path.isdir(script) else [python, "-m", "commandcode"]
    return {"cli": [*cli, "sessions", "context", transcript, "--stats", "--json"],
            "library": [python, "-c", LIBRARY_OPEN, transcript]}


# Children run as from a pip install, which compiles bytecode: a PYTHONDONTWRITEBYTECODE=1 in the
# caller's environment would make every run compile every module again.
BYTECODE_ENV: dict[str, str | None] = {"PYTHONDONTWRITEBYTECODE": None}


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


def output_tail(data: bytes) -> str:
    """The last non-blank line of a process output, shortened to ERROR_CHARS."""
    lines = [ln.strip() for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()]
    return lines[-1][-ERROR_CHARS:] if lines else ""


def _run_once(argv: Sequence[str], env: dict[str, str] | None,
              capture: bool) -> tuple[int, float, float, bytes, bytes, float]:
    """One run: (exit code, wall seconds, peak RSS MiB, stdout if captured, stderr, CPU seconds)."""
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as out, \
            tempfile.NamedTemporaryFile("r") as timing:
        stdout = out if capture else subprocess.DEVNULL
        if gnu_time():
            cmd = [TIME_BIN, "-f", "%e %M %U %S", "-o", timing.name, *argv]
            t0 = time.perf_counter()
            rc = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=err).returncode
            wall = time.perf_counter() - t0
            fields = timing.read().strip().splitlines()[-1:]  # "Command exited with ..." may come first
            parts = fields[0].split() if fields else []
            rss_mib = int(parts[1]) / 1024 if len(parts) == 4 and parts[1].isdigit() else float("nan")
            try:
                cpu = float(parts[2]) + float(parts[3])
            except (IndexError, ValueError):
                cpu = float("nan")
        else:
            t0 = time.perf_counter()
            try:
                proc = subprocess.Popen(list(argv), env=env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=err)
            except OSError as e:
                return 127, 0.0, float("nan"), b"", str(e).encode(), float("nan")
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            proc.returncode = rc = os.waitstatus_to_exitcode(status)
            rss_mib = usage.ru_maxrss / 1024  # KiB on Linux
            cpu = usage.ru_utime + usage.ru_stime
        err.seek(0)
        out.seek(0)
        return rc, wall, rss_mib, out.read() if capture else b"", err.read(), cpu


def measure_command(argv: Sequence[str], env: Mapping[str, str | None] | None = None, runs: int = 5,
                    warmup: int = 1, *, name: str | None = None, capture: bool = False) -> dict[str, Any]:
    """Run ``argv`` ``warmup`` times unmeasured, then ``runs`` times; report the medians (wall
    time ``wall_s``, CPU time of the process ``cpu_s``, peak RSS).

    ``env`` holds variables to set on top of this process's environment (``None``
    removes one). stdout goes to /dev/null unless ``capture``: then the last run's
    stdout is parsed as one JSON line into ``"detail"`` when it is one. The first
    failing run (non-zero exit) stops the measurement; its stderr (or stdout) tail
    becomes ``"error"``.
    """
    result: dict[str, Any] = {"name": name or " ".join(argv), "wall_s": None, "peak_rss_mib": None}
    full_env = _environment(env)
    walls: list[float] = []
    rss: list[float] = []
    cpus: list[float] = []
    out = b""
    for i in range(warmup + runs):
        rc, wall, rss_mib, out, err, cpu = _run_once(argv, full_env, capture)
        if rc != 0:
            why = output_tail(err) or output_tail(out) or "no output"
            result["error"] = f"exit {rc}: {why}"
            _add_detail(result, out)
            return result
        if i >= warmup:
            walls.append(wall)
            rss.append(rss_mib)
            cpus.append(cpu)
    result["wall_s"] = round(statistics.median(walls), 4)
    result["cpu_s"] = round(statistics.median(cpus), 4)
    result["peak_rss_mib"] = round(statistics.median(rss), 1)
    result["runs"] = runs
    _add_detail(result, out)
    return result


def _add_detail(result: dict[str, Any], out: bytes) -> None:
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


def failed(name: str, error: str) -> dict[str, Any]:
    """A measurement that could not be taken."""
    return {"name": name, "wall_s": None, "peak_rss_mib": None, "error": error}
