"""The index sidecar is only a cache: whatever happens to a transcript behind its back (appends,
torn appends, truncations, rewrites, touches, a damaged or deleted sidecar), opening through
the sidecar gives exactly what a plain scan gives.

Owns: the property test of `commandcode._native.scan_session(path, index_path)` against
`scan_session(path, tail=False)` (the whole scan). Imports the native module directly (no front end involved).
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import commandcode._native as native

HEADER = '{"type":"session","version":3,"id":"s-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}'


def lookups(index: Any, ids: list[str]) -> list[Any]:
    """What `envelope`, `in` and `read_entries` say about each id (`KeyError` included)."""
    out: list[Any] = []
    for entry_id in ids:
        try:
            envelope = index.envelope(entry_id)
        except KeyError:
            envelope = "missing"
        try:
            entries = index.read_entries([entry_id])
        except KeyError:
            entries = "missing"
        out.append((entry_id, entry_id in index, envelope, entries))
    return out


def observe(index: Any) -> dict[str, Any]:
    """Everything a `SessionIndex` tells, as plain data. Asks cheap questions first, so that an
    index loaded from its sidecar answers them before anything decodes the entry list."""
    first_entries = index.read_first_users(3)
    first = [entry["id"] for entry in first_entries]
    early = {
        "first_entries": first_entries,
        "context_entries": index.read_entries(index.context_plan()[0][:5]),
        "lookups": lookups(index, ["e1", "e2", "nowhere", "zz", *first]),
    }
    return early | {
        "header": index.header,
        "format": index.format,
        "legacy_entrypoint": index.legacy_entrypoint,
        "file_size": index.file_size,
        "ends_with_newline": index.ends_with_newline,
        "has_bom": index.has_bom,
        "line_count": index.line_count,
        "entry_count": index.entry_count,
        "skipped": index.skipped,
        "anomalies": index.anomalies,
        "leaf_id": index.leaf_id,
        "path_length": index.path_length,
        "path_ids": index.path_ids(),
        "context_plan": index.context_plan(),
        "context": index.read_context(),
        "context_raw": index.read_context_raw(),
        "tree_rows": index.tree_rows(),
        "labels": index.labels(),
        "name": index.name,
        "model": index.model,
        "effort": index.effort,
        "message_count": index.message_count,
        "last_timestamp": index.last_timestamp,
        "message_ids": index.message_ids(),
        "first_users": index.read_first_users(),
        "first_users_all": index.read_first_users(10_000),
    }


def entry_line(rng: random.Random, number: int, ids: list[str]) -> str:
    """One random line: mostly valid entries (with known, unknown or repeated parents), some
    garbage."""
    entry_id = rng.choice(ids) if ids and rng.random() < 0.05 else f"e{number}"
    if ids and rng.random() < 0.85:
        parent = f'"{rng.choice(ids[-3:]) if rng.random() < 0.8 else rng.choice(ids)}"'
    else:
        parent = rng.choice(["null", '"nowhere"'])
    stamp = f"2026-01-01T00:{number % 60:02d}:{rng.randrange(60):02d}.000Z"
    envelope = f'"id":"{entry_id}","parentId":{parent},"timestamp":"{stamp}"'
    kind = rng.randrange(14)
    if kind < 6:
        role = rng.choice(["user", "assistant"])
        meta = rng.choice(["", ',"meta":{"isMeta":true}', f',"meta":{{"messageId":"m{number}"}}'])
        text = rng.choice(["hi", 'say \\"x\\"\\n' * rng.randrange(30), "é→😀" * rng.randrange(5)])
        model = ',"model":"m-a"' if role == "assistant" and rng.random() < 0.3 else ""
        line = f'{{"type":"message",{envelope},"message":{{"role":"{role}","content":[{{"type":"text","text":"{text}"}}]{meta}}}{model}}}'
    elif kind == 6:
        first_kept = rng.choice(ids) if ids else ""
        strip = ',"stripThinkingFromKept":true' if rng.random() < 0.5 else ""
        line = f'{{"type":"compaction",{envelope},"summary":"s","firstKeptEntryId":"{first_kept}","tokensBefore":1{strip}}}'
    elif kind == 7:
        target = rng.choice(ids) if ids else "x"
        label = f',"label":"l{number}"' if rng.random() < 0.7 else ""
        line = f'{{"type":"label",{envelope},"targetId":"{target}"{label}}}'
    elif kind == 8:
        name = rng.choice(['"name":"n"', '"name":"  "', '"other":1'])
        line = f'{{"type":"session_info",{envelope},{name}}}'
    elif kind == 9:
        line = f'{{"type":"model_change",{envelope},"model":"m-{number}"}}'
    elif kind == 10:
        line = f'{{"type":"effort_change",{envelope},"effort":"high"}}'
    elif kind == 11:
        line = f'{{"type":"branch_summary",{envelope},"fromId":"root","summary":"b"}}'
    else:
        line = rng.choice(["", "   ", "not json", "[1,2]", '{"type":"nope"}', HEADER, '{"type":"message"'])
    if line.startswith("{") and rng.random() < 0.02:
        line = line[: rng.randrange(len(line))]  # corrupt in the middle
    ids.append(entry_id)
    return line


class Transcript:
    """A transcript on disk, changed behind the sidecar's back."""

    def __init__(self, directory: Path, seed: int) -> None:
        self.path = directory / "session.jsonl"
        self.sidecar = directory / "index" / "project" / "session.idx"
        self.rng = random.Random(seed)
        self.ids: list[str] = []
        self.number = 0
        self.path.write_bytes(b"")

    def lines(self, count: int) -> str:
        out = []
        for _ in range(count):
            self.number += 1
            out.append(entry_line(self.rng, self.number, self.ids))
        return "".join(line + "\n" for line in out)

    def append(self, count: int, torn: bool) -> None:
        text = self.lines(count)
        if torn and text:
            text = text[: self.rng.randrange(len(text))]
        with self.path.open("ab") as file:
            file.write(text.encode())

    def truncate(self, fraction: float) -> None:
        size = self.path.stat().st_size
        os.truncate(self.path, int(size * fraction))

    def rewrite_same_size(self) -> None:
        data = bytearray(self.path.read_bytes())
        if data:
            position = self.rng.randrange(len(data))
            data[position] = self.rng.choice(b'x"{}\n 1')
            with self.path.open("r+b") as file:  # in place, same inode and size
                file.write(bytes(data))

    def replace(self, count: int) -> None:
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(HEADER + "\n" + self.lines(count))
        temporary.replace(self.path)

    def touch(self) -> None:
        stat = self.path.stat()
        os.utime(self.path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))

    def damage_sidecar(self) -> None:
        if self.sidecar.exists():
            data = bytearray(self.sidecar.read_bytes())
            if data:
                data[self.rng.randrange(len(data))] ^= 1 << self.rng.randrange(8)
                self.sidecar.write_bytes(bytes(data))

    def check(self) -> str:
        try:
            plain = observe(native.scan_session(self.path, tail=False))
        except Exception as error:  # a newer-version header: both must refuse alike
            with pytest.raises(type(error)):
                native.scan_session(self.path, self.sidecar)
            return "error"
        indexed = native.scan_session(self.path, self.sidecar)
        assert observe(indexed) == plain
        # Once more: now the sidecar is fresh (when it could be written).
        again = native.scan_session(self.path, self.sidecar)
        assert observe(again) == plain
        return str(indexed.source)


OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 12), st.booleans()),
        st.tuples(st.just("truncate"), st.floats(0.0, 1.0)),
        st.tuples(st.just("rewrite")),
        st.tuples(st.just("replace"), st.integers(0, 20)),
        st.tuples(st.just("touch")),
        st.tuples(st.just("damage")),
        st.tuples(st.just("delete_sidecar")),
        st.tuples(st.just("bom")),
    ),
    min_size=1,
    max_size=12,
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32), start=st.integers(0, 40), operations=OPERATIONS)
def test_the_sidecar_never_changes_what_a_scan_says(
    tmp_path_factory: pytest.TempPathFactory, seed: int, start: int, operations: list[tuple[Any, ...]]
) -> None:
    transcript = Transcript(tmp_path_factory.mktemp("index"), seed)
    transcript.replace(start)
    transcript.check()
    for operation in operations:
        match operation:
            case ("append", count, torn):
                transcript.append(count, torn)
            case ("truncate", fraction):
                transcript.truncate(fraction)
            case ("rewrite",):
                transcript.rewrite_same_size()
            case ("replace", count):
                transcript.replace(count)
            case ("touch",):
                transcript.touch()
            case ("damage",):
                transcript.damage_sidecar()
            case ("delete_sidecar",):
                transcript.sidecar.unlink(missing_ok=True)
            case ("bom",):
                transcript.path.write_bytes(b"\xef\xbb\xbf" + transcript.path.read_bytes())
        transcript.check()


def test_appends_are_scanned_incrementally(tmp_path: Path) -> None:
    transcript = Transcript(tmp_path, 7)
    transcript.path.write_text(HEADER + "\n" + "".join(
        f'{{"type":"message","id":"e{n}","parentId":{"null" if n == 0 else f"{chr(34)}e{n - 1}{chr(34)}"},'
        f'"timestamp":"t","message":{{"role":"user","content":[]}}}}\n'
        for n in range(50)
    ))
    # Opened from its end first; the whole scan `check` asks for writes the sidecar.
    assert transcript.check() == "tail"
    assert native.scan_session(transcript.path, transcript.sidecar).source == "loaded"
    with transcript.path.open("a") as file:
        file.write('{"type":"message","id":"x1","parentId":"e49","timestamp":"t","message":{"role":"user","content":[]}}\n')
    index = native.scan_session(transcript.path, transcript.sidecar)
    assert index.source == "appended"
    assert index.leaf_id == "x1"
    assert native.scan_session(transcript.path, transcript.sidecar).source == "loaded"


def test_without_an_index_path_nothing_is_written(tmp_path: Path) -> None:
    transcript = Transcript(tmp_path, 3)
    transcript.replace(10)
    for index in (native.scan_session(transcript.path), native.scan_session(transcript.path, tail=False)):
        assert index.source in ("tail", "scanned")  # `tail` when the end gives the context
        assert index.entry_count >= 0  # the whole scan, after a tail open
    assert not transcript.sidecar.parent.exists()
    assert native.scan_session(transcript.path, index_path=transcript.sidecar).entry_count >= 0
    assert transcript.sidecar.exists()
    assert transcript.sidecar.stat().st_mode & 0o777 == 0o600
