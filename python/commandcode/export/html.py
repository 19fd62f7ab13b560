"""The html export: one self-contained page with the real CLI's rows (`samples/exports/*.html`).

Everything is inline (style sheet, one script, images as `data:` URLs) and nothing is loaded
from the network. Rows are `row-user`, `row-assistant` (markdown rendered by markdown-it-py's
`js-default` preset, which leaves raw HTML as text, with fenced code highlighted by Pygments),
`row-tool` and `row-thinking` (`<details>`, folded), and our `row-summary` and `branch` groups and the
`subagent` runs folded inside the `agent` call that started them.
The header holds the session id, export time, model and message count, and the "Expand all" /
"Collapse all" buttons.

Defence in depth against a hostile transcript: every text is escaped (markdown-it escapes what
it does not render), images are only base64 of four image types, and a Content-Security-Policy
allows no script but the page's own (by its hash), no network and no plugins — a `<script>` or
`onerror` that got through would still not run.
"""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache
from html import escape
from typing import Any

from .html_style import CSS
from .rows import Image, Row, SubagentBlock, SummaryRow, TextRow, ThinkingRow, ToolRow, UserRow
from .select import BranchOpen

SCRIPT = """(function () {
  function setAll(open) { document.querySelectorAll('details').forEach(function (d) { d.open = open; }); }
  document.getElementById('expand-all').addEventListener('click', function () { setAll(true); });
  document.getElementById('collapse-all').addEventListener('click', function () { setAll(false); });
})();"""


@lru_cache(maxsize=1)
def _markdown() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("js-default", {"highlight": _highlight})


@lru_cache(maxsize=1)
def pygments_css() -> str:
    from pygments.formatters import HtmlFormatter

    dark = HtmlFormatter(style="github-dark").get_style_defs(".highlight")
    light = HtmlFormatter(style="default").get_style_defs(".highlight")
    return f"{dark}\n@media (prefers-color-scheme: light) {{\n{light}\n}}\n"


@lru_cache(maxsize=1)
def _formatter() -> Any:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(nowrap=True)


@lru_cache(maxsize=64)
def _lexer(language: str) -> Any:
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(language)
    except ClassNotFound:
        return None


def _highlight(code: str, language: str, _attributes: str) -> str:
    """A fenced block's html, highlighted when its language is known (markdown-it wraps it)."""
    from pygments import highlight

    lexer = _lexer(language.split()[0].lower()) if language.strip() else None
    if lexer is None:
        return ""  # markdown-it escapes it as plain code
    return str(highlight(code, lexer, _formatter()))


def markdown(text: str) -> str:
    return str(_markdown().render(text))


def csp(scripts: list[str]) -> str:
    hashes = " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()}'"
                      for script in scripts)
    return (f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src {hashes}; "
            "connect-src 'self'; base-uri 'none'; form-action 'none'")


def _images(images: list[Image]) -> str:
    return "".join(f'<img class="inline-image" alt="image" src="data:{image.media_type};base64,{image.data}" />'
                   for image in images)


def row(item: Row) -> str:
    """One row's html."""
    if isinstance(item, UserRow):
        return ('<div class="row row-user"><span class="user-marker">&#10095;</span><div class="user-body">'
                f'<div class="user-text">{escape(item.text, quote=False)}</div>{_images(item.images)}</div></div>\n')
    if isinstance(item, TextRow):
        return f'<div class="row row-assistant"><div class="assistant-prose">{markdown(item.text).strip()}</div></div>\n'
    if isinstance(item, ToolRow):
        if item.output or item.images:
            output = f'<pre class="tool-output">{escape(item.output, quote=False)}</pre>' if item.output else ""
            body = f'<div class="tool-body">{output}{_images(item.images)}</div>'
        else:
            body = '<div class="tool-body"><span class="tool-body-empty">No result captured.</span></div>'
        body += "".join(_subagent(block) for block in item.subagents)
        return (f'<details class="row row-tool"><summary><span class="tool-badge">{escape(item.badge)}</span>'
                f'<span class="tool-input">{escape(item.argument)}</span></summary>{body}</details>\n')
    if isinstance(item, ThinkingRow):
        return ('<details class="row row-thinking"><summary><span class="thinking-badge">Thinking</span></summary>'
                f'<div class="thinking-body"><pre>{escape(item.text.strip(), quote=False)}</pre></div></details>\n')
    if isinstance(item, SummaryRow):
        return (f'<details class="row row-summary"><summary><span class="summary-badge">{escape(item.title)}</span>'
                f'</summary><div class="summary-body assistant-prose">{markdown(item.text).strip()}</div></details>\n')
    if isinstance(item, BranchOpen):
        plural = "entry" if item.entries == 1 else "entries"
        return (f'<details class="branch" data-entry="{escape(item.entry_id)}"><summary>Branch from '
                f'{escape(item.timestamp)} · {item.entries} {plural} · not on the active path</summary>'
                '<div class="branch-body">\n')
    return "</div></details>\n"


