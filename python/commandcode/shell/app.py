"""The interactive shell: the prompt loop and the real `Shell` that slash commands get.

One `PromptSession` is the editor (history, completion, key bindings from `keys.py`). A prompt
starts a turn in a worker thread (`agent.turns.run_turn(prompt, on_event=, cancel=)`); its events are
printed above the prompt as they come (`render.py`), and the prompt stays up: what the user sends
meanwhile is queued (shown dimmed) and sent when the turn ends, a few read-only commands
(`IMMEDIATE`, `/trace` among them) run at once. When a turn ends the worker makes the prompt
return (keeping what was typed), so everything else — slash commands, queued messages, the
rewind menu — runs in the main thread, one thing at a time.

A background sub-agent run's end is one line at the prompt (`run_notices.py`); its permission
questions come up as the turn's do (`permission_prompt.py`).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import CommandcodeError, TurnInterrupted
from . import terminal
from .render import LiveTurn, Output, ToolCall
from .slash import ShellBase, SlashCommand, registry
from .warm_start import Deferred

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession

    from ..agent.runtime import AgentSession
    from ..agent.turn import TurnResult

IMMEDIATE = frozenset({"trace", "status", "session-file", "help", "expand"})  # safe to run while a turn runs
EXIT_CONFIRM_SECONDS = 2.0
INTERRUPTED_KEPT = ("Interrupted · what was said so far is kept, marked interrupted (the model is told); "
                    "its file edits stay (a rewind undoes them)")


class Signal:
    """What a key binding made the prompt return: `kind`, and the text the editor held."""

    def __init__(self, kind: str, text: str) -> None:
        self.kind, self.text = kind, text


class TurnRunner:
    """One turn running in a worker thread."""

    def __init__(self, shell: InteractiveShell, prompt: str) -> None:
        self.shell, self.prompt = shell, prompt
        self.cancel = threading.Event()
        self.done = threading.Event()
        self.error: BaseException | None = None
        self.result: TurnResult | None = None
        self.live = LiveTurn(shell.output, shell.calls, shell.redraw)
        self.thread = threading.Thread(target=self._run, name="commandcode-turn", daemon=True)

    def _run(self) -> None:
        try:
            self.result = self.shell.agent.turns.run_turn(self.prompt, on_event=self.live.on_event, cancel=self.cancel)
        except BaseException as error:  # reported by the main thread, never a traceback
            self.error = error
        finally:
            self.done.set()
            self.shell.wake()


class InteractiveShell(ShellBase):
    """The running shell (the `Shell` protocol of `shell/slash.py`)."""

    def __init__(self, agent: AgentSession | Deferred[AgentSession], *, status_command: str | None = None,
                 permission_mode: str | None = None) -> None:
        """`agent` is the session, or a `Deferred` one (`warm_start.py`: made once the prompt is
        up, the commands table with it); `permission_mode` is what the status line shows until
        it is made."""
        from .status import StatusLine

        self._agents: Deferred[AgentSession] = agent if isinstance(agent, Deferred) else Deferred.ready(agent)
        self._commands: Deferred[dict[str, SlashCommand]] = Deferred(registry)
        self.when_prompt_up: list[Callable[[], None]] = []  # housekeeping that waits for the first prompt
        self._launch_mode = permission_mode
        self._bypass_in_cycle = permission_mode == "bypassPermissions"  # only --yolo lets Shift+Tab reach it
        self.output = Output()
        self.calls: list[ToolCall] = []
        self.queue: list[str] = []
        self.turn: TurnRunner | None = None
        self.status_line = StatusLine(status_command, self.redraw)
        self.status_info: dict[str, Any] = {}
        self._exit = False
        self._last_ctrl_c = 0.0
        self._session: PromptSession[Any] | None = None
        from .permission_prompt import PermissionPrompt
        from .run_notices import RunNotices

        self.permissions = PermissionPrompt(lambda: self._signal_from_thread("permission"))
        self.run_notices = RunNotices(lambda: self._signal_from_thread("subagent-ended"), self.turn_running,
                                      self.notice, self.print_markdown)
        if not isinstance(agent, Deferred):
            self.adopt(agent)

    def adopt(self, agent: AgentSession) -> None:
        """Wires a session made for this shell: its permission questions are asked here, and
        the ends of its background sub-agent runs are told here."""
        agent.turns.wire(self._ask_permission)
        agent.turns.on_subagent_end = self.run_notices.ended

    @property
    def _agent(self) -> AgentSession:
        return self._agents.get()

    @property
    def commands(self) -> dict[str, SlashCommand]:
        """Every slash command by name and alias (imported on first use: not before the prompt)."""
        return self._commands.get()

    @property
    def made_agent(self) -> AgentSession | None:
        """The current session when it is made (without waiting for a deferred one)."""
        return self._agents.peek()

    def warm_up(self) -> None:
        """Makes the command table and a deferred session in the background (the prompt is up),
        then runs what waited for the prompt (`when_prompt_up`: the daily sweep's check)."""
        self._commands.start()
        self._agents.start()
        for task in self.when_prompt_up:
            task()

    # ----------------------------------------------------------------------------------------
    # The Shell protocol

    @property
    def agent(self) -> AgentSession:
        return self._agent

    def switch_to(self, agent: AgentSession, *, keep_grants: bool = True) -> None:
        old = self._agent
        if old.session_id == agent.session_id:
            return
        agent.models.carry_over(old.models)
        # `/fork` in this process keeps the session's grants (seed chapter 2)
        agent.turns.wire(old.turns.ask_permission, old.turns.grants if keep_grants else None)
        agent.turns.on_subagent_end = self.run_notices.ended
        if not agent.is_open:
            agent.__enter__()
        old.close()
        if old.handle.exists_on_disk:
            self._previous_session_id = old.session_id
        self._agents = Deferred.ready(agent)
        self.calls.clear()
        if not agent.handle.is_new:  # a resumed, forked or cloned session: where the conversation stands
            self.show_recap()
        self.refresh_status()
        terminal.set_title(agent.name or "commandcode")
        self.rearm_share()

    def rearm_share(self) -> None:
        """A resumed session that is shared gets its live page back (`launcher.start.rearm_share`:
        a server that lost the share serves it again), or one notice says why it is not live."""
        from ..launcher.start import rearm_share

        notice = rearm_share(self._agent, self.notice)
        if notice:
            self.notice(notice)

    def print(self, text: str) -> None:
        self.output.plain(text)

    def show_recap(self) -> None:
        from .recap import recap_lines

        lines = recap_lines(self._agent.handle.messages)
        if lines:
            self.output.recap(lines)

    def print_markdown(self, text: str) -> None:
        self.output.markdown(text)

    def notice(self, text: str) -> None:
        self.output.notice(text)

    def print_file_link(self, label: str, path: str) -> None:
        from ..present.console import printable

        self.output.write(f"{printable(label, one_line=True)}{terminal.file_link(path)}\n")

    @property
    def tool_call_count(self) -> int:
        return len(self.calls)

    def confirm(self, question: str, *, default: bool = False) -> bool:
        return terminal.confirm(question, default=default)

    def choose(self, question: str, options: Sequence[str], *, default: int = 0) -> int | None:
        return terminal.choose(question, options, default=default)

    def ask_text(self, question: str, *, default: str = "") -> str | None:
        return terminal.ask_text(question, default=default)

    def run_screen(self, screen: Any) -> Any:
        from ..ui.app import run_screen

        return run_screen(screen)

    def copy(self, text: str) -> str:
        from ..present.clipboard import copy

        return copy(text)

    def set_title(self, title: str) -> None:
        terminal.set_title(title)

    def exit(self) -> None:
        self._exit = True

    # ----------------------------------------------------------------------------------------
    # What the key bindings call (`keys.ShellKeys`)

    def turn_running(self) -> bool:
        return self.turn is not None and not self.turn.done.is_set()

    def interrupt_turn(self, *, restore_queue: bool) -> None:
        if self.turn is not None:
            self.turn.cancel.set()
        if restore_queue and self.queue and self._session is not None:
            buffer = self._session.default_buffer
            buffer.text = "\n".join([*self.queue, buffer.text] if buffer.text else self.queue)
            buffer.cursor_position = len(buffer.text)
            self.queue.clear()
        self.redraw()

    def signal(self, kind: str) -> None:
        self._exit_prompt(kind)

    def cycle_permission_mode(self) -> None:
        from ..agent.permission_modes import shift_tab_cycle

        current = self._agent.models.effective_permission_mode()
        if current == "bypassPermissions":
            self._bypass_in_cycle = True  # started there (a setting): cycling away must not lose it for good
        cycle = shift_tab_cycle(bypass=self._bypass_in_cycle)
        index = cycle.index(current) if current in cycle else -1
        self._agent.models.set_permission_mode(cycle[(index + 1) % len(cycle)])
        self.redraw()

    # ----------------------------------------------------------------------------------------
    # The live region

    def redraw(self) -> None:
        session = self._session
        if session is not None and session.app.is_running:
            session.app.invalidate()

    def wake(self) -> None:
        """From the turn's thread: makes the prompt return so the main thread takes over."""
        self._signal_from_thread("turn-done")

    def _signal_from_thread(self, kind: str) -> None:
        session = self._session
        if session is not None and session.app.is_running and session.app.loop is not None:
            session.app.loop.call_soon_threadsafe(self._exit_prompt, kind)

    def _ask_permission(self, request: Any) -> str:
        """`SessionTurns.ask_permission`, from the turn's or a run's thread (a run's question waits on its `cancel`)."""
        cancel = request.cancel if request.cancel is not None else self.turn.cancel if self.turn is not None else None
        return self.permissions.ask(request, cancel)

    def _exit_prompt(self, kind: str) -> None:
        session = self._session
        if session is None:
            return
        app = session.app
        if app.is_running and app.future is not None and not app.future.done():
            app.exit(result=Signal(kind, session.default_buffer.text))

    def _pre_run(self) -> None:
        if self._agents.error is not None:
            self._exit_prompt("start-failed")
        elif self.permissions.has_pending():  # asked while no prompt was up to return
            self._exit_prompt("permission")
        elif self.run_notices.pending():
            self._exit_prompt("subagent-ended")
        elif self.turn is not None and self.turn.done.is_set():
            self._exit_prompt("turn-done")

    def message(self) -> Any:
        """The live region above the input: the running tool, the queued messages, the prompt."""
        fragments: list[tuple[str, str]] = []
        if self.turn_running() and self.turn is not None:
            lines = self.turn.live.live_lines()
            if not lines or not lines[-1].startswith("⋯"):
                lines.append("⋯ working — Esc interrupts")
            fragments.extend(("class:live", line + "\n") for line in lines)
        for queued in self.queue:
            first = queued.splitlines()[0] if queued.strip() else queued
            fragments.append(("class:queued", f"  queued: {first}\n"))
        fragments.append(("class:prompt", "> "))
        return fragments

    def toolbar(self) -> str:
        status = dict(self.status_info)
        agent = self._agents.peek()
        if agent is None:  # still being made (warm_start.py): the launch's own facts
            status.setdefault("permission_mode", self._launch_mode or "default")
        else:
            status.update({"permission_mode": agent.models.effective_permission_mode(), "name": agent.name or status.get("name")})
        return " " + self.status_line.text(status)

    def refresh_status(self) -> None:
        """Recomputes the status (reads the session's files) in the background, then redraws."""
        if self._agents.error is not None:
            return

        def compute() -> None:
            try:
                agent = self._agent
                info = agent.status()
            except (CommandcodeError, OSError):
                return
            if agent is self._agent:
                self.status_info = info
                self.redraw()

        threading.Thread(target=compute, name="commandcode-status", daemon=True).start()

    # ----------------------------------------------------------------------------------------
    # The loop

    def _make_session(self) -> PromptSession[Any]:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.styles import Style

        from .completion import SlashCompleter
        from .keys import TIMEOUTLEN, TTIMEOUTLEN, build_bindings
        from .prompt_history import PromptHistory

        session: PromptSession[Any] = PromptSession(
            history=PromptHistory(), completer=SlashCompleter(self, lambda: self.commands), complete_while_typing=False,
            key_bindings=build_bindings(self), bottom_toolbar=self.toolbar, enable_history_search=False,
            erase_when_done=True,  # the live region leaves no trace; `dispatch` echoes what runs
            style=Style.from_dict({"queued": "#888888 italic", "live": "ansicyan", "bottom-toolbar": "noreverse #aaaaaa"}),
        )
        session.app.timeoutlen = TIMEOUTLEN
        session.app.ttimeoutlen = TTIMEOUTLEN
        return session

    def run(self) -> None:
        with terminal.NoEcho(sys.stdin.fileno()):
            self._run()

    def _run(self) -> None:
        from prompt_toolkit.patch_stdout import patch_stdout

        self._session = self._make_session()
        # What the first keystroke does not need waits until the prompt is on the screen.
        self._session.app.after_render += self._after_first_render
        pending = ""
        while not self._exit and self._agents.error is None:  # a session that could not be made: run_shell says why
            if self.turn is not None and self.turn.done.is_set():
                self._finish_turn()
                continue
            if self.queue and not self.turn_running():
                self.dispatch(self.queue.pop(0))
                continue
            if self.pending_input and not pending:
                pending, self.pending_input = self.pending_input, ""
            try:
                with patch_stdout(raw=True):
                    result = self._session.prompt(self.message, default=pending, pre_run=self._pre_run)
            except EOFError:  # Ctrl+D on an empty line
                if self.turn_running() and self.turn is not None:
                    self.turn.cancel.set()
                    self.turn.thread.join()
                break
            pending = ""
            if isinstance(result, Signal):
                pending = result.text
                self._on_signal(result.kind)
                continue
            if result.strip():
                self.dispatch(result)

    def _after_first_render(self, _app: object) -> None:
        assert self._session is not None
        self._session.app.after_render -= self._after_first_render
        self.warm_up()
        if self._agents.done:  # made before the prompt: only its first status, after a breath
            first_status = threading.Timer(0.3, self.refresh_status)
            first_status.daemon = True
            first_status.start()

    def on_warm(self) -> None:
        """From the warm-start thread once the deferred session is made (or failed to be)."""
        if self._agents.error is not None:
            self._signal_from_thread("start-failed")
        else:
            self.refresh_status()

    def _on_signal(self, kind: str) -> None:
        if kind == "start-failed":
            self._exit = True  # run_shell reports the error
        elif kind == "subagent-ended":
            self.run_notices.tell()
        elif kind == "permission":
            self.permissions.ask_pending(self.choose, show=self.output.diff, cwd=str(self.cwd), hold=self.output.held)
        elif kind == "rewind":
            command = self.commands.get("rewind")
            if command is None:
                self.notice("no rewind menu in this build yet (/rewind is not available)")
            else:
                self.run_slash(command, "")
        elif kind == "ctrl-c":
            now = time.monotonic()
            if now - self._last_ctrl_c < EXIT_CONFIRM_SECONDS:
                self._exit = True
            else:
                self._last_ctrl_c = now
                self.notice("press Ctrl+C again to exit (or type /exit)")
        elif kind == "expand":
            self.expand(len(self.calls))

    def expand(self, number: int) -> None:
        """Shows tool call `number` (1-based) whole."""
        if not self.calls:
            raise CommandcodeError("no tool call to expand yet")
        if not 1 <= number <= len(self.calls):
            raise CommandcodeError(f"no tool call #{number}", hint=f"tool calls so far: 1 to {len(self.calls)}")
        self.output.expanded(number, self.calls[number - 1])

    def dispatch(self, text: str) -> None:
        """Runs a line the user sent: a slash command, or a prompt (queued while a turn runs)."""
        if text.startswith("/") and not text.startswith("//"):
            name, _, args = text[1:].partition(" ")
            name = name.strip().lower()
            command = self.commands.get(name)
            if command is None:
                self._echo(text)
                self._unknown(name)
                return
            if self.turn_running() and command.name not in IMMEDIATE:
                self.queue.append(text)
                return
            self._echo(text)
            self.run_slash(command, args.strip())
            return
        if self.turn_running():
            self.queue.append(text)
            return
        self._echo(text)
        self.turn = TurnRunner(self, text[1:] if text.startswith("//") else text)
        self.turn.thread.start()

    def _echo(self, text: str) -> None:
        """What the user sent, into the scrollback, as it starts to run."""
        from rich.markup import escape

        from ..present.console import printable

        lines = printable(text).split("\n")
        self.output.markup("\n".join(f"[bold]{'>' if index == 0 else ' '}[/] {escape(line)}" for index, line in enumerate(lines)))

    def _unknown(self, name: str) -> None:
        import difflib

        near = difflib.get_close_matches(name, list(self.commands), n=1, cutoff=0.5)
        hint = f"did you mean /{near[0]}?" if near else "type /help for the list of commands"
        self.output.error(f"unknown command /{name}", hint)

    def run_slash(self, command: SlashCommand, args: str) -> None:
        try:
            command.run(self, args)
        except CommandcodeError as error:
            self.output.error(str(error), error.hint)
        except OSError as error:
            where = f"{error.filename}: " if error.filename else ""
            self.output.error(f"{where}{error.strerror or error}")
        except Exception as error:  # a bug in a command: one line, the shell goes on
            self.output.error(f"internal error in /{command.name} ({type(error).__name__}: {error})",
                              "this is a bug in commandcode; please report it")
        self.refresh_status()

    def _finish_turn(self) -> None:
        turn, self.turn = self.turn, None
        assert turn is not None
        if not isinstance(turn.error, TurnInterrupted):
            turn.live.flush()  # reply text a model streamed without a closing usage event (or cut by Esc)
        error = turn.error
        if turn.result is not None and turn.result.interrupted:
            self.notice(INTERRUPTED_KEPT)
        elif isinstance(error, TurnInterrupted):
            self.notice("interrupted before it started — nothing of this turn was saved")
        elif isinstance(error, CommandcodeError):
            self.output.error(str(error), error.hint)
        elif error is not None:
            self.output.error(f"internal error ({type(error).__name__}: {error})", "this is a bug in commandcode; please report it")
        self.run_notices.tell()
        self.refresh_status()
