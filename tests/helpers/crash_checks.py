"""The checks the crash harness runs after every point, whatever the operation: every transcript
opens (whole header, the index agreeing with a cold scan, reported turns on the active path, no
record glued onto a fragment), every checkpoints line is whole JSON and every object it names is in
the store (loose or in a pack) and verifies, every meta file is a JSON object holding a reported name."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from helpers.crash_workspace import Workspace

_GLUED = re.compile(rb'\{"type":"')


def check_sessions(workspace: Workspace, violations: list[str], label: str) -> None:
    from commandcode import _native
    from commandcode.sessions.reader import open_session

    for transcript in workspace.transcripts():
        session_id = transcript.name[: -len(".jsonl")]
        try:
            session = open_session(transcript)
            context = session.context()
        except Exception as error:
            violations.append(f"{label}: {transcript.name} does not open: {type(error).__name__}: {error}")
            continue
        header = session.header
        if header.synthesized or header.line != 1:
            # A half-created transcript: the real CLI takes a file whose first line is not a
            # header for v1 and "migrates" it to an empty session (format §4.5).
            violations.append(f"{label}: {transcript.name} has no whole header line ({transcript.stat().st_size} bytes)")
        if workspace.index:
            cold = _native.scan_session(str(transcript), tail=False)  # the whole scan, no sidecar
            # The context first: the open may have read only the transcript's end (format §9).
            plan_ids, strip_until = session.context_plan()
            if (context.leaf_id, plan_ids, strip_until) != (cold.leaf_id, list(cold.context_plan()[0]), cold.context_plan()[2]):
                violations.append(f"{label}: {transcript.name}: the open gives another context than a cold scan")
            warm = [row.id for row in session.tree_rows()]
            if [row[0] for row in cold.tree_rows()] != warm or len(cold.skipped) != len(session.skipped_lines):
                violations.append(f"{label}: {transcript.name}: the index gives another view than a cold scan")
        texts = set()
        for message in context.messages:
            for block in message.get("content", []):
                if isinstance(block, dict) and isinstance(block.get("text"), str):
                    texts.add(block["text"])
        joined = "\n".join(texts)
        for marker in workspace.reported.get(session_id, []):
            if marker not in joined:
                violations.append(f"{label}: {transcript.name}: reported turn {marker} is not on the active path")
        name = workspace.reported_names.get(session_id)
        if name is not None and session.name not in {name, *workspace.pending_names.get(session_id, ())}:
            violations.append(f"{label}: {transcript.name}: reported name {name!r}, session says {session.name!r}")
        for skipped in session.skipped_lines:
            raw = _read_range(transcript, skipped.offset, skipped.length)
            for match in _GLUED.finditer(raw, 1):
                try:
                    value = json.loads(raw[match.start():])
                except ValueError:
                    continue
                if isinstance(value, dict) and "id" in value:
                    violations.append(f"{label}: {transcript.name} line {skipped['line']}: a record glued onto a fragment")
                    break

def check_checkpoints_and_objects(workspace: Workspace, violations: list[str], label: str) -> None:
    from commandcode import _native

    objects = workspace.data / "objects"
    referenced: set[str] = set()
    for path in sorted((workspace.data / "projects").glob("*/*.checkpoints.jsonl")):
        for number, line in enumerate(path.read_bytes().split(b"\n"), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line[1:] if line.startswith(b"#") else line)  # a hidden line (format §6.1)
            except ValueError:
                violations.append(f"{label}: {path.name} line {number} is not whole JSON")
                continue
            for item in record.get("files", []):
                if item.get("algo") == "blake3" and item.get("hash"):
                    referenced.add(item["hash"])
                if isinstance(item.get("blake3"), str):  # a compatible backup's copy in our store
                    referenced.add(item["blake3"])
    if not objects.is_dir():
        if referenced:
            violations.append(f"{label}: checkpoints name {len(referenced)} objects but there is no store")
        return
    store = _native.ObjectStore(str(objects))
    present = set()
    for folder in sorted(objects.iterdir()):
        if not (folder.is_dir() and len(folder.name) == 2):
            continue
        for path in folder.iterdir():
            if len(path.name) != 62:
                continue  # temp files are swept later
            content_id = folder.name + path.name
            present.add(content_id)
            status = path.stat()
            key = (content_id, status.st_ino, status.st_size)
            if key in workspace.verified_objects:
                continue
            try:
                store.verify(content_id)
            except Exception as error:
                violations.append(f"{label}: object {content_id[:12]} fails verification: {error}")
                continue
            workspace.verified_objects.add(key)
    _check_packed(store, present, workspace, violations, label)
    for missing in sorted(referenced - present):
        violations.append(f"{label}: a checkpoint names object {missing[:12]}, which is not in the store")


def _check_packed(store: Any, present: set[str], workspace: Workspace, violations: list[str], label: str) -> None:
    """Every object a pack holds (a redo point's, format §7.2) and no loose file does verifies;
    each is added to `present`."""
    for content_id in store.packed_ids():
        if content_id in present:
            continue
        present.add(content_id)
        if (content_id, -1, -1) in workspace.verified_objects:
            continue  # a pack is never modified
        try:
            store.verify(content_id)
        except Exception as error:
            violations.append(f"{label}: packed object {content_id[:12]} fails verification: {error}")
            continue
        workspace.verified_objects.add((content_id, -1, -1))

def check_meta(workspace: Workspace, violations: list[str], label: str) -> None:
    for path in sorted((workspace.data / "projects").glob("*/*.meta.json")):
        try:
            value = json.loads(path.read_bytes())
        except ValueError:
            violations.append(f"{label}: {path.name} is not whole JSON")
            continue
        if not isinstance(value, dict):
            violations.append(f"{label}: {path.name} is not a JSON object")
            continue
        session_id = path.name[: -len(".meta.json")]
        name = workspace.reported_names.get(session_id)
        if name is not None and value.get("title") not in {name, *workspace.pending_names.get(session_id, ())}:
            violations.append(f"{label}: {path.name}: reported name {name!r} not in the meta ({value.get('title')!r})")


def _read_range(path: Path, offset: int, length: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(offset)
        return handle.read(length)
