"""The md export, in the real CLI's layout (reference format doc §10, `samples/exports/*.md`).

A `# title` line and a header list (Session, Exported, Model, Messages), then one section per
row separated by blank lines: a user turn as a quote block (`> ❯ ` on its first line, `> ` on the
others, `_[image]_` per image), assistant text raw, a tool call as `<details>` with a `BADGE arg`
summary around its output in a fence longer than any backtick run inside (`_No result captured._`
without one), thinking as `<details>` with `<em>Thinking</em>` and each line as `> *line*`; then
the closing `---` rule and the italic "Exported from Command Code" line.

Additions of ours, in the same idiom: summaries, (with `--branch all`) other branches and the
sub-agent runs an `agent` call started (inside that call's block, after its output) are
`<details>` blocks too, and a `Redacted` line in the header says how many secrets were removed.
Text that is not fenced (prompts, replies, thinking, summaries, the title) cannot open or close
a `<details>` or `<summary>` of ours: such a tag outside code spans and fences is written as
`&lt;details>` (it reads the same), and so are the HTML blocks that run past a blank line
(`<!--`, `<script`, `<style`, `<pre`, `<textarea`); a fence left open is closed. So a session's
content never ends, or swallows the end of, the block it sits in.
"""

from __future__ import annotations

import re

from .rows import Row, SubagentBlock, SummaryRow, TextRow, ThinkingRow, ToolRow, UserRow
from .select import BranchOpen

_BACKTICKS = re.compile(r"`+")
# our blocks' own tags, and the HTML blocks that run past a blank line (to their end tag or `-->`)
_BLOCK_TAG = re.compile(r"<(/?(?:details|summary|script|style|pre|textarea)(?=[\s/>]|$)|!--)", re.IGNORECASE)
_CODE_SPAN = re.compile(r"(`+)[\s\S]*?(?<!`)\1(?!`)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
FOOTER = "---\n\n_Exported from Command Code_\n"


def inert(text: str) -> str:
    """`text` with every `<details>`/`<summary>` tag outside fences and code spans made text."""
    if "<" not in text:
        return text
    out: list[str] = []
    fence_mark: str | None = None
    for line in text.split("\n"):
        opened = _FENCE.match(line)
        if fence_mark is not None:
            if opened and opened.group(1)[0] == fence_mark[0] and len(opened.group(1)) >= len(fence_mark) \
                    and not line.strip().strip(fence_mark[0]):
                fence_mark = None
            out.append(line)
            continue
        if opened:
            fence_mark = opened.group(1)
            out.append(line)
            continue
        pieces, last = [], 0
        for span in _CODE_SPAN.finditer(line):
            pieces += [_BLOCK_TAG.sub(r"&lt;\1", line[last:span.start()]), span.group(0)]
            last = span.end()
        out.append("".join(pieces) + _BLOCK_TAG.sub(r"&lt;\1", line[last:]))
    if fence_mark is not None:  # a fence left open would run past our closing tags to the end
        out.append(fence_mark)
    return "\n".join(out)


def header(title: str, fields: list[tuple[str, str]]) -> str:
    lines = [f"# {inert(_one_line(title))}", ""]
    lines += [f"- **{name}:** {_one_line(value)}" for name, value in fields]
    return "\n".join(lines) + "\n\n"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def fence(text: str) -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0) if "```" in text else 0
    marks = "`" * max(3, longest + 1)
    return f"{marks}\n{text}\n{marks}"


def _quote(lines: list[str], first_prefix: str) -> str:
    out = []
    for position, line in enumerate(lines):
        prefix = first_prefix if position == 0 else "> "
        out.append((prefix + line).rstrip() if line else prefix.rstrip())
    return "\n".join(out)


def _html_text(text: str) -> str:
    """Text inside a `<summary>`: no tags, no line breaks."""
    return _one_line(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def row(item: Row) -> str:
    """One row as its md section (without the separating blank line)."""
    if isinstance(item, UserRow):
        lines = inert(item.text).split("\n") if item.text else []
        lines += ["_[image]_"] * len(item.images)
        return _quote(lines or [""], "> ❯ ")
    if isinstance(item, TextRow):
        return inert(item.text.strip("\n"))
    if isinstance(item, ToolRow):
        summary = _html_text(f"{item.badge} {item.argument}".strip())
        parts = [fence(item.output)] if item.output else []
        parts += ["_[image]_"] * len(item.images)
        body = "\n\n".join(parts) if parts else "_No result captured._"
        body += "".join("\n\n" + _subagent(block) for block in item.subagents)
        return f"<details>\n<summary>{summary}</summary>\n\n{body}\n\n</details>"
    if isinstance(item, ThinkingRow):
        lines = [f"> *{line.strip()}*" if line.strip() else ">" for line in inert(item.text.strip("\n")).split("\n")]
        return "<details>\n<summary><em>Thinking</em></summary>\n\n" + "\n".join(lines) + "\n\n</details>"
    if isinstance(item, SummaryRow):
        return f"<details>\n<summary><em>{_html_text(item.title)}</em></summary>\n\n{inert(item.text.strip())}\n\n</details>"
    if isinstance(item, BranchOpen):
        return (f"<details>\n<summary>Branch from {_html_text(item.timestamp)} "
                f"({item.entries} entr{'y' if item.entries == 1 else 'ies'}, not on the active path)</summary>")
    return "</details>"


def _subagent(block: SubagentBlock) -> str:
    """A sub-agent run under its call: a `<details>` naming the agent, its description and
    status, holding its conversation's sections."""
    plural = "" if block.messages == 1 else "s"
    summary = _html_text(f"Sub-agent {block.agent}: {block.description} · {block.status} · "
                         f"{block.messages} message{plural}")
    body = "\n\n".join(row(inner) for inner in block.rows) or "_No messages recorded._"
    return f"<details>\n<summary>{summary}</summary>\n\n{body}\n\n</details>"


class MarkdownRenderer:
    """Writes md sections to a text sink."""

    extension = "md"

    def header(self, title: str, fields: list[tuple[str, str]]) -> str:
        return header(title, fields)

    def row(self, item: Row) -> str:
        return row(item) + "\n\n"

    def footer(self) -> str:
        return FOOTER
