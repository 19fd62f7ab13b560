"""What a slash command is, and what it may ask of the running shell.

A command is a `SlashCommand`: a name, aliases, one-line summary and `/help` text, a `run`
function and an optional completer for its arguments. `run(shell, args)` gets the running shell
through the `Shell` protocol below (the session, output, questions, full-screen screens, session
switches) and raises `CommandcodeError` for a refused command, which the shell prints as one line.
Commands live in `shell/commands/`, one module each, exposing `COMMANDS`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..agent.runtime import AgentSession
    from ..config.context import ProjectContext


class Shell(Protocol):
    """The running shell, as a slash command sees it."""

    @property
    def cwd(self) -> Path: ...

    @property
    def project(self) -> ProjectContext:
        """The project context of the current folder: its paths and settings, read once
        (`refresh()` after a settings write)."""
        ...

    @property
    def agent(self) -> AgentSession:
        """The current session (a new one has no file until its first turn is saved)."""
        ...

    @property
    def previous_session_id(self) -> str | None:
        """The session this process left by `/clear` (or None), offered first by the rewind menu."""
        ...

    def switch_to(self, agent: AgentSession, *, keep_grants: bool = True) -> None:
        """Makes `agent` the current session (`/resume`, `/fork`, `/clone`, `/clear`), closing the
        old one. Session-scoped permission grants carry over unless `keep_grants` is False."""
        ...

    def print(self, text: str) -> None:
        """Prints plain text (control bytes made visible)."""
        ...

    def print_markdown(self, text: str) -> None: ...

    def print_file_link(self, label: str, path: str) -> None:
        """Prints `label` then `path` as an OSC 8 `file://` hyperlink where the terminal shows
        them, else as plain text (control bytes made visible either way)."""
        ...

    def expand(self, number: int) -> None:
        """Shows tool call `number` of this shell (1-based, as its collapsed line numbers it)
        whole: its input and full result. Raises `CommandcodeError` when there is none."""
        ...

    @property
    def tool_call_count(self) -> int:
        """How many tool calls this shell has shown (`expand` takes 1 to this)."""
        ...

    def notice(self, text: str) -> None:
        """A dimmed one-line notice."""
        ...

    def confirm(self, question: str, *, default: bool = False) -> bool: ...

    def choose(self, question: str, options: Sequence[str], *, default: int = 0) -> int | None:
        """One of `options` by index, or None when the user cancels."""
        ...

    def ask_text(self, question: str, *, default: str = "") -> str | None:
        """A line of text, or None when the user cancels."""
        ...

    def run_screen(self, screen: Any) -> Any:
        """Runs a Textual screen full-screen (see `ui/app.py`) and returns what it dismissed with."""
        ...

    def copy(self, text: str) -> str:
        """Copies text to the clipboard; returns the line to show (how it was copied, or why not).
        The shell implements it with `present.clipboard.copy` (OSC 52, tmux, wl-copy/xclip/pbcopy)."""
        ...

    def set_title(self, title: str) -> None:
        """The terminal's tab title (OSC 2)."""
        ...

    def exit(self) -> None: ...

    def put_input(self, text: str) -> None:
        """Puts `text` into the input box of the next prompt (editable, not sent): a rewound
        prompt goes back there, as in Claude Code."""
        ...

    def show_recap(self) -> None:
        """Prints the last few exchanges of the context the model now sees (`shell/recap.py`):
        after a resume, and after a rewind moved the conversation."""
        ...


class ShellBase:
    """What every `Shell` derives the same way from its current session (`agent`, which each
    shell defines): the working folder, and the session `switch_to` left last."""

    _previous_session_id: str | None = None
    pending_input: str = ""  # what the next prompt's input box starts with (`put_input`)

    def put_input(self, text: str) -> None:
        self.pending_input = text

    @property
    def agent(self) -> AgentSession:
        raise NotImplementedError

    @property
    def cwd(self) -> Path:
        return self.agent.cwd

    @property
    def project(self) -> ProjectContext:
        """The current session's context (`SessionHandle.project`): resolved once for its folder,
        handed on to the sessions the shell switches to in the same folder."""
        return self.agent.handle.project

    @property
    def previous_session_id(self) -> str | None:
        return self._previous_session_id


Runner = Callable[[Shell, str], None]
Completer = Callable[[Shell, str], list[str]]


class SlashCommand:
    """One slash command: `/name args`."""

    __slots__ = ("aliases", "complete", "help", "name", "run", "summary")

    def __init__(self, name: str, run: Runner, summary: str, *, aliases: Sequence[str] = (), help: str = "",
                 complete: Completer | None = None) -> None:
        self.name = name
        self.run = run
        self.summary = summary
        self.aliases = tuple(aliases)
        self.help = help or summary
        self.complete = complete

    def __repr__(self) -> str:
        return f"SlashCommand(/{self.name})"


def registry() -> dict[str, SlashCommand]:
    """Every slash command by name and alias, from the modules of `shell/commands/`."""
    import importlib
    import pkgutil

    from . import commands

    found: dict[str, SlashCommand] = {}
    for module_info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda info: info.name):
        module = importlib.import_module(f"{commands.__name__}.{module_info.name}")
        for command in getattr(module, "COMMANDS", ()):
            for key in (command.name, *command.aliases):
                if key in found:
                    raise RuntimeError(f"/{key} is defined twice ({found[key]!r} and {command!r})")
                found[key] = command
    return found
