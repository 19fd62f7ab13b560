"""`commandcode checkpoints list` and `commandcode rewind`: thin commands over
`commandcode.rewind` (parse → call → render). Data goes to stdout, messages to stderr; every
refusal prints one line (plus a hint) and exits 1."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.prompt import Confirm, IntPrompt
from rich.table import Table

from ..checkpoints import Checkpoint, read_checkpoints
from ..errors import CommandcodeError, UsageError
from ..ids import parse_iso
from ..paths import SessionFiles
from ..rewind import (
    CANCEL_LABEL,
    RewindMode,
    RewindResult,
    available_modes,
    checkpoint_numbers,
    find_checkpoint,
    rewind,
)

_SKIP_REASONS = {
    "too_large": "over 10 MB, never backed up",
    "disk_full": "not backed up: the disk was low",
    "symlink": "a symlink, never followed",
}


def _stdout() -> Console:
    return Console(highlight=False, soft_wrap=True)


def _stderr() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


def _fail(error: BaseException) -> NoReturn:
    console = _stderr()
    message = str(error) if not isinstance(error, OSError) else f"{error.filename or ''}: {error.strerror or error}".lstrip(": ")
    console.print(f"error: {escape(message)}")
    hint = getattr(error, "hint", None)
    if hint:
        console.print(f"hint: {escape(hint)}")
    raise typer.Exit(code=1)


def _guarded(action: Callable[[], None]) -> None:
    try:
        action()
    except (CommandcodeError, OSError) as error:
        _fail(error)


def _is_terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _resolve(ref: str) -> SessionFiles:
    from ..catalog import resolve_session

    return resolve_session(ref, Path.cwd())


def session_cwd(files: SessionFiles) -> Path:
    """The session's working directory: the transcript header's `cwd`, else the current one."""
    try:
        with open(files.transcript, "rb") as handle:
            for raw in handle:
                if not raw.strip():
                    continue
                header = json.loads(raw)
                if isinstance(header, dict) and header.get("type") == "session" and isinstance(header.get("cwd"), str):
                    return Path(header["cwd"])
                break
    except (OSError, ValueError):
        pass
    return Path.cwd()


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


def _checkpoint_rows(files: SessionFiles, cwd: Path) -> list[dict[str, Any]]:
    records = read_checkpoints(files.checkpoints)
    has_transcript = files.transcript.exists()
    rows = []
    for index, (record, number) in enumerate(zip(records, checkpoint_numbers(records))):
        rows.append(
            {
                "number": number,
                "id": record.id,
                "createdAt": record.created_at,
                "prompt": record.prompt,
                "messageCount": record.message_count,
                "files": [_file_row(item) for item in record.files],
                "modes": [mode.value for mode in available_modes(records, index, has_transcript=has_transcript)],
            }
        )
    return rows


def _file_row(item: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"path": item.path, "hash": item.hash, "algo": item.algorithm}
    if item.skipped:
        row["skipped"] = item.skipped
    return row


def list_command(
    ref: Annotated[str, typer.Argument(help="Session id, unique id prefix, name or transcript path.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List a session's checkpoints: number, time, prompt, files, and the rewind choices."""

    def run() -> None:
        files = _resolve(ref)
        cwd = session_cwd(files)
        rows = _checkpoint_rows(files, cwd)
        if as_json:
            sys.stdout.write(json.dumps({"session": files.session_id, "cwd": str(cwd), "checkpoints": rows}, indent=2) + "\n")
            return
        if not rows:
            _stderr().print(f"session {files.session_id} has no checkpoints")
            return
        table = Table(title=f"Checkpoints of {files.session_id}", title_justify="left")
        for column in ("#", "time", "prompt", "files", "choices"):
            table.add_column(column, overflow="fold")
        for row in rows:
            names = [
                _display_path(item["path"], cwd) + (f" ({item['skipped']})" if item.get("skipped") else "")
                for item in row["files"]
            ]
            table.add_row(
                str(row["number"]),
                _local_time(row["createdAt"]),
                escape(row["prompt"] or ""),
                escape(", ".join(names) if names else "—"),
                ", ".join(row["modes"]),
            )
        _stdout().print(table)

    _guarded(run)


