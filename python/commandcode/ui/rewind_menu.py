"""The rewind menu's data and what a choice does, without Textual (the screen is `screens/rewind.py`).

Owns `MenuRow` (one row: a checkpoint, "Redo", or "/resume <id> (previous session)"),
`menu_rows` (built from an `AgentSession`), `preview_text` (what an action would do, from a dry
run), `perform` (running the chosen action) and `open_menu` (the whole flow for `commandcode rewind
REF` without `--to`). The shell's `/rewind` (`shell/commands/rewind.py`) uses the same pieces
with its own `Shell`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..checkpoints.modes import RewindMode
from ..checkpoints.rewind import RewindOptions
from ..errors import CommandcodeError

if TYPE_CHECKING:
    from ..agent.runtime import AgentSession
    from ..checkpoints.rewind_result import RewindResult
    from ..config.context import ProjectContext

ROW_CHECKPOINT = "checkpoint"
ROW_REDO = "redo"
ROW_RESUME = "resume"
ROW_NO_REDO = "no-redo"  # a rewind that turns made since keep from being undone: the row says why


PROMPT_CHARS = 60


def one_line(prompt: str) -> str:
    """A prompt as one row of the list: its first line, cut at PROMPT_CHARS with an ellipsis
    (a long prompt filled three or four rows); the title of a chosen checkpoint shows it whole."""
    first = next((line.strip() for line in prompt.splitlines() if line.strip()), "")
    cut = len(first) > PROMPT_CHARS or len(prompt.strip().splitlines()) > 1
    return first[:PROMPT_CHARS].rstrip() + ("…" if cut else "")


class MenuRow:
    """One row of the menu: `kind` is `checkpoint` (with `number` and the `modes` it offers),
    `redo`, or `resume` (with `session_id`)."""

    __slots__ = ("files", "kind", "modes", "number", "prompt", "reason", "session_id", "time")

    def __init__(self, kind: str, *, number: int = 0, time: str = "", prompt: str = "", files: str = "",
                 modes: list[RewindMode] | None = None, session_id: str | None = None, reason: str = "") -> None:
        self.kind, self.number, self.time, self.prompt, self.files = kind, number, time, prompt, files
        self.modes = modes or []
        self.session_id = session_id
        self.reason = reason  # a `no-redo` row: why there is no redo

    @property
    def label(self) -> str:
        if self.kind == ROW_RESUME:
            return f"/resume {self.session_id} (previous session)"
        if self.kind == ROW_REDO:
            return "Redo: undo the last rewind"
        if self.kind == ROW_NO_REDO:
            return "No redo: " + self.reason.removeprefix("cannot redo: ").split(", and ")[0]
        return f"{self.time}  {one_line(self.prompt) or '(no prompt)'}  —  {self.files}"


class MenuChoice:
    """What the user picked: a row and, for a checkpoint, the mode (`None`: redo or resume)."""

    __slots__ = ("mode", "row")

    def __init__(self, row: MenuRow, mode: RewindMode | None = None) -> None:
        self.row, self.mode = row, mode


def _local_time(created_at: str) -> str:
    from ..storage.ids import parse_iso

    moment = parse_iso(created_at)
    return moment.astimezone().strftime("%Y-%m-%d %H:%M") if moment is not None else (created_at or "?")


def _files_label(count: int) -> str:
    return "No code changes" if count == 0 else f"{count} file{'s' if count != 1 else ''} changed"


def menu_rows(agent: AgentSession, previous_session_id: str | None = None) -> list[MenuRow]:
    """The rows: "Redo" (when a rewind can be undone), the checkpoints newest first, "No redo"
    saying why when turns made since a rewind keep it from being undone, then "/resume" (a
    session this process left by `/clear` or a fork): Enter on the preselected first row rewinds
    or redoes, it never switches sessions."""
    rows: list[MenuRow] = []
    redo = agent.files.checkpoints.exists() and agent.rewinds.can_redo()
    if redo:
        rows.append(MenuRow(ROW_REDO))
    choices = agent.rewinds.checkpoint_choices() if agent.files.checkpoints.exists() else []
    for choice in reversed(choices):
        edited = sum(1 for item in choice.record.files if item.restorable or item.problem)
        rows.append(MenuRow(ROW_CHECKPOINT, number=choice.number, time=_local_time(choice.record.created_at),
                            prompt=choice.record.prompt or "", files=_files_label(edited), modes=list(choice.modes)))
    refusal = agent.rewinds.redo_refusal() if agent.files.checkpoints.exists() and not redo else None
    if refusal:  # after the checkpoints: Enter on the first row still rewinds
        rows.append(MenuRow(ROW_NO_REDO, reason=refusal))
    if previous_session_id and previous_session_id != agent.session_id:
        rows.append(MenuRow(ROW_RESUME, session_id=previous_session_id))
    return rows


def _preview_lines(result: RewindResult, cwd: Path) -> list[str]:
    lines = []
    for row in result.files:
        try:
            shown = str(Path(row["path"]).relative_to(cwd))
        except ValueError:
            shown = row["path"]
        note = f" ({row['reason']})" if row.get("reason") else ""
        if row.get("outside_edit"):
            note += f" — changed outside the tracked tools at {row['outside_edit']['mtime']}; refused without --force"
        lines.append(f"{row['action']}: {shown}{note}")
        if row.get("diff"):
            lines.extend(row["diff"].rstrip("\n").splitlines()[:40])
        elif row.get("binary"):
            lines.append(f"  binary: {row['binary']['old']} → {row['binary']['new']}")
    for problem in result.problems:
        if problem.code != "changed_outside":
            lines.append(f"problem: {problem.message}")
    return lines or ["No files change."]


def preview_text(agent: AgentSession, row: MenuRow, mode: RewindMode | None) -> str:
    """What the action would do (a dry run; nothing is written), as plain text."""
    try:
        if row.kind == ROW_REDO:
            result = agent.rewinds.redo(RewindOptions(dry_run=True, diff=True))
            return "Puts code and conversation back as they were before the last rewind.\n" + "\n".join(
                _preview_lines(result, agent.folder))
        if mode is None:
            return ""
        if mode.restores_code:
            result = agent.rewinds.rewind(row.number, mode, RewindOptions(dry_run=True, diff=True))
            head = "Restores the files to just before this prompt"
            head += " and moves the conversation back to it." if mode is RewindMode.BOTH else "; the conversation stays."
            return head + "\n" + "\n".join(_preview_lines(result, agent.folder))
    except CommandcodeError as error:
        return f"error: {error}"
    return {
        RewindMode.CONVERSATION: "Moves the conversation back to just before this prompt; files stay as they are.",
        RewindMode.SUMMARIZE_FROM: "Replaces the turns from here on with a summary in the context; files and the "
                                   "original messages stay.",
        RewindMode.SUMMARIZE_TO: "Replaces the turns before this one with a summary in the context; files and the "
                                 "original messages stay.",
    }.get(mode, "")


def confirm_default(project: ProjectContext) -> bool:
    """The confirmation's default answer: the `rewind.confirmDefault` setting of the caller's
    project context (true: the action; no when the settings cannot be read)."""
    from ..errors import SettingsError

    try:
        return project.settings().rewind_confirm_default
    except SettingsError:
        return False


def perform(agent: AgentSession, choice: MenuChoice, *, force: bool = False) -> RewindResult | None:
    """Runs a checkpoint's action or the redo (a resume row is the caller's: it switches sessions)."""
    if choice.row.kind == ROW_REDO:
        return agent.rewinds.redo(RewindOptions(force=force))
    if choice.row.kind == ROW_CHECKPOINT and choice.mode is not None:
        return agent.rewinds.rewind(choice.row.number, choice.mode, RewindOptions(force=force))
    return None


def new_screen(agent: AgentSession, previous_session_id: str | None = None, *,
               project: ProjectContext | None = None) -> Any:
    """The Textual screen of the menu (Textual is imported here, when a menu opens); `project`
    is the caller's context (the shell's), else the session's own (`SessionHandle.project`)."""
    from .screens.rewind import RewindScreen

    rows = menu_rows(agent, previous_session_id)
    if not rows:
        raise CommandcodeError(f"session {agent.session_id} has no checkpoints to rewind to",
                               hint="a checkpoint opens with each prompt")
    return RewindScreen(rows, lambda row, mode: preview_text(agent, row, mode), confirm_default=confirm_default(project or agent.handle.project))


def open_menu(agent: AgentSession, render: Callable[[RewindResult], None], *, force: bool = False) -> MenuChoice | None:
    """`commandcode rewind REF` without `--to`: the menu full-screen, then the chosen action."""
    from .app import run_screen

    choice = run_screen(new_screen(agent))
    if not isinstance(choice, MenuChoice):
        return None
    result = perform(agent, choice, force=force)
    if result is not None:
        render(result)
    return choice
