"""`commandcode import claude|pi REF`: another agent's session as a Command Code v3 session.

The new session lives in commandcode's data dir, in the project folder of the source's `cwd`.
Its id is derived from the source (tool and session id), so importing twice finds the first
import and says where it went instead of writing a second copy. Files are written in an order
that a kill at any moment leaves either no session or a complete one: the Claude file-history
backups go into the content store first (`checkpoints.store`, content-addressed: a repeat is a
no-op), then the checkpoints file and the meta (sidecars the listing ignores without a
transcript), then a Claude session's subagents as sub-agent runs beside it (`claude_runs.py`:
`<id>/subagents/`, read by nothing while the transcript is missing), and the transcript last,
created whole by one atomic rename. The source tree is only read; a line of it that cannot be
read (torn, not JSON) is left out of the import with one warning line that counts them.

Meta: `importedFrom: {tool, path, sessionId}`, `title` (the source's name), `model`.
Checkpoints: one record per Claude prompt with a file-history snapshot; each tracked file's
backup is put into our store (`algo: "blake3"`; with `checkpoints.compatibleBackups` on, also
the real CLI's raw sha256 blob in our `file-history/<id>/`, as every backup we record), a file
that did not exist has `hash: null` (a rewind deletes it). The path is the one Claude Code's
`--rewind-files` restores (`claude_backups.tracked_target`). Backups are read by
`claude_backups.read_backup` only: one that is missing, misnamed (`../…`), a symlink, a FIFO or
anything but a regular file in the session's own folder is left out with a warning line.
"""

from __future__ import annotations

import json
import os
import uuid as uuid_module
from pathlib import Path
from typing import Any

from ..config.paths import project_dir
from ..errors import CommandcodeError
from ..sessions.files import SessionFiles
from ..storage.durable import atomic_write, ensure_dir
from ..storage.jsonfmt import dumps_pretty
from .claude_backups import BackupRefused, read_backup, tracked_target
from .claude_code import ClaudeSession
from .convert import Converted, convert
from .foreign import ForeignSession
from .locations import claude_file_history
from .materialize import session_lines, session_meta

IMPORT_NAMESPACE = uuid_module.UUID("9b1f3c2e-6d4a-4e8b-a7c5-0f2d4b6a8c10")


class ImportResult:
    def __init__(self, session_id: str, path: Path, already: bool, warnings: list[str], source: ForeignSession,
                 checkpoints: int, entries: int, runs: int = 0) -> None:
        self.session_id = session_id
        self.path = path
        self.already = already
        self.warnings = warnings
        self.source = source
        self.checkpoints = checkpoints
        self.entries = entries
        self.runs = runs  # the source's subagents, written as sub-agent runs

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.session_id, "path": str(self.path), "already_imported": self.already,
                "source": {"tool": self.source.source, "path": str(self.source.path), "sessionId": self.source.id},
                "entries": self.entries, "checkpoints": self.checkpoints, "subagent_runs": self.runs,
                "warnings": list(self.warnings)}


def imported_id(tool: str, source_id: str) -> str:
    """The session id an import of `tool`'s session `source_id` gets: a uuid4-shaped uuid5."""
    value = uuid_module.uuid5(IMPORT_NAMESPACE, f"{tool}:{source_id}")
    raw = bytearray(value.bytes)
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return str(uuid_module.UUID(bytes=bytes(raw)))


