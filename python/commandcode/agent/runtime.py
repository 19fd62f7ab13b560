"""`AgentSession`: the one service every front end drives a session through: picking the session
(new, resumed by reference, or the most recent, `-c`), holding its writer, running a turn with the
checkpoint hook, naming it, patching its meta and the prompt history, the folder a rewind may
write into (`folder`) and the recovery of an interrupted restore. Summaries come from the
`summarizer` it is given (offline by default); messages for the user go to `notify`. Thin methods
here sit over the modules that do the work: fork/clone/goto/label `branching.py`, `export`
export.document, compaction, model_switch, permissions, naming, tracing and info (the status).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..catalog.listing import most_recent, resolve_session
from ..checkpoints.manager import CheckpointManager
from ..config.paths import project_root
from ..config.settings import load_settings
from ..errors import CheckpointError, CommandcodeError, InvalidSessionError, SessionNotFoundError, UsageError
from ..sessions.files import SessionFiles
from ..sessions.fork import CopyResult
from ..sessions.format import clean_name
from ..sessions.history import record_prompt
from ..sessions.meta import read_meta, read_meta_for_update, update_meta
from ..sessions.reader import Session, open_session
from ..sessions.writer import SessionWriter
from ..storage.ids import new_uuid
from .branching import clone_session, fork_session
from .compaction import CompactionResult
from .compaction_hooks import auto_compact, compact_session, context_window_of, fast_view, put_back_manifest_on_resume
from .events import OnEvent
from .locate import git_branch, session_folder, skipped_newer
from .mode_meta import UNKNOWN as MODE_UNKNOWN
from .mode_meta import record_mode
from .model_switch import adopt_model, settings_mode, switch_effort, switch_model
from .permissions import AskPermission, Grants, Policy, check_mode
from .providers.base import Model
from .providers.offline import OfflineModel
from .session_navigation import NavigationMethods
from .session_rewinds import RewindMethods
from .summarize import Summarizer, offline_summary
from .system_prompt import system_prompt
from .turn import Conversation, TurnResult

if TYPE_CHECKING:
    from ..export.document import ExportResult
    from ..workspace.session_space import ToolSpace
    from .resume import ResumePlan

Notify = Callable[[str], None]
CHECKPOINTS_SUFFIX = ".checkpoints.jsonl"


def _ignore(message: str) -> None:
    del message


class AgentSession(RewindMethods, NavigationMethods):
    """One session as an agent works on it. Create it with `start` (new, `-r`, `-c`) or
    `for_reference` (an existing session, for rewinds and listings).

    Turns need the writer: use the session as a context manager around `rename`/`run_turn`
    (`with AgentSession.start(...) as agent: agent.run_turn(prompt)`); the writer lock is held
    meanwhile. `rewind` and `checkpoint_choices` work with or without it.
    """

    def __init__(self, files: SessionFiles, cwd: Path, *, is_new: bool, persist: bool = True,
                 model: Model | None = None, entrypoint: str | None = None,
                 summarizer: Summarizer = offline_summary, notify: Notify = _ignore,
                 ask_permission: AskPermission | None = None, permission_mode: str | None = None,
                 grants: Grants | None = None) -> None:
        self.files = files
        self.cwd = Path(cwd)
        self.is_new = is_new
        self.persist = persist
        self.model = model if model is not None else OfflineModel()
        self._model_given = model is not None  # else: the resumed session's model, or config.json's
        self.entrypoint = entrypoint
        self.summarizer = summarizer
        self.notify = notify
        self.messages: list[dict[str, Any]] = []
        self.entry_ids: list[str] = []  # the entry of each message (compaction's firstKeptEntryId)
        self.compact_mode = "full"  # "fast": also trim old tool output at 50 % and 80 % (not persisted)
        self.compaction_saved = 0  # tokens this process's compactions saved
        self.effort: str | None = None
        # Permissions (agent/permissions.py): no `ask_permission` means headless (-p) rules;
        # `permission_mode` None means the settings' defaultMode; `grants` the session's grants.
        self.ask_permission = ask_permission
        self.permission_mode = check_mode(permission_mode) if permission_mode else None
        self.recorded_mode: str | None = None if is_new else MODE_UNKNOWN  # meta.permissionMode (agent/mode_meta.py)
        self.grants = grants if grants is not None else Grants()
        self._pending_meta: dict[str, Any] = {}
        self._warned: set[str] = set()
        self._writer: SessionWriter | None = None
        self._checkpoints: CheckpointManager | None = None
        self._checkpoints_loaded = False
        self._name: str | None = None
        self._saved_name: str | None = None
        self._saved_name_read = False
        self._labelled = False
        self.copied_from: CopyResult | None = None  # set on a fork or clone: its source and skipped lines
        self._space: ToolSpace | None = None
        self.trace_id: str | None = None  # the W3C trace id of the running (else the last) turn
        self.turns_run = 0  # turns this object ran

    # ----------------------------------------------------------------------------------------
    # Creating and resuming

    @classmethod
    def start(cls, cwd: Path, *, reference: str | None = None, continue_last: bool = False, fork: bool = False,
              **options: Any) -> AgentSession:
        """A session to run turns in: the one `reference` names (`-r`), the most recent one of
        this directory (`continue_last`, `-c`: headless ones first), else a new one. With `fork`
        (`--fork-session`), a fork of the resolved session instead, which is left untouched.

        Raises:
            UsageError: both `reference` and `continue_last`; `fork` without either.
            SessionNotFoundError, AmbiguousSessionError: the reference names no single session,
                or there is none to continue.
        """
        if reference and continue_last:
            raise UsageError("-r and -c cannot be used together")
        if fork:
            if not (reference or continue_last):
                raise UsageError("--fork-session needs a session to fork", hint="add -r REF or -c")
            source = cls.start(cwd, reference=reference, continue_last=continue_last, **options)
            forked = source.fork()
            from ..workspace.session_space import copy_for_fork  # the seed: a launch fork keeps the working files

            copy_for_fork(source.session_id, forked.session_id, source.cwd, source.notify)
            return forked
        if reference:
            return cls(resolve_session(reference, cwd), cwd, is_new=False, **options)
        if continue_last:
            unreadable: list[tuple[Path, str]] = []
            files = most_recent(cwd, headless=True, unreadable=unreadable) or most_recent(cwd, headless=False)
            for notice in skipped_newer(files, unreadable):
                options.get("notify", _ignore)(notice)
            if files is None:
                raise SessionNotFoundError("no session to continue in this directory",
                                           hint="start one with `commandcode -p PROMPT`")
            return cls(files, cwd, is_new=False, **options)
        return cls(SessionFiles(project_root(cwd), new_uuid()), cwd, is_new=True, **options)

    @classmethod
    def for_reference(cls, reference: str, cwd: Path | None = None, **options: Any) -> AgentSession:
        """An existing session, for rewinds and checkpoint listings: a reference as `start`
        takes it, or a `<id>.checkpoints.jsonl` path (a `--no-session` run has checkpoints but no
        transcript). Its working directory is `folder`, the one a rewind may write into."""
        here = Path.cwd() if cwd is None else Path(cwd)
        as_path = Path(reference).expanduser()
        if reference.endswith(CHECKPOINTS_SUFFIX) and as_path.is_file():
            files = SessionFiles(as_path.resolve().parent, as_path.name[: -len(CHECKPOINTS_SUFFIX)])
        else:
            files = resolve_session(reference, here)
        return cls(files, session_folder(files), is_new=False, **options)

    @staticmethod
    def plan_resume(cwd: Path, **how: Any) -> ResumePlan:
        """Finds and plans a resume (`-r`, `-c`, `--session`, a picked session): what it restores
        and what to ask first; `.open()` then makes the session. See `agent/resume.py`."""
        from .resume import plan_resume

        return plan_resume(cwd, **how)

    @property
    def session_id(self) -> str:
        return self.files.session_id

    @property
    def folder(self) -> Path:
        """The folder a rewind of this session may write into (see `agent.locate.session_folder`)."""
        return session_folder(self.files)

    @property
    def name(self) -> str | None:
        """The session's name: the one given in this process, else the saved one."""
        if self._name is not None:
            return self._name
        if not self._saved_name_read and self.files.transcript.exists():  # read once (a redraw asks often)
            self._saved_name_read = True
            try:
                self._saved_name = open_session(self.files.transcript).name
            except (CommandcodeError, OSError):
                return None
        return self._saved_name

    @property
    def is_open(self) -> bool:
        """Whether the session is open for writing (entered, holding its writer lock)."""
        return self._writer is not None

    @property
    def exists_on_disk(self) -> bool:
        """Whether the session has a transcript yet (a new one gets it with its first reply)."""
        return self._writer.exists_on_disk if self._writer is not None else self.files.transcript.exists()

    def status(self) -> dict[str, Any]:
        """What `/status` and `sessions status` show (`agent.info.session_status`)."""
        from .info import session_status

        return session_status(self)

    def suggest_title(self) -> str:
        """A title for a bare `/rename`: from the model when it can write one, else built from
        the first prompt (`agent.naming`)."""
        from ..sessions.context import content_blocks
        from .naming import suggest_title, unique_title

        writes_titles = getattr(self.model, "suggest_title", None)  # a provider that can write one
        if callable(writes_titles):
            title = writes_titles(self.messages)
            if isinstance(title, str) and title.strip():
                return unique_title(clean_name(title), self.cwd, session_id=self.session_id)
        prompts = ["\n".join(block["text"] for block in content_blocks(message.get("content"))
                              if block.get("type") == "text" and isinstance(block.get("text"), str))
                   for message in self.messages if message.get("role") == "user"
                   and not (message.get("meta") or {}).get("isMeta") and (message.get("meta") or {}).get("source") == "user"]
        return suggest_title(prompts, self.cwd, session_id=self.session_id)

    # ----------------------------------------------------------------------------------------
    # Turns

    def __enter__(self) -> AgentSession:
        writer = SessionWriter(self.files, str(self.cwd), persist=self.persist)
        writer.__enter__()
        try:
            recorded: tuple[str | None, str | None] = (None, None)  # the session's model and effort
            if not self.is_new:  # a resumed session (also without persisting, which only stops writing)
                session = open_session(self.files.transcript)
                recorded = (session.model, session.effort)
                self.reload_context(session)
                if session.skipped_lines:
                    self.notify(f"{self.files.transcript.name}: {len(session.skipped_lines)} unreadable line(s) skipped")
            adopt_model(self, *recorded)
        except BaseException:
            writer.close()
            raise
        self._writer = writer
        return self

    def reload_context(self, session: Session | None = None) -> None:
        """Re-reads the messages the model sees (and their entries) after anything that moved the
        leaf (a resume, rewind, redo, jump): the next turn sends what `sessions context` shows."""
        if session is None and not self.files.transcript.exists():  # nothing committed yet
            return
        context = (session or open_session(self.files.transcript)).context()
        self.messages = context.messages
        self.entry_ids = list(context.entry_ids) if len(context.entry_ids) == len(self.messages) else \
            [""] * len(self.messages)  # "": an entry compaction cannot point at

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Releases the writer lock (uncommitted entries are dropped, as a crash would drop them)
        and ends shell tracking (its baseline thread joined: nothing outlives the session)."""
        if self._checkpoints is not None:
            self._checkpoints.close()
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def _require_writer(self) -> SessionWriter:
        if self._writer is None:
            raise CommandcodeError("the session is not open for writing; use it as a context manager")
        return self._writer

    def rename(self, name: str) -> str:
        """Names the session: a `session_info` entry and `meta.title` + `meta.userRenamed`, at
        once for a saved session, with the first save for a new one. Returns the stored name.

        Raises:
            UsageError: the name is empty or over 200 characters (`agent.naming`).
            CommandcodeError: another session of the project has that name.
            InvalidSessionError: the meta file is not a JSON object (nothing was written).
        """
        from .naming import checked_name

        writer = self._require_writer()
        cleaned = checked_name(name, self.cwd, session_id=self.session_id, unique=self.persist)
        if self.persist:
            read_meta_for_update(self.files.meta)  # refuse a meta file we could not update before anything is written
        writer.append_entry("session_info", {"name": cleaned})
        self._name = cleaned
        if self.persist and writer.exists_on_disk:
            writer.commit(force=True)
            self._patch_meta(writer)
        return cleaned

    def checkpoints(self) -> CheckpointManager | None:
        """The checkpoint hook of the turns: the session's manager, loaded once (after finishing
        a restore a crash interrupted); `None` when nothing is persisted, or, with a notice, when
        the checkpoints file cannot be read (a FIFO or folder in its place): the turn runs, its
        edits are not checkpointed, and that file is left as it is (like the disk-low pause)."""
        if not self._checkpoints_loaded:
            self._checkpoints_loaded = True
            if self.persist:
                try:
                    self.recover_interrupted_restore()
                    self._checkpoints = CheckpointManager.for_session(self.files, self.cwd)
                    self._checkpoints.track_shell(self.notify)
                except CheckpointError as error:
                    self.notify(f"{error}; this turn's edits are not checkpointed")
        return self._checkpoints

    def run_turn(self, prompt: str, *, on_event: OnEvent | None = None, cancel: threading.Event | None = None,
                 record_history: bool = False) -> TurnResult:
        """Runs one prompt to completion, commits it and patches the meta; `on_event` gets the
        turn's `TurnEvent`s live. The prompt goes to `~/.commandcode/history.jsonl` only with
        `record_history` (the interactive shell's choice; `-p` never writes it).

        Raises:
            TurnInterrupted: `cancel` was set before the turn started; nothing was written (set
                while it runs, the turn is committed as far as it got: `result.interrupted`).
            CommandcodeError: the turn failed (what it produced, and an `Error: …` message, were
                recorded in the session first); a failure of ours keeps its own class.
        """
        from .tracing import new_trace_id

        writer = self._require_writer()
        if self.persist and record_history:  # on submission: a failed or interrupted prompt is recalled too
            record_prompt(prompt)
        self.trace_id = new_trace_id()
        commits_before = writer.mark()[0]
        load_settings(self.cwd)  # a malformed settings file refuses the turn in one line, before the scratchpad warns
        space = self.tool_space()
        gate = Policy(self.cwd, mode=self.permission_mode, ask=self.ask_permission, grants=self.grants,
                      notify=self.notify, scratchpad=space.scratchpad.path if space.scratchpad else None)
        for warning in set(gate.warnings) - self._warned:  # a wrong-typed rule: once per session
            self._warned.add(warning)
            self.notify(warning)
        if not self.is_new and self.turns_run == 0:  # a resumed compacted context: its scratchpad manifest
            put_back_manifest_on_resume(self)
        self.turns_run += 1
        auto_compact(self, on_event)
        conversation = Conversation(writer, self.model, self.cwd, self.messages, self.checkpoints(),
                                    effort=self.effort, gate=gate, on_event=on_event, cancel=cancel,
                                    entry_ids=self.entry_ids, view=fast_view(self), tool_env=space.env,
                                    tool_guard=space.guard, system=system_prompt(str(self.cwd), space.prompt()))
        try:
            result = conversation.run_turn(prompt)
        except CommandcodeError:
            raise
        except OSError as error:  # a full disk: the transcript was cut back to its last commit
            where = f" ({error.filename})" if error.filename else ""
            raise CommandcodeError(f"the turn failed: {error.strerror or error}{where}") from error
        except Exception as error:  # the turn recorded it (`Error: …`); the caller gets one line, not a traceback
            raise CommandcodeError(f"the turn failed: {str(error) or type(error).__name__}") from error
        finally:  # a failed or interrupted turn that reached disk is labelled too
            self._patch_meta(writer, trace_id=self.trace_id if writer.mark()[0] > commits_before else None)
        return result

    def _patch_meta(self, writer: SessionWriter, *, trace_id: str | None = None) -> None:
        if not self.persist or not writer.exists_on_disk:
            return
        patch: dict[str, Any] = {}
        if self.is_new and not self._labelled:
            patch.update({"entrypoint": self.entrypoint, "gitBranch": git_branch(self.cwd)})
            self._labelled = True
        elif trace_id is not None and not self._labelled and self.entrypoint != "print":
            self._labelled = True  # a turn of the shell's (not a rename): a headless session is headless no more
            if read_meta(self.files.meta).get("entrypoint") == "print":
                patch["entrypoint"] = None
        if self._name:
            patch.update({"title": self._name, "userRenamed": True})
            self._saved_name, self._name = self._name, None
        patch.update(self._pending_meta)
        self._pending_meta.clear()
        if trace_id is not None:
            from .tracing import with_trace_id

            patch["traceIds"] = with_trace_id(read_meta(self.files.meta), trace_id)
        if list(patch) == ["traceIds"]:  # a convenience: the committed turn stands without it
            try:
                update_meta(self.files.meta, patch)
            except InvalidSessionError:
                self.notify(f"{self.files.meta.name} is not a JSON object; this turn's trace id is not recorded")
            except OSError as error:
                self.notify(f"this turn's trace id is not recorded in {self.files.meta.name}: {error.strerror or error}")
        elif patch:
            update_meta(self.files.meta, patch)
        record_mode(self)

    # ----------------------------------------------------------------------------------------
    # Model, effort and permission mode (agent/model_switch.py)

    def set_model(self, name: str) -> str:
        """Switches to the model `name` (`provider/model` or `offline`): a `model_change` entry,
        committed now for a saved session, and `meta.model`/`modelProvider`; a context over 90 %
        of the new model's window is compacted (with a notice). Returns its id.

        Raises:
            UsageError: no such model or provider.
        """
        self.model = switch_model(self, name)
        auto_compact(self, None)  # a smaller window the context overflows compacts at once (ref §11)
        return self.model.model_id

    def set_effort(self, level: str) -> None:
        """Sets the reasoning effort (low, medium, high, xhigh, max): an `effort_change` entry,
        and the `effort` of every later assistant entry.

        Raises:
            UsageError: an unknown level.
        """
        self.effort = switch_effort(self, level)

    def set_permission_mode(self, mode: str | None) -> None:
        """The mode later turns run in (Shift+Tab cycles it); None: the settings' defaultMode.

        Raises:
            UsageError: an unknown mode.
        """
        self.permission_mode = check_mode(mode) if mode else None
        record_mode(self)

    def effective_permission_mode(self) -> str:
        """The permission mode turns run in: the one set, else the settings' defaultMode."""
        return self.permission_mode or settings_mode(self.cwd)

    # ----------------------------------------------------------------------------------------
    # Workspace: the scratchpad and the worktree the tools work in (workspace/session_space.py)

    def tool_space(self) -> ToolSpace:
        """The session's scratchpad (provisioned once; `$COMMANDCODE_SCRATCHPAD`, its prompt lines)
        and the worktree guard every tool call passes."""
        if self._space is None:
            from ..workspace.session_space import prepare

            self._space = prepare(self.session_id, self.cwd, self.notify)
        return self._space

    def scratchpad_manifest(self) -> str | None:
        """What is in the scratchpad (names, sizes, times; bounded), for the context after a compaction."""
        from ..workspace.scratchpad import scratchpad_manifest

        pad = self.tool_space().scratchpad
        return scratchpad_manifest(pad.path if pad is not None else None)

    def disk_line(self) -> str:
        """The session's footprint for `/status` (`disk: … transcript · … checkpoints · …`)."""
        from ..workspace.footprint import status_line

        return status_line(self.files)

    # ----------------------------------------------------------------------------------------
    # Fork and clone (agent/branching.py); goto and labels are NavigationMethods

    def fork(self, name: str | None = None) -> AgentSession:
        """A new session holding this one's whole tree and checkpoints (`agent/branching.py`);
        this one is untouched. The result is not open for writing yet."""
        result = fork_session(self.files, self.cwd, name=name)
        return self._copy_made(result)

    def clone(self) -> AgentSession:
        """A new session holding only this one's active branch, without checkpoints."""
        return self._copy_made(clone_session(self.files, self.cwd))

    def _copy_made(self, result: CopyResult) -> AgentSession:
        if result.skipped:
            self.notify(f"{self.files.transcript.name}: {result.skipped} unreadable line(s) left out of the copy")
        copy = AgentSession(result.files, self.cwd, is_new=False, persist=self.persist, model=self.model,
                            entrypoint=self.entrypoint, summarizer=self.summarizer, notify=self.notify)
        copy.copied_from = result
        return copy

    # ----------------------------------------------------------------------------------------
    # Compaction and export

    def compact(self, instructions: str | None = None) -> CompactionResult | None:
        """`/compact [instructions]`: summarizes the older context now (agent/compaction.py);
        None when there is too little to summarize.

        Raises:
            CommandcodeError: the model could not write the summary (nothing was appended).
        """
        return compact_session(self, instructions)

    def compaction_totals(self) -> dict[str, Any]:
        """`meta.compaction` (`count`, `tokensSaved`, ...) over every run of the session ({} when
        none saved anything); this process's share is `compaction_saved`."""
        stats = read_meta(self.files.meta).get("compaction") if self.persist else None
        return dict(stats) if isinstance(stats, dict) else {}

    def context_window(self) -> int:
        """The model's context window: the settings' `contextWindow`, else the model's."""
        return context_window_of(self)

    def export(self, path: str | None = None, fmt: str | None = None, *, selection: str = "context",
               redact_jsonl: bool = False, progress: Callable[[int, int], None] | None = None) -> ExportResult:
        """Writes the session to a file: html, md or jsonl, to `path` or the default name in `cwd`
        (see `export.document.export_for`; secrets redacted in html and md, in jsonl if asked)."""
        from ..export.document import export_for

        return export_for(self.files.transcript, self.session_id, self.cwd, path=path, fmt=fmt, selection=selection,
                          redact_jsonl=redact_jsonl, progress=progress)