def _subagent(block: SubagentBlock) -> str:
    """A sub-agent run under its call: folded, its summary naming the agent, description and
    status, its conversation's rows inside."""
    plural = "" if block.messages == 1 else "s"
    rows = "".join(row(inner) for inner in block.rows) or '<span class="tool-body-empty">No messages recorded.</span>'
    return (f'<details class="subagent" data-status="{escape(block.status)}"><summary>'
            f'<span class="subagent-badge">Sub-agent {escape(block.agent)}</span>'
            f'<span class="subagent-description">{escape(block.description)}</span>'
            f'<span class="subagent-status">{escape(block.status)} · {block.messages} message{plural}</span>'
            f'</summary><div class="subagent-body">\n{rows}</div></details>\n')


class HtmlRenderer:
    """Writes the page: `header`, then one `row` per row, then `footer`. `live_script` is a second
    script (the share page's live updates), allowed by the policy like the page's own."""

    extension = "html"

    def __init__(self, *, live_script: str | None = None, tree: bool = False) -> None:
        self.live_script = live_script
        self.tree = tree

    def header(self, title: str, fields: list[tuple[str, str]]) -> str:
        scripts = [SCRIPT] + ([self.live_script] if self.live_script else [])
        shown = escape(title)
        meta = "".join(f'<div><dt>{escape(name)}</dt><dd data-field="{escape(name.lower())}">{escape(value)}</dd></div>'
                       for name, value in fields)
        note = ('<p class="tree-note">Every branch of the session: the active path reads top to bottom; other '
                'branches are folded where they leave it.</p>\n') if self.tree else ""
        live = '<p class="live-status" id="live-status">Live: new turns appear as they are committed.</p>\n' \
            if self.live_script else ""
        return (
            '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8" />\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1" />\n'
            f'<meta http-equiv="Content-Security-Policy" content="{escape(csp(scripts))}" />\n'
            '<meta name="color-scheme" content="dark light" />\n<link rel="icon" href="data:," />\n'
            f"<title>{shown} · Command Code session export</title>\n"
            f"<style>\n{CSS}{pygments_css()}</style>\n</head>\n<body>\n<div class=\"page\">\n"
            '<span class="corner corner-tl"></span>\n<span class="corner corner-tr"></span>\n'
            '<span class="corner corner-bl"></span>\n<span class="corner corner-br"></span>\n'
            f'<header class="header">\n<h1><span class="prefix">//</span>{shown}</h1>\n'
            f'<dl class="meta">{meta}</dl>\n'
            '<div class="toolbar">\n<button type="button" id="expand-all">Expand all</button>\n'
            '<button type="button" id="collapse-all">Collapse all</button>\n</div>\n'
            f"{note}{live}</header>\n<main class=\"transcript\" id=\"transcript\">\n"
        )

    def row(self, item: Row) -> str:
        return row(item)

    def footer(self) -> str:
        scripts = f"<script>{SCRIPT}</script>\n"
        if self.live_script:
            scripts += f"<script>{self.live_script}</script>\n"
        return f'</main>\n<footer class="footer">Exported from Command Code</footer>\n</div>\n{scripts}</body>\n</html>\n'
