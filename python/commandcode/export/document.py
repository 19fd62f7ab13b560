"""Exporting a session: choose the entries, turn them into rows, render, write — streaming.

`export_session` is what `commandcode export`, `/export` and `AgentSession.export` run;
`render_text` renders a whole document in memory (share pages, gists). An html or md export
writes its rows into an unnamed spool file first (the header's message count is known only at
the end), then the header, the spooled body and the footer into the target's temporary file,
which is renamed over the target: memory stays at one chunk of entries whatever the size.

An html or md export folds each sub-agent run stored beside the session (format §21) under the
`agent` call that started it: the agent, its description and status, and its conversation.
Share pages and gists (`render_rows`, `render_text`) leave the runs out.

Secrets are always redacted and paths sanitized in html and md, the session name in the title
and heading included (`redact=False` is not offered for them); a jsonl export is a byte copy of the transcript's readable lines unless `redact`, where
a line with a secret in one of its strings is re-encoded with the secret replaced. Corrupt lines
are left out of every format and counted (`ExportResult.skipped_lines`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from ..sessions.files import SessionFiles
from ..sessions.reader import Session, open_session
from ..sessions.subagent_runs import SubagentRun, list_subagent_runs
from ..storage.ids import iso_now
from ..storage.jsonfmt import dumps_line
from .redact import Redactor
from .rows import Row, Scrubber, Walk
from .sanitize import PathSanitizer
from .select import Progress, Selection
from .target import Output, spool_beside

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..config.context import ProjectContext

_SPOOL_COPY = 1 << 20


class Renderer(Protocol):
    extension: str

    def header(self, title: str, fields: list[tuple[str, str]]) -> str: ...
    def row(self, item: Row) -> str: ...
    def footer(self) -> str: ...


class ExportResult:
    """What an export wrote: the file, its format and size, the messages shown, the secrets
    redacted per rule, and the corrupt lines left out."""

    __slots__ = ("bytes", "format", "messages", "path", "redactions", "skipped_lines")

    def __init__(self, path: Path | None, fmt: str, messages: int, redactions: dict[str, int], skipped_lines: int,
                 size: int) -> None:
        self.path, self.format, self.messages = path, fmt, messages
        self.redactions, self.skipped_lines, self.bytes = redactions, skipped_lines, size


def renderer_for(fmt: str, *, tree: bool = False, live_script: str | None = None) -> Renderer:
    if fmt == "md":
        from .md import MarkdownRenderer

        return MarkdownRenderer()
    from .html import HtmlRenderer

    return HtmlRenderer(tree=tree, live_script=live_script)


def title_of(session: Session) -> str:
    """The user-renamed title, else the session id (the real CLI's rule)."""
    return session.name or session.id


def header_fields(session: Session, messages: int, redactions: dict[str, int], selection: str) -> list[tuple[str, str]]:
    fields = [("Session", session.id), ("Exported", iso_now())]
    if session.model:
        fields.append(("Model", session.model))
    fields.append(("Messages", str(messages)))
    if selection != "context":
        fields.append(("Branch", "every branch" if selection == "all" else "active path, in full"))
    total = sum(redactions.values())
    if total:
        fields.append(("Redacted", f"{total} secret{'s' if total != 1 else ''}"))
    return fields


def scrubber(session: Session, *, redact: bool = True, engine: str = "native") -> Scrubber:
    """The redactor and path sanitizer for what leaves `session` (its project, the user's home)."""
    home = os.path.expanduser("~")
    return Scrubber(Redactor(engine=engine) if redact else None, PathSanitizer(session.cwd, home if home != "~" else None))


def _merged(counts: dict[str, int], scrub: Scrubber) -> dict[str, int]:
    """`counts` plus what `scrub`'s redactor replaced."""
    merged = dict(counts)
    for name, count in (scrub.redactor.counts if scrub.redactor is not None else {}).items():
        merged[name] = merged.get(name, 0) + count
    return merged


def subagent_runs(transcript: Path) -> dict[str, list[SubagentRun]]:
    """The sub-agent runs stored beside the session at `transcript`, with their conversations,
    by the id of the `agent` call that started each (format §21)."""
    return list_subagent_runs(SessionFiles.for_transcript(transcript), with_messages=True).by_tool_use()


RunsByCall = Mapping[str, Sequence[SubagentRun]]


def _stream(session: Session, renderer: Renderer, write: Callable[[str], None], selection: Selection,
            scrub: Scrubber, progress: Progress | None, runs: RunsByCall) -> int:
    walk = Walk(scrub, runs)
    pieces: list[str] = []
    size = 0
    for row in walk.rows(selection.items(progress)):
        text = renderer.row(row)
        pieces.append(text)
        size += len(text)
        if size > _SPOOL_COPY:
            write("".join(pieces))
            pieces, size = [], 0
    if pieces:
        write("".join(pieces))
    return walk.messages


def render_rows(session: Session, fmt: str = "html", *, selection: str = "context", engine: str = "native",
                cache: RowCache | None = None) -> tuple[list[str], int, dict[str, int]]:
    """Each row of the document as its own text (html or md), redacted; the messages shown and
    the secrets redacted per rule. The share page streams these. A `cache` kept between calls (a
    share's publisher renders the session after every commit) reuses its redactor and the text of
    rows it rendered before."""
    renderer = renderer_for(fmt, tree=selection == "all")
    scrub = scrubber(session, engine=engine) if cache is None else cache.scrubber(session)
    walk = Walk(scrub)
    before = dict(scrub.redactor.counts) if scrub.redactor is not None else {}
    rows = [renderer.row(row) if cache is None else cache.row(renderer, row)
            for row in walk.rows(Selection(session, selection).items())]
    counts = {name: count - before.get(name, 0) for name, count in scrub.redactor.counts.items()
              if count > before.get(name, 0)} if scrub.redactor is not None else {}
    return rows, walk.messages, counts


ROW_CACHE_LIMIT = 50_000


class RowCache:
    """What `render_rows` keeps between renders of one session: the redactor (compiling its
    rules costs ~20 ms) and each row's text by the row's content."""

    def __init__(self) -> None:
        self.redactor: Redactor | None = None
        self.texts: dict[tuple[Any, ...], str] = {}

    def scrubber(self, session: Session) -> Scrubber:
        if self.redactor is None:
            self.redactor = Redactor()
        home = os.path.expanduser("~")
        return Scrubber(self.redactor, PathSanitizer(session.cwd, home if home != "~" else None))

    def row(self, renderer: Renderer, row: Row) -> str:
        key = (type(row).__name__, *(_plain(getattr(row, name)) for name in getattr(row, "__slots__", ())))
        text = self.texts.get(key)
        if text is None:
            if len(self.texts) >= ROW_CACHE_LIMIT:
                self.texts.clear()
            text = self.texts[key] = renderer.row(row)
        return text


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return tuple((item.media_type, item.data) if hasattr(item, "media_type") else repr(item) for item in value)
    return value


def render_text(session: Session, fmt: str, *, selection: str = "context", live_script: str | None = None,
                engine: str = "native") -> tuple[str, ExportResult]:
    """The whole document as text (html or md), redacted, and what went into it."""
    if fmt == "jsonl":
        raise ValueError("render_text renders html or md")
    renderer = renderer_for(fmt, tree=selection == "all", live_script=live_script)
    rows, messages, counts = render_rows(session, fmt, selection=selection, engine=engine)
    named = scrubber(session, engine=engine)
    title = named(title_of(session))
    counts = _merged(counts, named)
    text = renderer.header(title, header_fields(session, messages, counts, selection)) + "".join(rows) \
        + renderer.footer()
    return text, ExportResult(None, fmt, messages, counts, len(session.skipped_lines), len(text.encode()))


def export_session(transcript: Path, target: Path, fmt: str, *, selection: str = "context", redact_jsonl: bool = False,
                   progress: Progress | None = None, engine: str = "native", protect: Path | None = None,
                   runs: RunsByCall | None = None) -> ExportResult:
    """Writes the session at `transcript` to `target` in `fmt` (see the module docstring).
    `protect` is another file the target must not be (the source of a converted session);
    `runs` the sub-agent runs to fold under their calls (default: those stored beside it).

    Raises:
        CommandcodeError: the session cannot be opened, or the target is the transcript itself.
        OSError: the target cannot be written (nothing was changed there).
    """
    from ..errors import CommandcodeError

    session = open_session(transcript, tail=False)  # every entry it writes, and the skipped lines
    for own in (transcript, protect):
        if own is not None and os.path.exists(target) and os.path.exists(own) and os.path.samefile(target, own):
            raise CommandcodeError(f"{target} is the session's own transcript", hint="export to another file")
    if fmt == "jsonl":
        return _export_jsonl(session, target, redact_jsonl, progress, engine)
    renderer = renderer_for(fmt, tree=selection == "all")
    scrub = scrubber(session, engine=engine)
    chosen = Selection(session, selection)
    with spool_beside(target) as spool:
        def spill(text: str) -> None:
            spool.write(text.encode("utf-8", "surrogateescape"))

        messages = _stream(session, renderer, spill, chosen, scrub, progress,
                           subagent_runs(transcript) if runs is None else runs)
        spool.flush()
        title = scrub(title_of(session))  # the name leaves too: a token in it is a secret as anywhere
        counts = dict(scrub.redactor.counts) if scrub.redactor is not None else {}
        with Output(target) as output:
            output.write(renderer.header(title, header_fields(session, messages, counts, selection)))
            spool.seek(0)
            while chunk := spool.read(_SPOOL_COPY * 4):
                output.write(chunk)
            output.write(renderer.footer())
    return ExportResult(target, fmt, messages, counts, len(session.skipped_lines), output.bytes_written)


def export_for(transcript: Path, session_id: str, project: ProjectContext, *, path: str | None = None,
               fmt: str | None = None,
               selection: str = "context", redact_jsonl: bool = False, progress: Progress | None = None,
               protect: Path | None = None, runs: RunsByCall | None = None) -> ExportResult:
    """An export as the user asks for one: `path` (a file or folder, else the default name in the
    caller's working directory, `project.cwd`) and `fmt` (else the extension's, else the
    `defaultExportFormat` setting of the caller's context, else html);
    `protect` and `runs` as in `export_session`.

    Raises:
        UsageError: a bad format, extension or selection.
        CommandcodeError: nothing to export yet, or a folder or target that cannot be used.
        SettingsError: a settings file is malformed (its one line).
        OSError: the target cannot be written (it was left as it was).
    """
    from ..errors import CommandcodeError, UsageError
    from .select import SELECTIONS
    from .target import resolve_target

    if selection not in SELECTIONS:
        raise UsageError(f"unknown selection {selection!r}", hint="use the active branch (default), --full or --branch all")
    if not transcript.is_file():
        raise CommandcodeError("the session has nothing to export yet", hint="export it after its first turn")
    default_format = project.settings().default_export_format
    target, chosen = resolve_target(session_id, Path(project.cwd), path=path, fmt=fmt, default_format=default_format)
    return export_session(transcript, target, chosen, selection=selection, redact_jsonl=redact_jsonl, progress=progress,
                          protect=protect, runs=runs)


def _export_jsonl(session: Session, target: Path, redact: bool, progress: Progress | None, engine: str) -> ExportResult:
    skipped = {line.offset for line in session.skipped_lines}
    redactor = Redactor(engine=engine) if redact else None
    total = os.path.getsize(session.path) or 1
    with open(session.path, "rb") as source, Output(target) as output:
        if not skipped and redactor is None:  # a byte copy: no line needs looking at
            while chunk := source.read(_SPOOL_COPY * 8):
                output.write(chunk)
                if progress is not None:
                    progress(output.bytes_written, total)
        else:
            offset = 0
            for line in source:
                start, offset = offset, offset + len(line)
                if start in skipped or not line.strip():
                    continue
                if redactor is not None:
                    line = _redact_line(line, redactor)
                output.write(line if line.endswith(b"\n") else line + b"\n")
                if progress is not None and offset % (64 << 20) < len(line):
                    progress(offset, total)
    if progress is not None:
        progress(total, total)
    counts = dict(redactor.counts) if redactor is not None else {}
    return ExportResult(target, "jsonl", session.message_count, counts, len(skipped), output.bytes_written)


def _redact_line(line: bytes, redactor: Redactor) -> bytes:
    """The line with secrets in its strings replaced (re-encoded), or the same bytes."""
    before = redactor.total
    try:
        value = json.loads(line)
    except ValueError:
        return line
    cleaned = _redact_value(value, redactor)
    return line if redactor.total == before else (dumps_line(cleaned) + "\n").encode("utf-8", "surrogatepass")


def _redact_value(value: Any, redactor: Redactor) -> Any:
    if isinstance(value, str):
        return redactor.redact(value)
    if isinstance(value, list):
        return [_redact_value(item, redactor) for item in value]
    if isinstance(value, dict):
        return {key: _redact_value(item, redactor) for key, item in value.items()}
    return value


__all__ = ["ExportResult", "export_for", "export_session", "render_rows", "render_text"]
