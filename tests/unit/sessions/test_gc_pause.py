"""Building a large context pauses the cyclic garbage collector (its full collections once cost
more than the building), and a small one leaves it alone: pausing means importing `gc`, which
costs a warm open more than the collector would (issue 30). Each test makes the collector run
at every allocation, so an unpaused build shows collections (counted right after it: the
collector, back on, runs again at the test's next allocation)."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from commandcode.sessions.context import GC_PAUSE_MIN_ENTRIES, build_messages
from commandcode.sessions.reader import open_session

HEADER = '{"type":"session","version":3,"id":"hdr","timestamp":"2026-01-02T03:04:05.000Z","cwd":"/w"}\n'


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """Counts the collections that start, with the collector running at every allocation."""
    started: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    threshold = gc.get_threshold()
    gc.set_threshold(1)
    gc.callbacks.append(count)
    try:
        yield started
    finally:
        gc.callbacks.remove(count)
        gc.set_threshold(*threshold)


def entries(count: int) -> list[dict[str, object]]:
    return [{"type": "message", "id": f"m{n}", "message": {"role": "user", "content": f"prompt {n}"}}
            for n in range(count)]


def test_a_large_build_runs_no_collection(collections: list[int]) -> None:
    built = entries(GC_PAUSE_MIN_ENTRIES)
    collections.clear()
    messages = build_messages(built, 0)
    during = len(collections)
    assert during == 0 and gc.isenabled()
    assert messages[-1]["content"] == [{"type": "text", "text": f"prompt {GC_PAUSE_MIN_ENTRIES - 1}"}]


def test_a_small_build_leaves_the_collector_running(collections: list[int]) -> None:
    built = entries(GC_PAUSE_MIN_ENTRIES - 1)
    collections.clear()
    build_messages(built, 0)
    assert collections and gc.isenabled()


def write_session(path: Path, text_bytes: int) -> None:
    """A chain of 400 user messages holding `text_bytes` of text between them."""
    lines = [HEADER]
    for n in range(400):
        lines.append(json.dumps({"type": "message", "id": f"m{n}", "parentId": f"m{n - 1}" if n else None,
                                 "timestamp": "2026-01-02T03:04:06.000Z",
                                 "message": {"role": "user", "content": [{"type": "text", "text": "x" * (text_bytes // 400)},
                                                                          {"type": "text", "text": "y"}]}}) + "\n")
    path.write_text("".join(lines), encoding="utf-8")


@pytest.mark.parametrize(("text_bytes", "paused"), [(2 << 20, True), (64 << 10, False)])
def test_the_native_parse_pauses_the_collector_from_a_mebibyte(
        home: Path, tmp_path: Path, collections: list[int], text_bytes: int, paused: bool) -> None:
    path = tmp_path / "big.jsonl"
    write_session(path, text_bytes)
    session = open_session(path)
    ids = session.path_ids()
    collections.clear()
    read = session.read_entries(ids)
    during = len(collections)
    # Paused, only the few allocations around the parse collect; running, each of the ~2,000
    # containers of the 400 entries does.
    assert (during < 10 if paused else during > 400) and gc.isenabled()
    assert [entry["id"] for entry in read] == ids and read[0]["message"]["content"][1] == {"type": "text", "text": "y"}
