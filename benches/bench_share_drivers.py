"""Which PostgreSQL driver for the team share service (issue #29): psycopg 3 (as shipped: blocking,
`share/service/pgstore.py` called from threads) against asyncpg 0.32 (in the event loop), on the
service's own workload against a cluster of its own.

The workload, the same for both: `--replicas` replicas, each with a pool and a `LISTEN` connection
on the service's channel; `--publishers` publishers, each appending `--turns` rows (about 2 KB of
html each) to a share of its own through the service's transaction (lock the share, read the
last seq, insert the row, `pg_notify`, commit); every replica, on each notification, reads the
rows after the last one it holds (as `hub.py` does). psycopg runs the shipped `PgStore` (its
`append`, `listen` and `rows_after`); asyncpg runs the same SQL through `asyncpg.create_pool`,
`add_listener` and `fetch`. Each driver runs in a process of its own.

Figures per driver: publish round trip (p50, p99), commit to every replica holding the row
(p50, p99, over every replica and row), the process's CPU seconds for the run, and the driver's
import time.

    pip install -e '.[bench]'   # asyncpg, bench only
    python benches/bench_share_drivers.py [--replicas 3] [--publishers 4] [--turns 150] [--repeat 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benches"))
if not os.environ.get("COMMANDCODE_BENCH_INSTALLED"):
    sys.path.insert(0, str(ROOT / "python"))

HTML = "<p>" + "x" * 2000 + "</p>"
CHANNEL = "commandcode_share"


def _cpu() -> float:
    times = os.times()
    return times.user + times.system


def _setup(url: str, publishers: int) -> tuple[str, list[str]]:
    """A user and one share per publisher, in a fresh schema (the shipped store makes its tables)."""
    from commandcode.share.service.pgstore import PgStore

    store = PgStore(url)
    store.create_token("bench")
    shares = [store.open_share("bench", f"session-{index}", "t", None, None)[0].id for index in range(publishers)]
    store.close()
    return "bench", shares


def run_psycopg(url: str, replicas: int, publishers: int, turns: int) -> dict[str, Any]:
    started = time.perf_counter()
    import psycopg  # noqa: F401

    import_ms = (time.perf_counter() - started) * 1000
    from commandcode.share.service.pgstore import PgStore

    user, shares = _setup(url, publishers)
    committed: dict[tuple[str, int], float] = {}
    arrived: list[float] = []
    lock = threading.Lock()
    stopping = threading.Event()
    stores = [PgStore(url) for _ in range(replicas)]
    held = [dict.fromkeys(shares, 0) for _ in range(replicas)]
    ready = threading.Barrier(replicas + 1)

    def listener(index: int) -> None:
        store = stores[index]
        first = [True]

        def on_change(share_id: str, what: str) -> None:
            if what.isdigit() and int(what) <= held[index][share_id]:
                return
            rows = store.rows_after(share_id, held[index][share_id])
            now = time.monotonic()
            with lock:
                for seq, *_ in rows:
                    arrived.append((now - committed[(share_id, seq)]) * 1000)
            if rows:
                held[index][share_id] = rows[-1][0]

        def on_resync() -> None:
            if first[0]:
                first[0] = False
                ready.wait()

        store.listen(on_change, on_resync, stopping, lambda: None)

    threads = [threading.Thread(target=listener, args=(index,), daemon=True) for index in range(replicas)]
    for thread in threads:
        thread.start()
    ready.wait()
    publish: list[float] = []
    cpu = _cpu()

    def publisher(share_id: str) -> None:
        store = PgStore(url)
        for seq in range(1, turns + 1):
            with lock:
                committed[(share_id, seq)] = time.monotonic()
            begun = time.perf_counter()
            store.append(user, share_id, [(seq, "row", HTML, seq)])
            with lock:
                publish.append((time.perf_counter() - begun) * 1000)
            time.sleep(0.005)
        store.close()

    workers = [threading.Thread(target=publisher, args=(share_id,)) for share_id in shares]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    deadline = time.monotonic() + 60
    while len(arrived) < replicas * publishers * turns and time.monotonic() < deadline:
        time.sleep(0.01)
    cpu = _cpu() - cpu
    stopping.set()
    for thread in threads:
        thread.join(5)
    return _figures("psycopg", import_ms, publish, arrived, cpu, replicas * publishers * turns)


SQL_OWNED = "SELECT owner, revoked_ms, expires_ms FROM shares WHERE id = $1 FOR UPDATE"
SQL_LAST = "SELECT COALESCE(MAX(seq), 0) FROM share_rows WHERE share_id = $1"
SQL_INSERT = "INSERT INTO share_rows (share_id, seq, kind, html, messages) VALUES ($1, $2, $3, $4, $5)"
SQL_AFTER = "SELECT seq, kind, html, messages FROM share_rows WHERE share_id = $1 AND seq > $2 ORDER BY seq"


async def _asyncpg(url: str, replicas: int, publishers: int, turns: int, import_ms: float) -> dict[str, Any]:
    import asyncpg

    user, shares = _setup(url, publishers)
    dsn, _, query = url.partition("?")
    host = query.removeprefix("host=")
    committed: dict[tuple[str, int], float] = {}
    arrived: list[float] = []
    pools = [await asyncpg.create_pool(dsn, host=host, min_size=1, max_size=8) for _ in range(replicas)]
    listeners = []
    tasks: set[asyncio.Task[None]] = set()
    held = [dict.fromkeys(shares, 0) for _ in range(replicas)]
    locks = [{share_id: asyncio.Lock() for share_id in shares} for _ in range(replicas)]

    for index in range(replicas):
        pool = pools[index]

        async def catch_up(share_id: str, what: str, index: int = index, pool: Any = pool) -> None:
            async with locks[index][share_id]:  # one read at a time per share, as the hub reads once for all
                if what.isdigit() and int(what) <= held[index][share_id]:
                    return
                rows = await pool.fetch(SQL_AFTER, share_id, held[index][share_id])
                now = time.monotonic()
                for row in rows:
                    arrived.append((now - committed[(share_id, row["seq"])]) * 1000)
                if rows:
                    held[index][share_id] = rows[-1]["seq"]

        def on_note(_connection: Any, _pid: int, _channel: str, payload: str, catch_up: Any = catch_up) -> None:
            share_id, _, what = payload.partition(" ")
            task = asyncio.ensure_future(catch_up(share_id, what))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

        connection = await asyncpg.connect(dsn, host=host)
        await connection.add_listener(CHANNEL, on_note)
        listeners.append(connection)
    publish: list[float] = []
    cpu = _cpu()

    async def publisher(share_id: str) -> None:
        pool = pools[0]
        for seq in range(1, turns + 1):
            committed[(share_id, seq)] = time.monotonic()
            begun = time.perf_counter()
            async with pool.acquire() as connection, connection.transaction():
                owner, _revoked, _expires = await connection.fetchrow(SQL_OWNED, share_id)
                assert owner == user
                last = await connection.fetchval(SQL_LAST, share_id)
                assert last == seq - 1
                await connection.execute(SQL_INSERT, share_id, seq, "row", HTML, seq)
                await connection.execute("SELECT pg_notify($1, $2)", CHANNEL, f"{share_id} {seq}")
            publish.append((time.perf_counter() - begun) * 1000)
            await asyncio.sleep(0.005)

    await asyncio.gather(*(publisher(share_id) for share_id in shares))
    deadline = time.monotonic() + 60
    while len(arrived) < replicas * publishers * turns and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    cpu = _cpu() - cpu
    for connection in listeners:
        await connection.close()
    for pool in pools:
        await pool.close()
    return _figures("asyncpg", import_ms, publish, arrived, cpu, replicas * publishers * turns)


def run_asyncpg(url: str, replicas: int, publishers: int, turns: int) -> dict[str, Any]:
    started = time.perf_counter()
    import asyncpg  # noqa: F401

    import_ms = (time.perf_counter() - started) * 1000
    return asyncio.run(_asyncpg(url, replicas, publishers, turns, import_ms))


def _figures(driver: str, import_ms: float, publish: list[float], arrived: list[float], cpu: float,
             expected: int) -> dict[str, Any]:
    from bench_share_service import _quantiles

    return {"driver": driver, "import_ms": round(import_ms, 1), "publish": _quantiles(publish),
            "fanout": _quantiles(arrived), "missing": expected - len(arrived), "cpu_s": round(cpu, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--publishers", type=int, default=4)
    parser.add_argument("--turns", type=int, default=150)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--driver", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.driver:
        run = run_psycopg if options.driver == "psycopg" else run_asyncpg
        print(json.dumps(run(options.url, options.replicas, options.publishers, options.turns)), flush=True)
        return
    from helpers.postgres import cluster

    with cluster() as postgres:
        for _ in range(options.repeat):  # interleaved, each in a fresh schema
            for driver in ("psycopg", "asyncpg"):
                postgres.sql("DROP TABLE IF EXISTS share_rows, shares, share_users")
                completed = subprocess.run([sys.executable, __file__, "--driver", driver, "--url", postgres.url,
                                            "--replicas", str(options.replicas), "--publishers",
                                            str(options.publishers), "--turns", str(options.turns)],
                                           capture_output=True, text=True, timeout=600)
                if completed.returncode != 0:
                    raise SystemExit(f"{driver} failed:\n{completed.stderr}")
                print(completed.stdout.strip(), flush=True)


if __name__ == "__main__":
    main()
