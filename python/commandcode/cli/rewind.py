"""`commandcode checkpoints list` and `commandcode rewind`: thin commands over
`agent.runtime.AgentSession` (parse → call → render). Data goes to stdout, messages to stderr;
every refusal prints one line (plus a hint) and exits 1."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..checkpoints.modes import CANCEL_LABEL, RewindMode
from ..errors import UsageError
from ..present.console import handle_errors, print_json, safe, stderr, stdout, warn
from ..storage.ids import parse_iso

if TYPE_CHECKING:
    from ..agent.runtime import AgentSession
    from ..checkpoints.rewind import RewindResult
    from ..config.context import ProjectContext

# The agent, checkpoint and restore code is imported inside the commands that use it: every
# other command would pay for it at start-up.
_SKIP_REASONS = {
    "too_large": "over 10 MB, never backed up",
    "disk_full": "not backed up: the disk was low",
    "symlink": "a symlink, never followed",
}


def _is_terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _open(ref: str, *, allow_outside: bool = False) -> AgentSession:
    """The session a reference names (a `<id>.checkpoints.jsonl` path also works), with an
    interrupted restore of it finished first (and said so on stderr); the journal may name
    nothing outside the session's folder unless `allow_outside`. The session takes this launch's
    project context when it runs in the launch's folder (else it makes its folder's own)."""
    from ..agent.runtime import AgentSession
    from .launch_project import launch_project

    agent = AgentSession.for_reference(ref, notify=warn, project=launch_project())
    agent.rewinds.recover_interrupted_restore(allow_outside=allow_outside)
    return agent


def _display_path(path: Path | str, cwd: Path) -> str:
    try:
        return str(Path(path).relative_to(cwd))
    except ValueError:
        return str(path)


def _local_time(created_at: str) -> str:
    moment = parse_iso(created_at)
    if moment is None:
        return created_at or "?"
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def _checkpoint_rows(agent: AgentSession, *, include_rewound: bool = False) -> list[dict[str, Any]]:
    return [
        {
            "number": choice.number,
            "rewound": choice.record.rewound,
            "id": choice.record.id,
            "createdAt": choice.record.created_at,
            "prompt": choice.record.prompt,
            "messageCount": choice.record.message_count if choice.record.message_count >= 0 else None,  # None: not a count
            "files": [_file_row(item) for item in choice.record.files],
            "modes": [mode.value for mode in choice.modes],
        }
        for choice in agent.rewinds.checkpoint_choices(include_rewound=include_rewound)
    ]


def _file_row(item: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"path": item.path, "hash": item.hash, "algo": item.algorithm}
    if item.skipped:
        row["skipped"] = item.skipped
    return row


@handle_errors
def list_command(
    ref: Annotated[str, typer.Argument(help="Session id, unique id prefix, name or transcript path.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    show_all: Annotated[bool, typer.Option("--all", help="Also list the checkpoints a rewind passed (marked rewound).")] = False,
) -> None:
    """List a session's checkpoints: number, time, prompt, files, and the rewind choices."""
    agent = _open(ref)
    cwd = agent.cwd
    rows = _checkpoint_rows(agent, include_rewound=show_all)
    if as_json:
        print_json({"session": agent.session_id, "cwd": str(cwd), "checkpoints": rows, "canRedo": agent.rewinds.can_redo()})
        return
    if not rows:
        stderr.print(f"session {safe(agent.session_id, one_line=True)} has no checkpoints")
        return
    from rich.table import Table  # terminal output only: rich stays out of start-up

    table = Table(title=f"Checkpoints of {safe(agent.session_id, one_line=True)}", title_justify="left")
    for column in ("#", "time", "prompt", "files", "choices"):
        table.add_column(column, overflow="fold")
    for row in rows:
        names = [
            _display_path(item["path"], cwd) + (f" ({item['skipped']})" if item.get("skipped") else "")
            for item in row["files"]
        ]
        table.add_row(
            str(row["number"]) + (" (rewound)" if row["rewound"] else ""),
            safe(_local_time(row["createdAt"]), one_line=True),
            safe(row["prompt"] or "", one_line=True),
            safe(", ".join(names) if names else "—", one_line=True),
            ", ".join(row["modes"]),
        )
    stdout.print(table)
    if agent.rewinds.can_redo():
        stderr.print(f"a rewind can be undone: commandcode rewind {safe(agent.session_id, one_line=True)} --redo")


