"""The backup rule's writes in the crash harness (`helpers.crash_harness`): `blobs` (issue 32).

The workspace holds a session of three turns of ours (compatible backups of a few hundred
kilobytes each) and a fourth turn in the real CLI's shape (a raw sha256 blob, no `blake3`).
Before every run the real CLI's resume cleanup is played (every blob of `file-history/<sid>/`
that no line it can parse names is deleted), then one of: `rewind --to 1|2 --mode both` (hides
records: their real-CLI backups are put in our store first), `rewind --redo` (offers them again:
their blobs are written again), `sessions fork` (the copy's blobs), `sweep --archive` and
`sweep --restore` (the restored session's blobs), SIGKILLed at random moments. After every
point, on top of the harness's checks (every checkpoints line whole, every blake3 object there):

- every blob of every `file-history/<sid>/` holds the bytes its name says (none is torn);
- every backup any record names can still be restored by us (its blob, or our store's object);
- after a run that finished, every backup of a line the real CLI parses has its blob (the real
  CLI can restore every checkpoint it lists).
"""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

BLOB_OPERATIONS = ("blobs",)
FILE_BYTES = 100_000  # one argument holds at most 128 KiB


def parsed_records(path: Path) -> list[dict[str, Any]]:
    from helpers.two_programs import parsed_records as parsed

    return parsed(path)


def _checkpoints(workspace: Any, session_id: str) -> Path | None:
    found = list(Path(workspace.data, "projects").glob(f"*/{session_id}.checkpoints.jsonl"))
    return found[0] if found else None


def seed(workspace: Any) -> None:
    rng = random.Random(32)
    for turn in range(3):
        body = {"file_path": f"f{turn % 2}.txt", "content": "".join(rng.choice("abcdef\n") for _ in range(FILE_BYTES))}
        resume = ["-c"] if turn else []
        subprocess.run([sys.executable, "-m", "commandcode", *resume, "-p", f"turn {turn}\ncall write_file "
                        + json.dumps(body)], cwd=workspace.project, env=workspace.env(), check=True,
                       capture_output=True)
    [transcript] = [path for path in Path(workspace.data, "projects").glob("*/*.jsonl")
                    if ".checkpoints." not in path.name]
    workspace.session_id = transcript.stem
    # the real CLI's fourth turn: an edit of f0.txt backed up as its raw blob only
    before = (workspace.project / "f0.txt").read_bytes()
    digest = hashlib.sha256(before).hexdigest()
    folder = Path(workspace.data, "file-history", transcript.stem)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / digest).write_bytes(before)
    messages = [json.loads(line) for line in transcript.read_text().splitlines()[1:]]
    last = next(entry["message"]["meta"]["messageId"] for entry in reversed(messages) if entry.get("type") == "message")
    count = sum(1 for entry in messages if entry.get("type") == "message")
    record = {"id": "7c0e0000-0000-4000-8000-000000000004", "messageId": "7c0e0000-0000-4000-8000-000000000004",
              "turnNumber": 4, "createdAt": "2026-12-01T00:00:00.000Z", "prompt": "real turn",
              "messageCount": count, "lastMessageId": last,
              "files": [{"path": str(workspace.project / "f0.txt"), "hash": digest}]}
    checkpoints = transcript.with_name(f"{transcript.stem}.checkpoints.jsonl")
    checkpoints.write_text(checkpoints.read_text() + "\n" + json.dumps(record))
    (workspace.project / "f0.txt").write_text("the real cli's edit\n")
    workspace.branching.update({"finished": False})


def _clean_up_as_the_real_cli(workspace: Any) -> None:
    """What the real CLI does to every session it resumes: blobs no parsed line names go."""
    for folder in Path(workspace.data, "file-history").glob("*"):
        checkpoints = _checkpoints(workspace, folder.name)
        if checkpoints is None:
            continue
        named = {str(item.get("hash")) for record in parsed_records(checkpoints) for item in record.get("files") or []}
        for blob in folder.iterdir():
            if blob.name not in named:
                blob.unlink()


def next_run(workspace: Any, rng: random.Random, marker: str) -> list[str]:
    from commandcode.checkpoints.records import read_checkpoints
    from commandcode.checkpoints.redo_points import redoable
    from commandcode.workspace.archive import find_archive

    sid = workspace.session_id
    _clean_up_as_the_real_cli(workspace)
    workspace.branching["finished"] = False
    checkpoints = _checkpoints(workspace, sid)
    if checkpoints is None:
        if find_archive(sid) is not None:
            return ["sweep", "--restore", sid, "--json"]
        return ["sweep", "--archive", "--older-than", "0h", "--include-named", "--json"]  # finishes a killed one
    if redoable(read_checkpoints(checkpoints)) is not None and rng.random() < 0.5:
        return ["rewind", sid, "--redo", "--yes", "--force", "--json"]
    choice = rng.random()
    if choice < 0.15:
        return ["sweep", "--archive", "--older-than", "0h", "--include-named", "--json"]
    if choice < 0.3:
        return ["sessions", "fork", sid, "--json"]
    return ["rewind", sid, "--to", str(rng.choice((1, 2))), "--mode", "both", "--yes", "--force", "--json"]


def started(workspace: Any, args: list[str]) -> None:
    return None


def record_report(workspace: Any, args: list[str], stdout: str) -> bool:
    try:
        json.loads(stdout)
    except ValueError:
        return False
    workspace.branching["finished"] = True
    return True


def check(workspace: Any, violations: list[str], label: str) -> None:
    from commandcode.checkpoints.records import read_checkpoints
    from commandcode.checkpoints.store import BackupStore

    store = BackupStore()
    for folder in Path(workspace.data, "file-history").glob("*"):
        for blob in folder.iterdir():
            if not blob.name.startswith(".") and hashlib.sha256(blob.read_bytes()).hexdigest() != blob.name:
                violations.append(f"{label}: {blob} does not hold the bytes its name says")
    for transcript in workspace.transcripts():
        sid = transcript.name[: -len(".jsonl")]
        checkpoints = transcript.with_name(f"{sid}.checkpoints.jsonl")
        if not checkpoints.exists():
            continue
        folder = Path(workspace.data, "file-history", sid)
        for record in read_checkpoints(checkpoints):
            for item in record.files:
                if item.hash is None or item.skipped is not None:
                    continue
                twin = item.store_object
                if not (twin is not None and store.contains(twin)) and not (folder / item.hash).is_file():
                    violations.append(f"{label}: {sid} turn {record.turn_number}: {item.path} has no backup left")
        if workspace.branching.get("finished"):
            for value in parsed_records(checkpoints):
                for item in value.get("files") or []:
                    if item.get("hash") and not item.get("skipped") and not (folder / item["hash"]).is_file():
                        violations.append(f"{label}: {sid} turn {value.get('turnNumber')}: the real CLI finds no "
                                          f"blob for {item.get('path')} after a finished run")
