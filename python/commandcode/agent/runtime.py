"""`AgentSession`: the one object every front end drives a session through, and the place its
parts are put together. It picks the session (new, resumed by reference, the most recent with
`-c`, a fork at launch), holds the `SessionHandle` (files, writer lifetime, context, name, meta:
`agent/handle.py`) and hands it to the collaborators, each through its constructor:

- `models` (`agent/model_switch.py`): model, effort and permission mode, and saving them;
- `turns` (`agent/turns.py`): the turn runner, with its `compaction` (`agent/compaction_hooks.py`,
  also reachable as `agent.compaction`), tools, permission gate and checkpoint hook;
- `navigation` (`agent/session_navigation.py`): goto, label, fork, clone;
- `rewinds` (`agent/session_rewinds.py`): checkpoints, rewind, redo, interrupted-restore recovery.

No collaborator touches another's state; they share the handle. Here besides: the session's
identity (`session_id`, `files`, `cwd`, `folder`, `name`), opening and closing it, `/status`,
the title suggestion and the export. A resume a front end plans first (what it restores, what
to ask) is `agent.resume.plan_resume`, whose `ResumePlan.open` makes the `AgentSession`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..catalog.listing import most_recent, resolve_session
from ..config.paths import sessions_folder
from ..errors import SessionNotFoundError, UsageError
from ..sessions.files import SessionFiles
from ..sessions.fork import CopyResult
from ..sessions.format import clean_name
from ..sessions.reader import Session
from ..storage.ids import new_uuid
from .handle import Notify, SessionHandle, ignore
from .locate import session_folder, skipped_newer
from .model_switch import ModelSelection
from .permissions import AskPermission, Grants
from .providers.base import Model, WritesTitles
from .session_navigation import SessionNavigation
from .session_rewinds import SessionRewinds
from .summarize import Summarizer, offline_summary
from .turns import SessionTurns

if TYPE_CHECKING:
    from ..config.context import ProjectContext
    from ..export.document import ExportResult

CHECKPOINTS_SUFFIX = ".checkpoints.jsonl"


class AgentSession:
    """One session as an agent works on it. Create it with `start` (new, `-r`, `-c`) or
    `for_reference` (an existing session, for rewinds and listings).

    Turns need the writer: use the session as a context manager around `rename`/`turns.run_turn`
    (`with AgentSession.start(...) as agent: agent.turns.run_turn(prompt)`); the writer lock is
    held meanwhile. `rewinds` work with or without it.
    """

    def __init__(self, files: SessionFiles, cwd: Path, *, is_new: bool, persist: bool = True,
                 model: Model | None = None, entrypoint: str | None = None,
                 summarizer: Summarizer = offline_summary, notify: Notify = ignore,
                 ask_permission: AskPermission | None = None, permission_mode: str | None = None,
                 grants: Grants | None = None, project: ProjectContext | None = None) -> None:
        self.handle = SessionHandle(files, cwd, is_new=is_new, persist=persist, entrypoint=entrypoint, notify=notify,
                                    project=project)
        self.models = ModelSelection(self.handle, model=model, permission_mode=permission_mode,
                                     after_switch=lambda: self.turns.compaction.auto(None))
        self.rewinds = SessionRewinds(self.handle, summarizer)
        self.turns = SessionTurns(self.handle, self.models, self.rewinds, ask_permission=ask_permission, grants=grants)
        self.rewinds.subagents = self.turns  # a rewind stops the running sub-agents first
        self.compaction = self.turns.compaction
        self.navigation = SessionNavigation(self.handle, self.models, summarizer, self._open_copy)
        self._summarizer = summarizer
        self.copied_from: CopyResult | None = None  # set on a fork or clone: its source and skipped lines

    # ----------------------------------------------------------------------------------------
    # Creating and resuming

    @classmethod
    def start(cls, cwd: Path, *, reference: str | None = None, continue_last: bool = False, fork: bool = False,
              resolved: SessionFiles | None = None, **options: Any) -> AgentSession:
        """A session to run turns in: the one `reference` names (`-r`), the most recent one of
        this directory (`continue_last`, `-c`: headless ones first), else a new one. With `fork`
        (`--fork-session`), a fork of the resolved session instead, which is left untouched.
        `resolved` is the session the caller already resolved `reference` to (the launcher's
        `place`): it is opened as it is, the reference not resolved a second time.

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
            source = cls.start(cwd, reference=reference, continue_last=continue_last, resolved=resolved, **options)
            forked = source.navigation.fork()
            from ..workspace.session_space import copy_for_fork  # the seed: a launch fork keeps the working files

            copy_for_fork(source.session_id, forked.session_id, source.handle.project, source.notify)
            return forked
        if reference:
            return cls(resolved or resolve_session(reference, cwd), cwd, is_new=False, **options)
        if continue_last:
            unreadable: list[tuple[Path, str]] = []
            from ..catalog.cached import one_refresh

            with one_refresh():  # the two listings check the files once
                files = most_recent(cwd, headless=True, unreadable=unreadable) or most_recent(cwd, headless=False)
            for notice in skipped_newer(files, unreadable):
                options.get("notify", ignore)(notice)
            if files is None:
                raise SessionNotFoundError("no session to continue in this directory",
                                           hint="start one with `commandcode -p PROMPT`")
            return cls(files, cwd, is_new=False, **options)
        return cls(SessionFiles(sessions_folder(cwd), new_uuid()), cwd, is_new=True, **options)

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

    def _open_copy(self, result: CopyResult) -> AgentSession:
        """The session object of a fork or clone of this one (not open for writing yet)."""
        handle = self.handle
        copy = AgentSession(result.files, handle.cwd, is_new=False, persist=handle.persist, model=self.models.model,
                            entrypoint=handle.entrypoint, summarizer=self.summarizer, notify=handle.notify,
                            project=handle.project)
        copy.copied_from = result
        return copy

    # ----------------------------------------------------------------------------------------
    # Identity

    @property
    def session_id(self) -> str:
        return self.handle.session_id

    @property
    def files(self) -> SessionFiles:
        return self.handle.files

    @property
    def cwd(self) -> Path:
        return self.handle.cwd

    @property
    def folder(self) -> Path:
        """The folder a rewind of this session may write into (see `agent.locate.session_folder`)."""
        return self.handle.folder

    @property
    def name(self) -> str | None:
        """The session's name: the one given in this process, else the saved one."""
        return self.handle.name

    @property
    def notify(self) -> Notify:
        return self.handle.notify

    @property
    def summarizer(self) -> Summarizer:
        """What writes summaries when the model does not (rewinds', branches'): offline by default."""
        return self._summarizer

    @property
    def is_open(self) -> bool:
        """Whether the session is open for writing (entered, holding its writer lock)."""
        return self.handle.is_open

    # ----------------------------------------------------------------------------------------
    # Opening and closing

    def __enter__(self) -> AgentSession:
        """Takes the writer lock, reads a resumed session's context and adopts the model and
        effort it recorded (a new one: `config.json`'s)."""

        def adopt(session: Session | None) -> None:
            self.models.adopt(session.model if session else None, session.effort if session else None)

        self.handle.enter(adopt)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stops the sub-agent runs still going (one notice line names them), releases the
        writer lock (uncommitted entries are dropped, as a crash would drop them) and ends shell
        tracking (its baseline thread joined: nothing outlives the session)."""
        stopped = self.turns.stop_subagents()
        if stopped:
            self.handle.notify(f"stopped {len(stopped)} running sub-agent{'s' if len(stopped) > 1 else ''} "
                               f"({', '.join(stopped)})")
        self.handle.close()

    def rename(self, name: str) -> str:
        """Names the session (see `SessionHandle.rename`). Returns the stored name."""
        return self.handle.rename(name)

    # ----------------------------------------------------------------------------------------
    # What front ends show

    def status(self) -> dict[str, Any]:
        """What `/status` and `sessions status` show (`agent.info.session_status`)."""
        from .info import session_status

        return session_status(self)

    def suggest_title(self) -> str:
        """A title for a bare `/rename`: from the model when it `WritesTitles`, else built from
        the first prompt (`agent.naming`)."""
        from ..sessions.context import content_blocks
        from .naming import suggest_title, unique_title

        model, handle = self.models.model, self.handle
        if isinstance(model, WritesTitles):
            title = model.suggest_title(handle.messages)
            if isinstance(title, str) and title.strip():
                return unique_title(clean_name(title), handle.cwd, session_id=handle.session_id)
        prompts = ["\n".join(block["text"] for block in content_blocks(message.get("content"))
                              if block.get("type") == "text" and isinstance(block.get("text"), str))
                   for message in handle.messages if message.get("role") == "user"
                   and not (message.get("meta") or {}).get("isMeta") and (message.get("meta") or {}).get("source") == "user"]
        return suggest_title(prompts, handle.cwd, session_id=handle.session_id)

    def disk_line(self) -> str:
        """The session's footprint for `/status` (`disk: … transcript · … checkpoints · …`)."""
        from ..workspace.footprint import status_line

        return status_line(self.handle.files)

    def export(self, path: str | None = None, fmt: str | None = None, *, selection: str = "context",
               redact_jsonl: bool = False, progress: Callable[[int, int], None] | None = None) -> ExportResult:
        """Writes the session to a file: html, md or jsonl, to `path` or the default name in `cwd`
        (see `export.document.export_for`; secrets redacted in html and md, in jsonl if asked)."""
        from ..export.document import export_for

        return export_for(self.files.transcript, self.session_id, self.handle.project, path=path, fmt=fmt,
                          selection=selection, redact_jsonl=redact_jsonl, progress=progress)
