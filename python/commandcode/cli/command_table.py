"""The `sessions` commands the argv fast path runs, declared once: `COMMANDS`. They are the
read-only ones and the two copies (`fork`, `clone`: a fork of a 1 GB session costs about a copy
of the file, and typer's import would be a fifth of that).

The table drives both parsers that read them, as `launcher/flags.py` does for the launch
flags: `sessions.py` generates the typer commands from it, and `fast_path.py` derives its
`FAST_COMMANDS` from it, so neither can take an option the other does not. Each `Command` names
its words, the view function that prints it (`module:function`, typer-free), its help and its
`Param`s in the view's order: a positional `argument`, a `switch`, or a value option (`int`: a
whole number >= 1, `str`); `fast=False` marks one only typer parses (`--source`: the fast path
leaves an argv that names it to typer).
"""

from __future__ import annotations


class Param:
    """One parameter of a command: the view's keyword `name`, how it is given and its help."""

    __slots__ = ("name", "kind", "opts", "help", "fast", "default")

    def __init__(self, name: str, kind: str, help: str, *opts: str, fast: bool = True,
                 default: object = None) -> None:
        self.name = name
        self.kind = kind  # "argument", "switch", "int" or "str"
        self.opts = opts  # the option names (none for an argument)
        self.help = help
        self.fast = fast
        self.default = False if kind == "switch" else default


class Command:
    """One command: its words after `commandcode`, its view, its help and parameters."""

    __slots__ = ("words", "view", "help", "params")

    def __init__(self, words: tuple[str, ...], view: str, help: str, params: tuple[Param, ...]) -> None:
        self.words = words
        self.view = view  # "module:function" inside `commandcode.cli`
        self.help = help
        self.params = params


REF = Param("ref", "argument", "Session id, id prefix, name or transcript path.")
JSON = Param("as_json", "switch", "Print JSON instead of a table.", "--json")
ALL_PROJECTS = Param("all_projects", "switch", "Every project, not just this directory's.", "--all-projects")
COPY_JSON = Param("as_json", "switch", "Print JSON.", "--json")
LIMIT = Param("limit", "int", "At most this many.", "--limit")
SOURCE = Param("source", "str", "Whose sessions: commandcode, claude (Claude Code), pi, or all.", "--source",
               fast=False, default="commandcode")

COMMANDS: tuple[Command, ...] = (
    Command(("sessions", "list"), "sessions_list:list_view", "Sessions of this directory, newest first.", (
        Param("all_sessions", "switch", "Include headless (-p) sessions.", "--all"), ALL_PROJECTS,
        Param("worktrees", "switch", "Every worktree of this git repository.", "--worktrees"),
        Param("branch", "str", "Only sessions started on this git branch.", "--branch"), LIMIT, JSON, SOURCE)),
    Command(("sessions", "search"), "sessions_list:search_view",
            "Full-text search of sessions: user and assistant text and tool calls.", (
        Param("query", "argument", "Text to find (any length; case is ignored)."), ALL_PROJECTS, LIMIT,
        Param("deep", "switch", "Search tool results too.", "--deep"),
        Param("newest", "switch", "Newest first instead of best match first.", "--newest"), JSON, SOURCE)),
    Command(("sessions", "show"), "sessions_show:show_view", "One session's details.", (REF, JSON, SOURCE)),
    Command(("sessions", "context"), "sessions_show:context_view",
            "The messages the model sees when the session is resumed.", (
        REF, JSON, Param("stats", "switch", "Build the context and print only its size (with --json: one JSON line).",
                         "--stats"), SOURCE)),
    Command(("sessions", "fork"), "sessions_copy:fork_view",
            "Copy a session's whole tree and checkpoints into a new session (the original is untouched).", (
        REF, Param("name", "str", "Name the fork (unique in the project).", "--name", "-n"), COPY_JSON)),
    Command(("sessions", "clone"), "sessions_copy:clone_view",
            "Copy only a session's active branch into a new session, without checkpoints.", (REF, COPY_JSON)),
    Command(("sessions", "du"), "sessions_du:du_view",
            "Disk use: per project and for the largest sessions, and what a sweep would free.", (ALL_PROJECTS, JSON)),
)
