#!/usr/bin/env python3
"""What the HTTP client of the chat-completions provider costs to import, side by side, in one run.

    .venv/bin/python benches/bench_provider_import.py [--runs 21] [--json OUT]

Each row is a fresh interpreter (`python -c ...`, `-X importtime` off) timed whole, median and
minimum over `--runs`, minus the same for `python -c pass`:

0. **stdlib: http.client + ssl + json** — the floor of any stdlib client;
1. **ours: commandcode.agent.providers.http** — `http.client` + `ssl` + our SSE reader, what a
   session that calls a provider loads (`OpenAIChatModel` imports it on its first request);
2. **baseline: httpx2** (dependencies.md's pick, with its built-in SSE) — skipped when not
   installed (`pip install httpx2`);
3. **a session that never calls a provider**: `commandcode.agent.runtime` plus the offline model,
   checked to load neither `http.client` nor `httpx2` (printed as a yes/no column).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

ROWS = [
    ("stdlib: http.client + ssl + json", "import http.client, ssl, json"),
    ("ours: providers.http (http.client + ssl + SSE)", "import commandcode.agent.providers.http"),
    ("baseline: httpx2", "import httpx2"),
    ("no provider: agent.runtime + offline model", "import commandcode.agent.runtime"),
]
PROBE = "; import sys; print(int('http.client' in sys.modules or 'httpx2' in sys.modules))"


def _time(code: str, runs: int) -> tuple[float, float, str]:
    samples = []
    out = ""
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", code + PROBE], capture_output=True, text=True)
        samples.append((time.perf_counter() - start) * 1000)
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip().splitlines()[-1])
        out = done.stdout.strip()
    return statistics.median(samples), min(samples), out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--json", help="write the figures here too")
    args = parser.parse_args()
    base_median, base_min, _ = _time("pass", args.runs)
    results = []
    print(f"{'row':<48} {'median ms':>10} {'min ms':>8} {'http loaded':>12}")
    print(f"{'python -c pass (subtracted)':<48} {base_median:>10.1f} {base_min:>8.1f}")
    for label, code in ROWS:
        try:
            median, minimum, loaded = _time(code, args.runs)
        except RuntimeError as error:
            print(f"{label:<48} skipped ({error})")
            continue
        row = {"row": label, "median_ms": round(median - base_median, 1), "min_ms": round(minimum - base_min, 1),
               "http_client_loaded": loaded == "1"}
        results.append(row)
        print(f"{label:<48} {row['median_ms']:>10.1f} {row['min_ms']:>8.1f} {'yes' if row['http_client_loaded'] else 'no':>12}")
    ours = next((row for row in results if row["row"].startswith("ours")), None)
    theirs = next((row for row in results if row["row"].startswith("baseline")), None)
    if ours and theirs and ours["median_ms"] > 0:
        print(f"httpx2 / ours (median): {theirs['median_ms'] / ours['median_ms']:.2f}x")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
