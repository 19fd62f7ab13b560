"""`commandcode -p PROMPT`: one headless turn in the current directory, written as a real session."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from ..agent.providers.offline import OfflineModel
from ..agent.turn import Conversation, Model
from ..catalog.listing import most_recent, resolve_session
from ..checkpoints.manager import CheckpointManager
from ..errors import CheckpointError, CommandcodeError, SessionNotFoundError, UsageError
from ..sessions.history import record_prompt
from ..storage.ids import new_uuid
from ..sessions.meta import read_meta_for_update, update_meta
from ..config.paths import SessionFiles, project_dir
from ..sessions.reader import open_session
from ..sessions.writer import SessionWriter
from .output import print_json, stdout, warn
from .rewind_cmds import finish_interrupted_restore

AVAILABLE_MODELS = ("offline",)


def resolve_model(name: str) -> Model:
    """The model a `--model` value names."""
    if name in ("offline", OfflineModel.model_id):
        return OfflineModel()
    raise UsageError(f"unknown model {name!r}", hint=f"available models: {', '.join(AVAILABLE_MODELS)}")


def from_argv(text: str) -> str:
    """Command-line text as Node reads it: bytes that are not UTF-8 become U+FFFD (Python keeps
    them as lone surrogates, which would reach the transcript as `\\udcXX` escapes)."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that did not come from undecodable bytes
        raw = text.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "replace")


def clean_name(name: str) -> str:
    """A session name as the real CLI stores it: CR/LF become spaces, trimmed."""
    return name.replace("\r", " ").replace("\n", " ").strip()


def git_branch(cwd: Path) -> str | None:
    """The current git branch of `cwd` (also a branch with no commits yet), or None outside a
    repository and on a detached HEAD."""
    try:
        completed = subprocess.run(["git", "symbolic-ref", "--quiet", "--short", "HEAD"], cwd=cwd, capture_output=True,
                                   text=True, timeout=5, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    branch = completed.stdout.strip()
    return branch if completed.returncode == 0 and branch else None


def run_print(prompt: str, *, output_format: str, name: str | None, resume: str | None, continue_last: bool,
              no_session: bool, model_name: str) -> None:
    """Runs one headless turn and prints the reply."""
    if output_format not in ("text", "json"):
        raise UsageError(f"unknown output format {output_format!r}", hint="use text or json")
    if resume and continue_last:
        raise UsageError("-r and -c cannot be used together")
    prompt = from_argv(prompt)
    name = from_argv(name) if name else name
    if not prompt.strip():
        raise UsageError("the prompt is empty", hint='pass the prompt text: commandcode -p "PROMPT"')
    cwd = Path.cwd()
    model = resolve_model(model_name)
    files, is_new = _pick_session(cwd, resume, continue_last)
    messages: list[dict[str, Any]] = []
    with SessionWriter.open(files, str(cwd), persist=not no_session) as writer:
        if not is_new:  # a resumed session (also with --no-session, which only stops writing)
            session = open_session(files.transcript)
            messages = session.context().messages
            if session.skipped_lines:
                warn(f"{files.transcript.name}: {len(session.skipped_lines)} unreadable line(s) skipped")
        cleaned = clean_name(name) if name else ""
        if cleaned and not no_session:
            read_meta_for_update(files.meta)  # refuse a meta file we could not update before the turn runs
        if cleaned:
            writer.append_entry("session_info", {"name": cleaned})
        checkpoints = None if no_session else _checkpoint_manager(files, cwd)
        conversation = Conversation(writer, model, cwd, messages, checkpoints)
        try:
            result = conversation.run_turn(prompt)
        except CommandcodeError:
            raise
        except Exception as error:  # the turn recorded it (`Error: …`); the user gets one line, not a traceback
            raise CommandcodeError(f"the turn failed: {str(error) or type(error).__name__}") from error
        finally:  # a failed turn that reached disk is still a print session
            if not no_session and writer.exists_on_disk:
                patch: dict[str, Any] = {}
                if is_new:
                    patch.update({"entrypoint": "print", "gitBranch": git_branch(cwd)})
                if cleaned:
                    patch.update({"title": cleaned, "userRenamed": True})
                if patch:
                    update_meta(files.meta, patch)
    if not no_session:
        record_prompt(prompt)
    for notice in result.notices:
        warn(notice)
    if output_format == "json":
        print_json({"type": "result", "session_id": None if no_session else files.session_id,
                    "result": result.text, "is_error": result.error is not None, "error": result.error,
                    "tool_calls": result.tool_calls, "model": model.model_id})
    else:
        stdout.out(result.text, highlight=False)


def _checkpoint_manager(files: SessionFiles, cwd: Path) -> CheckpointManager | None:
    """The session's checkpoint manager; `None`, with a warning, when its checkpoints file cannot
    be read (a FIFO or folder in its place): the turn runs, its edits are not checkpointed, and
    that file is left as it is (like the disk-low pause)."""
    try:
        finish_interrupted_restore(files)
        return CheckpointManager.for_session(files, cwd)
    except CheckpointError as error:
        warn(f"{error}; this turn's edits are not checkpointed")
        return None


def _pick_session(cwd: Path, resume: str | None, continue_last: bool) -> tuple[SessionFiles, bool]:
    if resume:
        return resolve_session(resume, cwd), False
    if continue_last:
        files = most_recent(cwd, headless=True) or most_recent(cwd, headless=False)
        if files is None:
            raise SessionNotFoundError("no session to continue in this directory", hint="start one with `commandcode -p PROMPT`")
        return files, False
    return SessionFiles(project_dir(cwd), new_uuid()), True
