#!/usr/bin/env python3
"""The tree navigator's first screen on a huge session, side by side with Textual's own start-up.

    .venv/bin/python benches/bench_tree_screen.py [--size 1GB] [--seed 1] [--data /work/bench/data] [--runs 3]

Each run is a fresh process (`--child`), so nothing is cached in Python between runs, on the session
`bench_fork.py` links into `--work`; the index sidecar is warm (one unmeasured open first builds it, as any earlier command would have). A run
times, inside the process, from before `open_session` to the first frame Textual has painted:

1. **baseline**: a Textual app showing one `Static` (start-up of Textual and its first paint);
2. **tree screen**: `open_session` + `TreeScreen` over the whole session (every branch) to its
   first painted frame, the cursor on the leaf;

and reports the medians, the difference ("beyond start-up", the issue's target: under 1 s at
1 GB), how many entries had their text read for that screen, the time to page to the top
and to the bottom (scrolling never loads the whole history), and the time of each filter the
`f` key cycles through (no tools, user only, labeled only, back to default), from the key to the
repainted screen. Side by side with the filters, a third kind of run:

3. **read every message**: what "no tools" and "user only" cost before the scan recorded each
   message's tool-only flag (every message line read and described once, `tree_model.describe`). Results go to stdout as a table and,
with `--json OUT`, as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import ClassVar

BENCHES = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHES))

from bench_fork import linked_session, session_options


async def _first_paint(make_screen, *, scroll: bool) -> dict[str, float]:
    from commandcode.ui.app import ScreenApp

    start = time.perf_counter()
    screen = make_screen()
    app = ScreenApp(screen)
    result: dict[str, float] = {}
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        result["first_screen_s"] = time.perf_counter() - start
        if scroll:
            from commandcode.ui.widgets.tree_view import TreeView

            view = app.screen.query_one(TreeView)
            result["texts_read"] = view.model.texts_read
            moment = time.perf_counter()
            await pilot.press("home")
            await pilot.pause()
            result["to_top_s"] = time.perf_counter() - moment
            moment = time.perf_counter()
            await pilot.press("end")
            await pilot.pause()
            result["to_bottom_s"] = time.perf_counter() - moment
            result["texts_read_after_scrolling"] = view.model.texts_read
            result["rows"] = len(view.model.rows)
            for name in ("no tools", "user only", "labeled only", "default"):
                moment = time.perf_counter()
                await pilot.press("f")
                await pilot.pause()
                assert view.model.filter == name
                result[f"filter {name} s"] = time.perf_counter() - moment
                result[f"filter {name} rows"] = len(view.model.rows)
            result["texts_read_after_filters"] = view.model.texts_read
        await pilot.press("q")
    return result


def child(kind: str, transcript: str) -> None:
    if kind == "baseline":
        from textual.binding import Binding, BindingType
        from textual.screen import Screen
        from textual.widgets import Static

        class Plain(Screen[None]):
            BINDINGS: ClassVar[list[BindingType]] = [Binding("q", "app.exit", "Quit")]

            def compose(self):  # type: ignore[no-untyped-def]
                yield Static("hello")

        result = asyncio.run(_first_paint(Plain, scroll=False))
    elif kind == "read_all":
        from commandcode.sessions.reader import open_session
        from commandcode.ui.tree_model import describe

        start = time.perf_counter()
        session = open_session(transcript)
        rows, _details = session.tree_table()
        ids = [row[0] for row in rows if row[2] == "message"]
        tools = 0
        for begin in range(0, len(ids), 1000):
            tools += sum(describe(entry).tool for entry in session.read_entries(ids[begin:begin + 1000]))
        result = {"read_all_s": time.perf_counter() - start, "messages": len(ids), "tool_only": tools}
    else:
        from commandcode.agent.runtime import AgentSession
        from commandcode.sessions.files import SessionFiles
        from commandcode.ui.screens.tree import TreeScreen

        files = SessionFiles.for_transcript(transcript)
        result = asyncio.run(_first_paint(lambda: TreeScreen(AgentSession(files, Path(transcript).parent, is_new=False)),
                                          scroll=True))
    print(json.dumps(result))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    session_options(parser)
    parser.add_argument("--child", nargs=2, metavar=("KIND", "TRANSCRIPT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return 0
    transcript, info, home = linked_session(args.size, args.seed, args.data, args.work.resolve())
    env = {**os.environ, "COMMANDCODE_HOME": str(home)}
    env.pop("COMMANDCODE_INDEX", None)
    subprocess.run([sys.executable, "-c", f"from commandcode import open_session; open_session({str(transcript)!r})"],
                   env=env, check=True)  # the index sidecar, warm
    rows: dict[str, list[dict[str, float]]] = {"baseline": [], "tree": [], "read_all": []}
    for _ in range(args.runs):
        for kind in rows:
            out = subprocess.run([sys.executable, __file__, "--child", kind, str(transcript)], env=env, check=True,
                                 capture_output=True, text=True).stdout
            rows[kind].append(json.loads(out.strip().splitlines()[-1]))
    median = {kind: {key: statistics.median(run[key] for run in runs) for key in runs[0]} for kind, runs in rows.items()}
    beyond = median["tree"]["first_screen_s"] - median["baseline"]["first_screen_s"]
    report = {"session": {"path": str(transcript), "bytes": info["bytes"], "entries": info["entries"]},
              "runs": args.runs, "median": median, "beyond_startup_s": round(beyond, 3)}
    print(f"session: {info['bytes']:,} bytes, {info['entries']:,} entries; {args.runs} runs, medians")
    print(f"| row | first screen (s) |\n|---|---|\n| Textual start-up (one Static) | {median['baseline']['first_screen_s']:.3f} |")
    print(f"| tree screen (open + layout + first paint) | {median['tree']['first_screen_s']:.3f} |")
    print(f"| beyond start-up | {beyond:.3f} (target < 1 s) |")
    tree = median["tree"]
    print(f"texts read for the first screen: {tree['texts_read']:.0f} of {tree['rows']:.0f} rows; "
          f"page to top {tree['to_top_s']:.3f} s, to bottom {tree['to_bottom_s']:.3f} s, "
          f"texts read after both: {tree['texts_read_after_scrolling']:.0f}")
    print("| filter (key `f`, to the repainted screen) | time (s) | rows |\n|---|---|---|")
    for name in ("no tools", "user only", "labeled only", "default"):
        print(f"| {name} | {tree[f'filter {name} s']:.3f} | {tree[f'filter {name} rows']:,.0f} |")
    old = median["read_all"]
    print(f"| (before: read and describe every message, {old['messages']:,.0f} of them) | {old['read_all_s']:.3f} | |")
    print(f"texts read after all four filters: {tree['texts_read_after_filters']:.0f}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
