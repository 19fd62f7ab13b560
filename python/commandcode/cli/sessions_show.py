"""What `commandcode sessions show|context|tree` print, as plain functions, and the session
loading they share with `sessions status` and `export` (`load`, `load_from`, `warn_about`).

Typer-free, so the argv fast path (`fast_path.py`) runs these read-only commands without
importing the command-line framework; `sessions.py` declares the same commands for typer.
Each view turns errors into one stderr line and exit 1 (`handle_errors`).
"""

from __future__ import annotations

import os

from ..present.console import handle_errors, print_json, print_json_line, safe, stdout, warn
from ..sessions.reader import Session, open_session
from ..sessions.refs import resolve_direct

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any



def load(ref: str, *, tail: bool = True) -> Session:
    """The session a reference names (id, unique id prefix, name, or transcript path); `tail=False`
    for a view that needs the whole file, not only the context (`reader.scan`)."""
    files = resolve_direct(ref.strip(), os.getcwd())
    if files is None:
        from ..catalog.listing import resolve_session  # names, prefixes and other projects

        files = resolve_session(ref, os.getcwd())
    return open_session(files.sidecar_path(".jsonl"), tail=tail)


def load_from(ref: str, source: str, *, tail: bool = True) -> Any:
    """The session a reference names in `source` (`commandcode`, `claude`, `pi` or `all`);
    `tail` as for `load` (a foreign session is read whole anyway)."""
    if source == "commandcode":  # the fast path's case: no interop import
        return load(ref, tail=tail)
    from ..interop.sources import check_source

    source = check_source(source)
    if source == "commandcode":
        return load(ref, tail=tail)
    from ..interop.sources import resolve_foreign

    if source != "all":
        return resolve_foreign(source, ref, os.getcwd())
    from ..errors import AmbiguousSessionError, SessionNotFoundError

    found: list[tuple[str, Any]] = []
    for name in ("commandcode", "claude", "pi"):
        try:
            found.append((name, load(ref, tail=tail) if name == "commandcode" else resolve_foreign(name, ref, os.getcwd())))
        except SessionNotFoundError:
            continue
    if not found:
        raise SessionNotFoundError(f"no session of any source matches {ref!r}",
                                   hint="run `commandcode sessions list --source all --all-projects`")
    if len(found) > 1:
        raise AmbiguousSessionError(f"{ref!r} names sessions in several sources: "
                                    + ", ".join(f"{name} {session.id}" for name, session in found),
                                    hint="pass --source claude, pi or commandcode")
    return found[0][1]


def warn_about(session: Any) -> None:
    """Warns on stderr of the lines a reader skipped and what it found odd or repaired."""
    skipped = session.skipped_lines
    if skipped:
        first = skipped[0]
        warn(f"{session.path.name}: skipped {len(skipped)} unreadable line(s) (first: line {first.line}, {first.reason})")
    for line in getattr(session, "warnings", []):
        warn(f"{session.path.name}: {line}")


def describe(session: Any) -> dict[str, Any]:
    """The `sessions show` fields (a foreign session adds its source's own)."""
    extra = session.describe_extra() if hasattr(session, "describe_extra") else {}
    return {
        "id": session.id,
        "path": str(session.path),
        "cwd": session.cwd,
        "name": session.name,
        "created": session.created,
        "modified": session.modified,
        "message_count": session.message_count,
        "leaf": session.leaf_id,
        "model": _meta_model(session) or session.model,  # the real CLI adopts meta.model on resume
        "effort": session.effort,
        "parent_session_id": session.parent_session_id,
        "entrypoint": session.entrypoint,
        "header_id": session.header.id,
        "skipped_lines": [{"line": line.line, "offset": line.offset, "reason": line.reason, "detail": line.detail}
                          for line in session.skipped_lines],
        "anomalies": session.anomalies.to_dict(),
        **extra,
        "trace_ids": _trace_ids(getattr(session, "meta", None) or {}),  # foreign sessions have no meta
    }


def _trace_ids(meta: dict[str, Any]) -> list[str]:
    """`meta.traceIds` (per-turn W3C trace ids, oldest first), the valid ones."""
    ids = meta.get("traceIds")
    return [value for value in ids if isinstance(value, str) and len(value) == 32] if isinstance(ids, list) else []
def _meta_model(session: Any) -> str | None:
    """`meta.model`, which a resume adopts (the real CLI's rule), when the session has one."""
    model = (getattr(session, "meta", None) or {}).get("model")
    return model if isinstance(model, str) and model else None


@handle_errors
def show_view(ref: str, as_json: bool = False, source: str = "commandcode") -> None:
    """One session's details, then its sub-agent runs (`subagent_view.py`)."""
    from .subagent_view import run_lines, session_runs

    session = load_from(ref, source, tail=False)  # counts, skipped lines, anomalies
    details = describe(session)
    runs = session_runs(session)
    if as_json:
        print_json({**details, "subagent_runs": [run.to_dict() for run in runs.runs]})
        return
    warn_about(session)
    for line in [line for line in runs.warnings if line not in getattr(session, "warnings", [])]:
        warn(f"{session.path.name}: {line}")
    for key, value in details.items():
        if key in ("skipped_lines", "warnings", "subagents"):
            value = len(value)
        stdout.print(f"[bold]{key}[/]: {safe(_human(value), one_line=True)}")
    for line in run_lines(runs):  # each run folded under the `agent` call that started it
        stdout.print(safe(line, one_line=True))