def import_session(session: ForeignSession) -> ImportResult:
    """Imports `session` (see the module docstring); an earlier import of it is returned as is.

    Raises:
        CommandcodeError: the session has no cwd to file it under, or a write failed.
    """
    if not session.cwd:
        raise CommandcodeError(f"{session.path}: the session records no working directory",
                               hint="commandcode files a session under the directory it ran in")
    if not os.path.isabs(session.cwd):  # its backups would be restored relative to wherever a rewind runs
        raise CommandcodeError(f"{session.path}: the session's working directory {session.cwd!r} is not an "
                               "absolute path", hint="commandcode files a session under the directory it ran in")
    session_id = imported_id(session.source, session.id)
    files = SessionFiles.for_transcript(project_dir(session.cwd) / f"{session_id}.jsonl")
    warnings = list(session.warnings)
    if os.path.isfile(files.transcript):
        return ImportResult(session_id, files.transcript, True, [], session, 0, 0)
    converted = convert(session)
    if not converted.entries:
        raise CommandcodeError(f"{session.path}: nothing to import (no messages)")
    if session.skipped_lines:  # the source keeps them; the user must know the import does not
        first = session.skipped_lines[0]
        warnings.insert(0, f"{session.path.name}: {len(session.skipped_lines)} unreadable line(s) left out of the "
                           f"import (first: line {first.line}, {first.reason})")
    checkpoints = _import_checkpoints(session, session_id, converted, warnings) if isinstance(session, ClaudeSession) else []
    ensure_dir(files.folder)
    if checkpoints:
        from ..checkpoints.records import write_checkpoints

        write_checkpoints(files.checkpoints, checkpoints)
    atomic_write(files.meta, dumps_pretty(session_meta(session, converted)).encode("utf-8"))
    runs = 0
    if isinstance(session, ClaudeSession):
        from .claude_runs import write_imported_runs

        runs = write_imported_runs(session, files, warnings)
    atomic_write(files.transcript, session_lines(session_id, session, converted))
    return ImportResult(session_id, files.transcript, False, warnings, session, len(checkpoints),
                        len(converted.entries), runs)


def _import_checkpoints(session: ClaudeSession, session_id: str, converted: Converted,
                        warnings: list[str]) -> list[Any]:
    from ..checkpoints.blob_rule import enforce
    from ..checkpoints.records import Checkpoint, FileBackup, prompt_preview
    from ..checkpoints.store import BackupStore

    store = BackupStore()
    folder = claude_file_history(session.id)
    by_message = {entry["message"]["meta"]["messageId"]: entry for entry in converted.entries
                  if entry.get("type") == "message"}
    by_id = {entry["id"]: entry for entry in converted.entries}
    records: list[Any] = []
    for checkpoint in session.checkpoints:
        entry = session.by_uuid.get(checkpoint.message_id)
        target_entry = by_message.get(checkpoint.message_id)
        if entry is None or target_entry is None:
            continue
        before = _messages_before(target_entry, by_id)
        files: list[Any] = []
        for relative, backup in sorted(checkpoint.files.items()):
            target = tracked_target(session.cwd or "/", relative)
            name = backup.get("backupFileName")
            if name is None:
                files.append(FileBackup(path=target, hash=None, algorithm="blake3"))
                continue
            try:
                data, mode = read_backup(folder, name)
            except BackupRefused as refused:
                warnings.append(f"checkpoint of {checkpoint.message_id}: the backup {_shown(name)} of {relative} "
                                f"{refused}; that file is left out of the checkpoint")
                continue
            files.append(FileBackup(path=target, hash=store.put_bytes(data), algorithm="blake3", mode=mode))
        prompt = (entry.get("message") or {}).get("content")
        text = prompt if isinstance(prompt, str) else next(
            (block.get("text") for block in prompt or [] if isinstance(block, dict) and block.get("type") == "text"), "")
        records.append(Checkpoint(id=checkpoint.message_id, message_id=checkpoint.message_id,
                                  turn_number=len(records) + 1, created_at=checkpoint.timestamp or session.created,
                                  prompt=prompt_preview(str(text or "")), message_count=len(before),
                                  last_message_id=before[-1] if before else None, files=files))
    enforce(session_id, records, store, cwd=Path(session.cwd or "/"))  # the real CLI's blobs, with compatibleBackups
    return records


def _shown(name: Any) -> str:
    """A backup name as a warning shows it: quoted, one line, at most 80 characters."""
    text = json.dumps(name, ensure_ascii=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _messages_before(entry: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> list[str]:
    """`meta.messageId` of the message entries on the path above `entry`, root first."""
    found: list[str] = []
    seen: set[str] = set()
    parent = entry.get("parentId")
    while isinstance(parent, str) and parent in by_id and parent not in seen:
        seen.add(parent)
        above = by_id[parent]
        if above.get("type") == "message":
            found.append(str(above["message"]["meta"]["messageId"]))
        parent = above.get("parentId")
    return list(reversed(found))
