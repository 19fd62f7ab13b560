"""Which HTTP server for the share service (issue #29): the service as shipped (uvicorn serving
the ASGI app, `share/service/app.py` + `replica.py`: one event loop) against the stdlib
`ThreadingHTTPServer` it replaced (a thread per open stream), each one replica with 300 open event
streams. The threaded service is run from a tree before the switch (`--threaded-tree`: a checkout
of 056e245 with its built `_native` module copied in), the same command line, the same store.

Per server: publish-to-every-viewer latency over `--turns` publishes (p50, p99, max over every
viewer), the server's resident memory with the streams open, its CPU seconds for the run, and
its import-and-start time. Viewers run in three processes of their own, as in
bench_share_service.py. Both servers use a SQLite store (`sqlite:///…`), so the figures are the
HTTP servers' own.

    git worktree add /tmp/threaded 056e245 && cp python/commandcode/_native*.so /tmp/threaded/python/commandcode/
    python benches/bench_share_servers.py [--threaded-tree /tmp/threaded] [--viewers 300] [--turns 40]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benches"))
if not os.environ.get("COMMANDCODE_BENCH_INSTALLED"):
    sys.path.insert(0, str(ROOT / "python"))


def _rss_kb(pid: int) -> int:
    text = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"VmRSS:\s+(\d+)", text)
    return int(match.group(1)) if match else 0


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(kind: str, folder: Path, viewers: int, turns: int, tree: Path | None = None) -> dict[str, Any]:
    """One server's figures; `tree`: the source tree to run it from (None: this one)."""
    from bench_share_service import VIEWER_PROCESSES, _quantiles
    from commandcode.share.service.main import open_store

    store_url = f"sqlite:///{folder / (kind.split()[0] + '.db')}"
    store = open_store(store_url)
    token = store.create_token("bench")
    record, secret, _ = store.open_share("bench", "session", "title", None, None)
    assert secret is not None
    command = [sys.executable, "-m", "commandcode", "share", "serve", "--store", store_url, "--port", "0",
               "--max-per-client", "1000"]
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree / "python")
    started = time.perf_counter()
    server = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
    assert server.stderr is not None
    line = server.stderr.readline()
    match = re.search(r":(\d+)", line.split("http://", 1)[-1])
    assert match, line
    port = int(match.group(1))
    start_s = time.perf_counter() - started
    try:
        events = f"/s/{record.id}/events?secret={secret}"
        groups = [subprocess.Popen([sys.executable, str(ROOT / "benches" / "bench_share_service.py"), "--viewer-process",
                                    str(port), events, str(group), str(viewers // VIEWER_PROCESSES)],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                  for group in range(VIEWER_PROCESSES)]
        for group in groups:
            assert group.stdout is not None and group.stdout.readline().strip() == "connected"
        cpu_before = _cpu_seconds(server.pid)
        published: dict[int, float] = {}
        for seq in range(1, turns + 1):
            body = json.dumps({"rows": [{"seq": seq, "kind": "row", "html": f"<p>row {seq}</p>" + "x" * 2000,
                                         "messages": seq}]}).encode()
            request = urllib.request.Request(f"http://127.0.0.1:{port}/api/shares/{record.id}/rows", data=body,
                                             headers={"Authorization": f"Bearer {token}"}, method="POST")
            published[seq] = time.monotonic()
            with urllib.request.urlopen(request, timeout=30) as response:
                assert response.status == 200
            time.sleep(0.25)
        rss_kb = _rss_kb(server.pid)
        latencies: list[float] = []
        for group in groups:
            output, _ = group.communicate(f"{turns}\n", timeout=120)
            for arrived in json.loads(output):
                latencies.extend((at - published[int(seq)]) * 1000 for seq, at in arrived.items())
        return {"server": kind, "viewers": viewers, "publishes": turns, "missing": viewers * turns - len(latencies),
                **_quantiles(latencies), "rss_mb": round(rss_kb / 1024, 1),
                "cpu_s": round(_cpu_seconds(server.pid) - cpu_before, 2), "start_s": round(start_s, 2)}
    finally:
        server.terminate()
        server.wait(timeout=30)
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--viewers", type=int, default=300)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--threaded-tree", type=Path, help="a tree from before the switch (the threaded service)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="share-servers-") as folder:
        if options.threaded_tree is not None:
            print(json.dumps(measure("threaded", Path(folder), options.viewers, options.turns,
                                     options.threaded_tree.resolve())), flush=True)
        print(json.dumps(measure("asgi (shipped)", Path(folder), options.viewers, options.turns)), flush=True)


if __name__ == "__main__":
    main()
