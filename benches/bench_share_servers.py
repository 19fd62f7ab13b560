"""Which HTTP server for the share service (issue #29): today's stdlib `ThreadingHTTPServer` (a
thread per open stream; the service as shipped, `share/service/app.py`) against an ASGI server
(uvicorn + starlette, one event loop; a bench-only app with the same publish and event-stream
endpoints over the same store), each one replica with 300 open event streams.

Per server: publish-to-every-viewer latency over `--turns` publishes (p50, p99, max over every
viewer), the server's resident memory with the streams open, its CPU seconds for the run, and
its import-and-start time. Viewers run in three processes of their own, as in
bench_share_service.py. Both servers use a SQLite store (`sqlite:///…`), so the figures are the
HTTP servers' own.

    pip install uvicorn starlette   # bench only
    python benches/bench_share_servers.py [--viewers 300] [--turns 40]
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


def asgi_app(store_url: str) -> Any:
    """The ASGI variant: publish and event-stream endpoints over the same store, fan-out by asyncio."""
    import asyncio

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    from commandcode.errors import ShareServiceError
    from commandcode.share.service.main import open_store
    from commandcode.share.service.store import Row

    store = open_store(store_url)
    rows: dict[str, list[Row]] = {}
    changed: dict[str, asyncio.Condition] = {}

    async def publish(request: Request) -> Response:
        share_id = request.path_params["share_id"]
        token = (request.headers.get("authorization") or "").removeprefix("Bearer ")
        body = await request.json()
        items = [(row["seq"], row["kind"], row["html"], row["messages"]) for row in body["rows"]]
        try:
            user = await asyncio.to_thread(store.user_for, token)
            if user is None:
                return JSONResponse({"error": "wrong or missing publisher token"}, 401)
            stored, last = await asyncio.to_thread(store.append, user, share_id, items)
        except ShareServiceError as error:
            return JSONResponse({"error": str(error)}, error.status)
        held = rows.setdefault(share_id, [])
        held.extend(row for row in items if row[0] > len(held))
        condition = changed.setdefault(share_id, asyncio.Condition())
        async with condition:
            condition.notify_all()
        return JSONResponse({"stored": stored, "last": last})

    async def events(request: Request) -> Response:
        share_id = request.path_params["share_id"]
        record = await asyncio.to_thread(store.share, share_id)
        if record is None or not record.secret_ok(request.query_params.get("secret", "")):
            return Response("no", 403)
        if share_id not in rows:
            rows[share_id] = await asyncio.to_thread(store.rows_after, share_id, 0)
        condition = changed.setdefault(share_id, asyncio.Condition())
        sent = int(request.headers.get("last-event-id") or 0)

        async def stream() -> Any:
            nonlocal sent
            yield b"retry: 1000\n\n"
            while True:
                async with condition:
                    await condition.wait_for(lambda: len(rows[share_id]) > sent)
                new = rows[share_id][sent:]
                sent = new[-1][0]
                yield "".join(f"id: {seq}\nevent: {kind}\ndata: {json.dumps({'html': html, 'messages': count})}\n\n"
                              for seq, kind, html, count in new).encode()

        return StreamingResponse(stream(), media_type="text/event-stream")

    return Starlette(routes=[Route("/api/shares/{share_id}/rows", publish, methods=["POST"]),
                             Route("/s/{share_id}/events", events)])


def serve_asgi(store_url: str) -> None:
    import socket

    import uvicorn

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    print(f"share service at http://127.0.0.1:{listener.getsockname()[1]}", file=sys.stderr, flush=True)
    uvicorn.Server(uvicorn.Config(asgi_app(store_url), log_level="error", backlog=1024)).run(sockets=[listener])


def _rss_kb(pid: int) -> int:
    text = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"VmRSS:\s+(\d+)", text)
    return int(match.group(1)) if match else 0


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(kind: str, folder: Path, viewers: int, turns: int) -> dict[str, Any]:
    from bench_share_service import VIEWER_PROCESSES, _quantiles
    from commandcode.share.service.main import open_store

    store_url = f"sqlite:///{folder / f'{kind}.db'}"
    store = open_store(store_url)
    token = store.create_token("bench")
    record, secret, _ = store.open_share("bench", "session", "title", None, None)
    assert secret is not None
    command = ([sys.executable, "-m", "commandcode", "share", "serve", "--store", store_url, "--port", "0",
                "--max-per-client", "1000"]
               if kind == "threaded" else [sys.executable, __file__, "--asgi", store_url])
    started = time.perf_counter()
    server = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
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
    parser.add_argument("--asgi", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.asgi:
        serve_asgi(options.asgi)
        return
    with tempfile.TemporaryDirectory(prefix="share-servers-") as folder:
        for kind in ("threaded", "asgi"):
            print(json.dumps(measure(kind, Path(folder), options.viewers, options.turns)), flush=True)


if __name__ == "__main__":
    main()
