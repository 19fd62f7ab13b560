"""The interop operations of the crash harness (`helpers.crash_harness`): `import claude`.

`import_claude`: `commandcode import claude PATH --json` of a Claude Code session with a
file-history backup of a few hundred kilobytes (new bytes each run, so kills land in the content
store's writes, the checkpoints file, the meta, the subagent's run files and the transcript) and
one subagent launched by its `Agent` call; about a third of the runs
import an earlier source again (one whose import was killed must complete now; one that was
imported says so). After every point, on top of the harness's checks (every transcript opens,
whole header, every checkpoint's object exists and hashes right):

- the Claude tree (`CLAUDE_CONFIG_DIR`) is byte-identical to what the harness wrote;
- every imported session is complete: its meta names its source (`importedFrom`), it holds the
  source's prompt, and its one checkpoint's object holds the backup's bytes, under the path
  Claude Code restores (`src/big.txt` of the project), with the real CLI's raw sha256 blob in
  `file-history/<id>/` (the source's second backup, a FIFO, is skipped, never waited on);
- every imported session has its subagent as one whole sub-agent run (its transcript and its
  meta, `completed`, under the `Agent` call, holding the subagent's prompt and reply);
- every import a run reported (`--json` read whole) exists.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import uuid
from pathlib import Path
from typing import Any

INTEROP_OPERATIONS = ("import_claude",)
BACKUP_BYTES = 300_000


def claude_dir(workspace: Any) -> Path:
    return Path(workspace.root) / "claude-config"


def seed(workspace: Any) -> None:
    state = workspace.branching
    state["sources"] = {}  # source session id -> (transcript, backup bytes, marker)
    state["reported"] = set()
    claude_dir(workspace).mkdir(parents=True, exist_ok=True)


def _new_source(workspace: Any, marker: str) -> str:
    session_id = str(uuid.uuid4())
    project = str(workspace.project)
    slug = "".join(char if char.isalnum() else "-" for char in project)
    folder = claude_dir(workspace) / "projects" / slug
    folder.mkdir(parents=True, exist_ok=True)
    history = claude_dir(workspace) / "file-history" / session_id
    history.mkdir(parents=True)
    backup = random.Random(marker).randbytes(BACKUP_BYTES)
    target = os.path.join(project, "src", "big.txt")
    name = hashlib.sha256(target.encode()).hexdigest()[:16] + "@v1"
    (history / name).write_bytes(backup)
    os.mkfifo(history / (hashlib.sha256(b"pipe").hexdigest()[:16] + "@v1"))  # skipped with a warning
    stamp = "2026-01-02T03:04:05.000Z"
    prompt, launch, result, reply = (str(uuid.uuid4()) for _ in range(4))
    base = {"sessionId": session_id, "cwd": project, "version": "2.1.332", "isSidechain": False, "timestamp": stamp}
    call = f"toolu_{marker}"
    lines = [
        {**base, "type": "user", "uuid": prompt, "parentUuid": None,
         "message": {"role": "user", "content": f"{marker} import claude"}},
        {"type": "file-history-snapshot", "messageId": prompt, "isSnapshotUpdate": False,
         "snapshot": {"messageId": prompt, "timestamp": stamp, "trackedFileBackups": {
             "src/big.txt": {"backupFileName": name, "version": 1, "backupTime": stamp,
                             "realParentDir": os.path.join(project, "src")},
             "pipe.txt": {"backupFileName": hashlib.sha256(b"pipe").hexdigest()[:16] + "@v1", "version": 1,
                          "backupTime": stamp, "realParentDir": project}}}},
        {**base, "type": "assistant", "uuid": launch, "parentUuid": prompt,
         "message": {"id": "msg_0", "role": "assistant", "model": "claude-stub", "type": "message",
                     "content": [{"type": "tool_use", "id": call, "name": "Agent",
                                  "input": {"description": "helper", "prompt": f"{marker} sub"}}],
                     "usage": {"input_tokens": 1, "output_tokens": 1}}},
        {**base, "type": "user", "uuid": result, "parentUuid": launch,
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": "done"}]}},
        {**base, "type": "assistant", "uuid": reply, "parentUuid": result,
         "message": {"id": "msg_1", "role": "assistant", "model": "claude-stub", "type": "message",
                     "content": [{"type": "text", "text": "imported reply"}],
                     "usage": {"input_tokens": 1, "output_tokens": 1}}},
    ]
    path = folder / f"{session_id}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    _subagent(path, base, marker, call)
    workspace.branching["sources"][session_id] = (path, backup, marker)
    _remember_tree(workspace)
    return session_id


def _subagent(transcript: Path, base: dict[str, Any], marker: str, call: str) -> None:
    """The subagent the `Agent` call launched, as Claude Code 2.1.332 keeps it beside the session."""
    folder = transcript.with_suffix("") / "subagents"
    folder.mkdir(parents=True)
    agent_id = "a" + hashlib.sha256(marker.encode()).hexdigest()[:16]
    task, answer = str(uuid.uuid4()), str(uuid.uuid4())
    sidechain = {**base, "isSidechain": True, "agentId": agent_id}
    lines = [
        {**sidechain, "type": "user", "uuid": task, "parentUuid": None,
         "message": {"role": "user", "content": f"{marker} sub"}},
        {**sidechain, "type": "assistant", "uuid": answer, "parentUuid": task,
         "message": {"id": "msg_s", "role": "assistant", "model": "claude-stub", "type": "message",
                     "content": [{"type": "text", "text": f"{marker} sub reply"}],
                     "usage": {"input_tokens": 1, "output_tokens": 1}}},
    ]
    (folder / f"agent-{agent_id}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (folder / f"agent-{agent_id}.meta.json").write_text(json.dumps(
        {"agentType": "general-purpose", "description": "helper", "toolUseId": call, "finished": True}))


def _remember_tree(workspace: Any) -> None:
    workspace.branching["claude_tree"] = _tree(claude_dir(workspace))


def _tree(root: Path) -> dict[str, str]:
    out = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            if path.is_fifo():  # the planted FIFO backup: never opened, by the import or by this check
                out[str(path.relative_to(root))] = "fifo"
                continue
            out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def next_run(workspace: Any, rng: random.Random, marker: str) -> list[str]:
    sources = workspace.branching["sources"]
    if sources and rng.random() < 0.35:
        session_id = rng.choice(sorted(sources))
    else:
        session_id = _new_source(workspace, marker)
    return ["import", "claude", str(sources[session_id][0]), "--json"]


def started(workspace: Any, args: list[str]) -> None:
    return None


def record_report(workspace: Any, args: list[str], stdout: str) -> bool:
    try:
        value = json.loads(stdout)
    except ValueError:
        return False
    if not isinstance(value, dict) or "id" not in value:
        return False
    workspace.branching["reported"].add(str(value["id"]))
    return True


def check(workspace: Any, violations: list[str], label: str) -> None:
    from commandcode.checkpoints.records import read_checkpoints
    from commandcode.checkpoints.store import BackupStore
    from commandcode.interop.importer import imported_id
    from commandcode.sessions.reader import open_session

    state = workspace.branching
    if _tree(claude_dir(workspace)) != state["claude_tree"]:
        violations.append(f"{label}: the Claude Code tree changed")
    by_id = {imported_id("claude", source): details for source, details in state["sources"].items()}
    seen = set()
    store = BackupStore()
    for transcript in workspace.transcripts():
        session_id = transcript.name[: -len(".jsonl")]
        if session_id not in by_id:
            violations.append(f"{label}: {session_id} is no import of a source")
            continue
        seen.add(session_id)
        _source, backup, marker = by_id[session_id]
        try:
            meta = json.loads(transcript.with_name(f"{session_id}.meta.json").read_bytes())
        except (OSError, ValueError):
            violations.append(f"{label}: import {session_id} has no whole meta")
            continue
        if not isinstance(meta, dict) or (meta.get("importedFrom") or {}).get("tool") != "claude":
            violations.append(f"{label}: import {session_id}'s meta names no source: {meta!r}")
        texts = json.dumps(open_session(transcript).context().messages)
        if marker not in texts:
            violations.append(f"{label}: import {session_id} lacks the source's prompt")
        _check_run(transcript, marker, violations, f"{label}: import {session_id}")
        records = read_checkpoints(transcript.with_name(f"{session_id}.checkpoints.jsonl"))
        items = [item for record in records for item in record.files]
        objects = [item.store_object for item in items]
        if len(objects) != 1 or objects[0] is None or store.read(objects[0]) != backup:
            violations.append(f"{label}: import {session_id}'s checkpoint does not hold the backup")
            continue
        if items[0].path != os.path.join(str(workspace.project), "src", "big.txt"):
            violations.append(f"{label}: import {session_id}'s backup names {items[0].path}, not src/big.txt")
        blob = Path(workspace.data) / "file-history" / session_id / hashlib.sha256(backup).hexdigest()
        if items[0].hash != hashlib.sha256(backup).hexdigest() or not blob.is_file() or blob.read_bytes() != backup:
            violations.append(f"{label}: import {session_id} lacks the real CLI's raw blob of its backup")
    if seen:
        workspace.notes["checks_with_imports"] = workspace.notes.get("checks_with_imports", 0) + 1
    for reported in state["reported"] - seen:
        violations.append(f"{label}: the reported import {reported} does not exist")


def _check_run(transcript: Path, marker: str, violations: list[str], label: str) -> None:
    """The imported session's one sub-agent run is whole (see the module docstring)."""
    from commandcode.sessions.files import SessionFiles
    from commandcode.sessions.subagent_runs import list_subagent_runs

    found = list_subagent_runs(SessionFiles.for_transcript(transcript), with_messages=True)
    runs = [(run.tool_use_id, run.status, [message["role"] for message in run.messages]) for run in found.runs]
    if found.warnings or runs != [(f"toolu_{marker}", "completed", ["user", "assistant"])]:
        violations.append(f"{label}'s subagent is no whole run: {runs} {found.warnings}")
    elif f"{marker} sub reply" not in json.dumps([run.messages for run in found.runs]):
        violations.append(f"{label}'s run lacks the subagent's reply")