def _choose_mode(agent: AgentSession, number: int) -> RewindMode | None:
    """The numbered rich prompt of the six choices; `None` for cancel."""
    record, offered = agent.rewinds.offered_modes(number)
    stderr.print(f"Rewind to checkpoint {number}: {safe(record.prompt or '(no prompt)', one_line=True)}")
    for position, mode in enumerate(offered, start=1):
        stderr.print(f"  {position}. {mode.label}")
    stderr.print(f"  {len(offered) + 1}. {CANCEL_LABEL}")
    from rich.prompt import IntPrompt

    choice = IntPrompt.ask("Choose", choices=[str(position) for position in range(1, len(offered) + 2)], console=stderr)
    return offered[choice - 1] if choice <= len(offered) else None


_ACTION_WORDS = {"restored": "restore", "recreated": "recreate", "deleted": "delete", "unchanged": "unchanged",
                 "left alone": "leave"}


def _render_preview(result: RewindResult, cwd: Path) -> None:
    for row in result.files:
        line = f"{_ACTION_WORDS.get(row['action'], row['action']):<10} {safe(_display_path(row['path'], cwd), one_line=True)}"
        if row.get("reason"):
            line += f" ({safe(_SKIP_REASONS.get(row['reason'], row['reason']), one_line=True)})"
        if row.get("outside_edit"):
            line += f" (changed outside the tracked tools, modified {safe(_local_time(row['outside_edit']['mtime'] or ''), one_line=True)})"
        stdout.print(line, highlight=False)
        if row.get("diff"):
            stdout.print(safe(row["diff"]).rstrip("\n"), highlight=False, markup=False)
        elif row.get("binary"):
            old, new = row["binary"]["old"], row["binary"]["new"]
            shown = [f"{label} {facts['size']} bytes, blake3 {facts['hash'][:16]}" if facts else f"{label} none"
                     for label, facts in (("old", old), ("new", new))]
            stdout.print(f"           binary: {', '.join(shown)}", highlight=False)


def _render(result: RewindResult, cwd: Path, as_json: bool) -> None:
    if as_json:
        print_json(result.to_json())
        return
    if result.dry_run:
        _render_preview(result, cwd)
    else:
        verbs = ("restored", "deleted")
        for path in result.written:
            stdout.print(f"{verbs[0]:<12} {safe(_display_path(path, cwd), one_line=True)}")
        for path in result.deleted:
            stdout.print(f"{verbs[1]:<12} {safe(_display_path(path, cwd), one_line=True)}")
        for skipped in result.skipped:
            reason = _SKIP_REASONS.get(skipped.reason, skipped.reason)
            stdout.print(f"{'skipped':<12} {safe(_display_path(skipped.path, cwd), one_line=True)} ({safe(reason, one_line=True)})")
        for path in sorted(set(result.changed_outside)):
            stdout.print(f"{'changed':<12} {safe(_display_path(path, cwd), one_line=True)} (changed outside the tracked tools)")
    for problem in result.problems:
        stderr.print(f"problem: {safe(problem.message, one_line=True)}")
    if any(problem.code == "outside" for problem in result.problems):
        from ..checkpoints.rewind_code import outside_hint

        stderr.print(f"hint: {safe(outside_hint(cwd), one_line=True)}")
    stderr.print(_summary(result))


def _summary(result: RewindResult) -> str:
    if result.redo:
        action = "Would undo" if result.dry_run else "Undid"
        what = "the redo of the rewind" if result.undid_redo else "the rewind"
        detail = f"{action} {what} to checkpoint {result.number} ({result.mode.label.lower()})"
        if result.undid_redo and not result.dry_run:
            detail += "; --redo redoes it again"
        return detail + _kept_outside(result)
    action = "Would rewind" if result.dry_run else "Rewound"
    detail = f"{action} to checkpoint {result.number} ({result.mode.label.lower()})"
    if not result.dry_run:
        detail += "; undo it with --redo"
    return detail + _kept_outside(result)


def _kept_outside(result: RewindResult) -> str:
    if not result.kept_outside or result.dry_run:
        return ""
    return "; the outside edits it overwrote were kept: --redo brings them back"