def _choose_mode(records: list[Checkpoint], index: int, files: SessionFiles, number: int) -> RewindMode | None:
    """The numbered rich prompt of the six choices; `None` for cancel."""
    offered = available_modes(records, index, has_transcript=files.transcript.exists())
    console = _stderr()
    record = records[index]
    console.print(f"Rewind to checkpoint {number}: {escape(record.prompt or '(no prompt)')}")
    for position, mode in enumerate(offered, start=1):
        console.print(f"  {position}. {mode.label}")
    console.print(f"  {len(offered) + 1}. {CANCEL_LABEL}")
    choice = IntPrompt.ask(
        "Choose", choices=[str(position) for position in range(1, len(offered) + 2)], console=console
    )
    return offered[choice - 1] if choice <= len(offered) else None


def _render(result: RewindResult, cwd: Path, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(result.to_json(), indent=2) + "\n")
        return
    out = _stdout()
    verbs = ("would write", "would delete") if result.dry_run else ("restored", "deleted")
    for path in result.written:
        out.print(f"{verbs[0]:<12} {escape(_display_path(path, cwd))}")
    for path in result.deleted:
        out.print(f"{verbs[1]:<12} {escape(_display_path(path, cwd))}")
    for skipped in result.skipped:
        reason = _SKIP_REASONS.get(skipped.reason, skipped.reason)
        out.print(f"{'skipped':<12} {escape(_display_path(skipped.path, cwd))} ({reason})")
    for path in sorted(set(result.changed_outside)):
        out.print(f"{'changed':<12} {escape(_display_path(path, cwd))} (changed outside the tracked tools)")
    console = _stderr()
    for problem in result.problems:
        console.print(f"problem: {escape(problem.message)}")
    action = "Would rewind" if result.dry_run else "Rewound"
    detail = f"{action} to checkpoint {result.number} ({result.mode.label.lower()})"
    if result.dropped_checkpoints:
        detail += f"; dropped {result.dropped_checkpoints} checkpoint(s)"
    console.print(detail)


def rewind_command(
    ref: Annotated[str, typer.Argument(help="Session id, unique id prefix, name or transcript path.")],
    to: Annotated[int, typer.Option("--to", help="Checkpoint number as `checkpoints list` shows it (1 is the first prompt).")],
    mode: Annotated[
        RewindMode | None,
        typer.Option("--mode", case_sensitive=False, help="both, conversation, code, summarize-from or summarize-to."),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List what would be written, deleted and skipped.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite files changed outside the tracked tools.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    allow_outside: Annotated[
        bool, typer.Option("--allow-outside", help="Allow writes outside the session's working directory.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Rewind a session to the state from just before turn N: code, conversation, or both."""

    def run() -> None:
        files = _resolve(ref)
        cwd = session_cwd(files)
        chosen = mode
        if chosen is None:
            if not _is_terminal():
                raise UsageError("--mode is required when not on a terminal", hint="pass --mode both|conversation|code|summarize-from|summarize-to")
            records = read_checkpoints(files.checkpoints)
            chosen = _choose_mode(records, find_checkpoint(records, to), files, to)
            if chosen is None:
                _stderr().print("Cancelled; nothing was changed")
                return
        options = {"force": force, "allow_outside": allow_outside}
        if not dry_run and not yes:
            if not _is_terminal():
                raise UsageError("refusing to rewind without confirmation", hint="pass --yes, or --dry-run to preview")
            preview = rewind(files, cwd, to, chosen, dry_run=True, **options)
            _render(preview, cwd, as_json=False)
            if not Confirm.ask("Proceed?", default=False, console=_stderr()):
                _stderr().print("Cancelled; nothing was changed")
                return
        result = rewind(files, cwd, to, chosen, dry_run=dry_run, **options)
        _render(result, cwd, as_json)

    _guarded(run)


def register(app: typer.Typer) -> None:
    """Adds the `checkpoints` sub-app and the `rewind` command to `app`."""
    checkpoints_app = typer.Typer(help="Inspect a session's checkpoints.", no_args_is_help=True)
    checkpoints_app.command("list")(list_command)
    app.add_typer(checkpoints_app, name="checkpoints")
    app.command("rewind")(rewind_command)