def _human(value: object) -> str:
    """One `sessions show` value as a person reads it (`--json` keeps the data): no Python reprs,
    so `None` is a dash, a flag yes/no, a table its non-empty items, a list its items."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        items = [key.replace("_", " ") if item is True else f"{key.replace('_', ' ')} {_human(item)}"
                 for key, item in value.items() if item not in (False, 0, None, "", [], {})]
        return ", ".join(items) or "none"
    if isinstance(value, list | tuple):
        return ", ".join(_human(item) for item in value) or "none"
    return str(value)


@handle_errors
def context_view(ref: str, as_json: bool = False, stats: bool = False, source: str = "commandcode") -> None:
    """The messages the model sees when the session is resumed (`stats`: only its size)."""
    # Only the JSON of the context itself can do with the transcript's end: the counts and the
    # warning about skipped lines need the whole file, read at once rather than after the end.
    session = load_from(ref, source, tail=as_json and not stats)
    context = session.context()
    if stats and as_json:  # the size alone, one JSON line (what the open benchmarks time)
        print_json_line({"leaf": context.leaf_id, "entries": session.entry_count,
                         "context_messages": len(context.messages), "skipped_lines": len(session.skipped_lines)})
        return
    if stats:
        from ..sessions.tokens import context_tokens

        warn_about(session)
        read = getattr(session, "read_entries", None)  # a foreign session: the estimate alone
        tokens = context_tokens(context.messages, context.entry_ids, read) if read is not None else None
        for label, value in (("leaf", context.leaf_id or "—"), ("entries", f"{session.entry_count:,}"),
                             ("context messages", f"{len(context.messages):,}"),
                             ("context tokens", f"{tokens:,}" if tokens is not None else "—"),
                             ("skipped lines", f"{len(session.skipped_lines):,}")):
            stdout.print(f"[bold]{label}[/]: {safe(value, one_line=True)}")
        return
    from ..sessions.tool_results import SYNTHETIC_RESULTS, with_tool_results

    messages = with_tool_results(context.messages)  # as they are sent: calls without a result repaired
    feed = iter(context.entry_ids)
    entry_ids = ["" if (message.get("meta") or {}).get("source") == SYNTHETIC_RESULTS else next(feed, "")
                 for message in messages]
    if as_json:
        print_json({"leaf": context.leaf_id, "entry_ids": entry_ids, "messages": messages})
        return
    warn_about(session)
    for entry_id, message in zip(entry_ids, messages):
        kinds = ", ".join(str(block.get("type")) for block in message.get("content", []))
        stdout.print(f"[dim]{safe(entry_id, one_line=True)}[/] [bold]{safe(message.get('role'), one_line=True)}[/] "
                     f"{safe(kinds, one_line=True)}")


@handle_errors
def tree_view(ref: str, as_json: bool = False, offset: int = 0, limit: int = 0, source: str = "commandcode") -> None:
    """Every entry, its parent, and whether it is on the active path."""
    session = load_from(ref, source, tail=False)
    stop = offset + limit if limit else None
    rows = list(session.tree_rows(offset, stop))
    if as_json:
        print_json({"leaf": session.leaf_id, "entry_count": session.entry_count, "entries": [
            {"id": row.id, "parent_id": row.parent_id, "type": row.type, "timestamp": row.timestamp,
             "label": row.label, "on_active_path": row.on_active_path, "line": row.line} for row in rows]})
        return
    warn_about(session)
    from collections import defaultdict

    children: dict[str | None, list[Any]] = defaultdict(list)
    known = {row.id for row in rows}
    for row in rows:
        children[row.parent_id if row.parent_id in known else None].append(row)
    from rich.tree import Tree

    root = Tree(f"[bold]{safe(session.name or session.id, one_line=True)}[/]")
    # Each row is shown once: a parent cycle (or a duplicate id) must not loop, and rows that no
    # root reaches (a cycle with no way in) are shown as roots of their own, in file order.
    shown: set[int] = set()
    starts = sorted(children[None], key=lambda row: row.timestamp)
    pending = [row for row in rows if row.parent_id in known]
    while starts:
        stack = [(root, row) for row in reversed(starts)]
        while stack:
            parent_node, row = stack.pop()
            if row.line in shown:
                continue
            shown.add(row.line)
            marker = "[green]●[/]" if row.on_active_path else "○"
            label = f" [magenta]\\[{safe(row.label, one_line=True)}][/]" if row.label else ""
            node = parent_node.add(f"{marker} {safe(row.id, one_line=True)} {safe(row.type, one_line=True)}{label} "
                                   f"[dim]{safe(row.timestamp, one_line=True)}[/]")
            kids = [child for child in sorted(children[row.id], key=lambda child: child.timestamp, reverse=True)
                    if child.line not in shown]
            # A chain without branches stays at one level; only branch points indent.
            stack.extend((node if len(kids) > 1 else parent_node, child) for child in kids)
        starts = [row for row in pending if row.line not in shown][:1]
    stdout.print(root)