@handle_errors
def rewind_command(
    ref: Annotated[str, typer.Argument(help="Session id, unique id prefix, name or transcript path.")],
    to: Annotated[int | None, typer.Option("--to", help="Checkpoint number as `checkpoints list` shows it (1 is the first prompt).")] = None,
    mode: Annotated[
        RewindMode | None,
        typer.Option("--mode", case_sensitive=False, help="both, conversation, code, summarize-from or summarize-to."),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List what each file would become, writing nothing.")] = False,
    diff: Annotated[bool, typer.Option("--diff", help="With --dry-run: a unified diff per text file.")] = False,
    redo_last: Annotated[bool, typer.Option("--redo", help="Undo the last rewind: code and conversation as before it.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite files changed outside the tracked tools.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    allow_outside: Annotated[
        bool, typer.Option("--allow-outside", help="Allow writes outside the session's working directory.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Rewind a session to the state from just before turn N: code, conversation, or both.
    Without --to (on a terminal) the rewind menu opens; --redo undoes the last rewind."""
    if diff and not dry_run:
        raise UsageError("--diff previews a rewind", hint="pass it with --dry-run")
    if redo_last and (to is not None or mode is not None):
        raise UsageError("--redo takes no --to or --mode", hint="it undoes the last rewind as it was")
    agent = _open(ref, allow_outside=allow_outside)
    cwd = agent.cwd
    from ..checkpoints.rewind import RewindOptions
    from ..config.testing_hooks import rewind_faults

    def options(preview: bool) -> RewindOptions:  # faults: the test hook COMMANDCODE_TEST_STEP_DELAY_MS
        return RewindOptions(dry_run=preview, diff=diff and preview, force=force, allow_outside=allow_outside,
                             faults=rewind_faults())

    if redo_last:
        _confirmed_run(lambda preview: agent.rewinds.redo(options(preview)),
                       cwd, agent.handle.project, dry_run=dry_run, yes=yes, as_json=as_json)
        return
    if to is None:
        if mode is not None or dry_run or not _is_terminal():
            raise UsageError("--to N (or --redo) is required" + ("" if mode is not None or dry_run else " when not on a terminal"),
                             hint="`commandcode checkpoints list REF` shows the numbers")
        from ..ui.rewind_menu import open_menu

        if open_menu(agent, lambda result: _render(result, cwd, as_json), force=force) is None:
            stderr.print("Cancelled; nothing was changed")
        return
    chosen = mode
    if chosen is None:
        if not _is_terminal():
            raise UsageError(
                "--mode is required when not on a terminal",
                hint="pass --mode both|conversation|code|summarize-from|summarize-to",
            )
        chosen = _choose_mode(agent, to)
        if chosen is None:
            stderr.print("Cancelled; nothing was changed")
            return
    number, picked = to, chosen
    _confirmed_run(lambda preview: agent.rewinds.rewind(number, picked, options(preview)),
                   cwd, agent.handle.project, dry_run=dry_run, yes=yes, as_json=as_json)


def _confirmed_run(operation: Callable[[bool], RewindResult], cwd: Path, project: ProjectContext, *, dry_run: bool,
                   yes: bool, as_json: bool) -> None:
    """A dry run, or the operation after its preview and a yes (`--yes` skips both)."""
    if not dry_run and not yes:
        if not _is_terminal():
            raise UsageError("refusing to rewind without confirmation", hint="pass --yes, or --dry-run to preview")
        _render(operation(True), cwd, as_json=False)
        from rich.prompt import Confirm

        if not Confirm.ask("Proceed?", default=confirm_default(project), console=stderr):
            stderr.print("Cancelled; nothing was changed")
            return
    _render(operation(dry_run), cwd, as_json)


def confirm_default(project: ProjectContext) -> bool:
    """The default answer of a rewind's confirmation: the `rewind.confirmDefault` setting of the
    session's context (true; no when the settings cannot be read)."""
    from ..errors import SettingsError

    try:
        return project.settings().rewind_confirm_default
    except SettingsError as error:
        warn(f"{error}; asking with the default answer no")
        return False


def register(app: typer.Typer) -> None:
    """Adds the `checkpoints` sub-app and the `rewind` command to `app`."""
    checkpoints_app = typer.Typer(help="Inspect a session's checkpoints.", no_args_is_help=True)
    checkpoints_app.command("list")(list_command)
    app.add_typer(checkpoints_app, name="checkpoints")
    app.command("rewind")(rewind_command)
