"""What an export must not let out or let through (issue 26 §5): the session's name is redacted
like any text (html `<title>` and `<h1>`, the md heading), a secret in JSON-escaped form
(`{\\"password\\": \\"…\\"}`, a JSON text printed inside a string) is redacted in html, md and
`jsonl --redact`, and md content cannot close (or swallow the end of) the `<details>` it sits in.
The html is checked in Debian's chromium as the other export browser tests do."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from helpers.cli import run_ok
from helpers.session_files import write_session

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2
SECRETS = ("hunter2-is-the-pass", "k3y-abcdef123456", "s3cret-env-value", "tok-zyxw98765")
ESCAPED_JSON = ('curl said {\\"password\\": \\"hunter2-is-the-pass\\", \\"api_key\\": \\"k3y-abcdef123456\\"} '
                'and PASSWORD=\\"s3cret-env-value\\" and {\\\'access_token\\\': \\\'tok-zyxw98765\\\'}')
PLANTED = "</details>\n</summary>\n\n<!-- swallow\n\nPLANTED-AFTER\n\n<pre>\n\n```python\nunclosed fence"


def _session(workdir: Path) -> Path:
    transcript = write_session(workdir, "e1e2e3e4-0000-4000-8000-000000000001", [ESCAPED_JSON, "second prompt"],
                               meta={"title": f"deploy with {TOKEN}", "userRenamed": True})
    lines = transcript.read_text().splitlines()
    last = json.loads(lines[-1])
    thinking = {"type": "message", "id": "ffff0001", "parentId": last["id"], "timestamp": last["timestamp"],
                "message": {"role": "assistant", "content": [{"type": "thinking", "thinking": PLANTED},
                                                             {"type": "text", "text": "a reply " + PLANTED}]}}
    transcript.write_text("\n".join([*lines, json.dumps(thinking)]) + "\n")
    return transcript


def test_the_name_and_json_escaped_secrets_are_redacted_in_every_format(home: Path, workdir: Path) -> None:
    transcript = _session(workdir)
    run_ok(["export", str(transcript), "-o", "out.md"], workdir, home)
    run_ok(["export", str(transcript), "-o", "out.html"], workdir, home)
    run_ok(["export", str(transcript), "-o", "out.jsonl", "--redact"], workdir, home)
    for name in ("out.md", "out.html", "out.jsonl"):
        text = (workdir / name).read_text()
        assert TOKEN not in text, name
        for secret in SECRETS:
            assert secret not in text, (name, secret)
        assert "[REDACTED:github-token]" in text or name == "out.jsonl", name
    md = (workdir / "out.md").read_text()
    assert md.splitlines()[0] == "# deploy with [REDACTED:github-token]"
    assert "- **Redacted:** 9 secrets" in md  # four in the prompt and in its reply, and the name
    html = (workdir / "out.html").read_text()
    assert "<title>deploy with [REDACTED:github-token] · " in html
    assert all(json.loads(line) for line in (workdir / "out.jsonl").read_text().splitlines())


class _Depth(HTMLParser):
    """Where each text sits: how many `<details>` are open around it."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.stray_closes = 0
        self.texts: list[tuple[int, str]] = []

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.depth += tag == "details"

    def handle_endtag(self, tag: str) -> None:
        if tag == "details":
            if self.depth == 0:
                self.stray_closes += 1
            self.depth = max(0, self.depth - 1)

    def handle_data(self, data: str) -> None:
        if data.strip():
            self.texts.append((self.depth, data))


def test_md_content_cannot_close_or_swallow_its_details(home: Path, workdir: Path) -> None:
    from markdown_it import MarkdownIt

    transcript = _session(workdir)
    run_ok(["export", str(transcript), "-o", "out.md"], workdir, home)
    md = (workdir / "out.md").read_text()
    assert md.count("<details>") == md.count("</details>") >= 1
    rendered = MarkdownIt("commonmark").render(md)  # raw HTML on: what GitHub and most viewers do
    parser = _Depth()
    parser.feed(rendered)
    assert parser.stray_closes == 0 and parser.depth == 0
    planted = [depth for depth, text in parser.texts if "PLANTED-AFTER" in text]
    assert planted and planted[0] >= 1, "the thinking's text left its <details>"
    assert any("Exported from Command Code" in text for _, text in parser.texts), "the end was swallowed"


@pytest.mark.browser
def test_the_html_title_and_heading_in_chromium(home: Path, workdir: Path) -> None:
    from helpers.browser import PageWatch, chromium

    transcript = _session(workdir)
    run_ok(["export", str(transcript), "-o", "out.html"], workdir, home)
    with chromium() as browser:
        page = browser.new_page()
        watch = PageWatch(page)
        page.goto((workdir / "out.html").as_uri())
        page.wait_for_load_state("load")
        assert watch.errors == []
        assert TOKEN not in page.title() and "[REDACTED:github-token]" in page.title()
        heading = page.evaluate("document.querySelector('h1').textContent")
        assert TOKEN not in heading and "[REDACTED:github-token]" in heading
        body = page.evaluate("document.body.textContent")
        for secret in (TOKEN, *SECRETS):
            assert secret not in body
