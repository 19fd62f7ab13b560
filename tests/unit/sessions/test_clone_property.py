"""Property: for random trees with labels, compactions and branch summaries, a clone's context is
the source's, and every entry the clone keeps has its parent in the new file."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commandcode.agent import branching
from commandcode.sessions.reader import open_session
from commandcode.sessions.writer import SessionWriter
from helpers.checkpoints import new_session_files

OPERATION = st.tuples(st.sampled_from(["user", "assistant", "label", "compaction", "branch_summary", "jump", "unlabel"]),
                      st.integers(min_value=0, max_value=10_000))


def _write_random_tree(cwd: Path, operations: list[tuple[str, int]]) -> object:
    files = new_session_files(cwd)
    with SessionWriter(files, str(cwd)) as writer:
        written: list[str] = [writer.append_message({"role": "user", "content": "root prompt"})]
        writer.append_message({"role": "assistant", "content": [{"type": "text", "text": "root answer"}]})
        written.append(writer.leaf_id or "")
        writer.commit(force=True)
        for number, (kind, pick) in enumerate(operations):
            target = written[pick % len(written)]
            if kind in ("user", "assistant"):
                content = [{"type": "text", "text": f"{kind} {number}"}]
                written.append(writer.append_message({"role": kind, "content": content}))
            elif kind == "label":
                written.append(writer.append_entry("label", {"targetId": target, "label": f"label {number}"}))
            elif kind == "unlabel":
                written.append(writer.append_entry("label", {"targetId": target}))
            elif kind == "compaction":
                path = open_session(files.transcript).path_ids()
                first_kept = path[pick % len(path)] if path else target
                written.append(writer.append_entry("compaction", {"summary": f"compacted {number}",
                                                                  "firstKeptEntryId": first_kept, "tokensBefore": 10}))
            elif kind == "branch_summary":
                written.append(writer.append_entry("branch_summary", {"fromId": target, "summary": f"branch {number}"},
                                                   parent_id=target))
            else:
                writer.leaf_id = target
            writer.commit(force=True)
    return files


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(OPERATION, max_size=30))
def test_a_clones_context_is_the_sources(home: Path, operations: list[tuple[str, int]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder).resolve()
        files = _write_random_tree(cwd, operations)
        source = open_session(files.transcript)  # type: ignore[attr-defined]
        result = branching.clone_session(files, cwd)  # type: ignore[arg-type]
        clone = open_session(result.files.transcript)
        assert clone.context().messages == source.context().messages
        assert clone.anomalies.unknown_parents == 0 and not clone.anomalies.cycle_detected
        entries = [json.loads(line) for line in result.files.transcript.read_text().splitlines()[1:]]
        ids = {entry["id"] for entry in entries}
        assert all(entry["parentId"] is None or entry["parentId"] in ids for entry in entries)
        assert sum(entry["parentId"] is None for entry in entries) <= 1
        expected: dict[str, str] = {}  # the labels of the path's label entries, newest wins (ref §8)
        for entry in source.read_entries(source.path_ids()):
            if entry["type"] == "label" and entry["targetId"] in ids:
                if entry.get("label"):
                    expected[entry["targetId"]] = entry["label"]
                else:
                    expected.pop(entry["targetId"], None)
        assert clone.labels() == expected
