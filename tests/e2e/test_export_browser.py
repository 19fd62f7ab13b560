"""html exports in a real browser (Debian chromium through Playwright): the real CLI's sample, a
session with every block type and planted HTML, and a `--branch all` export load with no console
error and no uncaught exception, show every user prompt, expand and collapse, render in light and
dark, and run nothing a transcript planted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers.browser import PageWatch, assert_not_blank, chromium
from helpers.cli import copy_samples, needs_samples, run_ok
from helpers.transcripts import every_block_session

pytestmark = pytest.mark.browser
SHOTS = Path(__file__).resolve().parents[2] / "target" / "screenshots"


def _prompts(transcript: Path, selection: str) -> list[str]:
    """The user prompts an export of `selection` must show (every one, for the whole tree)."""
    prompts = []
    for line in transcript.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        message = entry.get("message") or {}
        meta = message.get("meta") or {}
        if message.get("role") != "user" or meta.get("isMeta") or meta.get("source") == "tool":
            continue
        prompts += [block["text"] for block in message["content"] if block.get("type") == "text"]
    if selection == "full":
        prompts = [prompt for prompt in prompts if "Abandoned" not in prompt]
    return prompts


def _check_page(browser: Any, page_path: Path, prompts: list[str], name: str) -> None:
    backgrounds = []
    for scheme in ("dark", "light"):
        context = browser.new_context(color_scheme=scheme, viewport={"width": 800, "height": 600})
        page = context.new_page()
        watch = PageWatch(page)
        page.goto(page_path.as_uri())
        page.wait_for_load_state("load")
        assert watch.errors == [], watch.errors
        assert page.evaluate("window.__planted") is None, "a planted script ran"
        shown = page.evaluate("document.querySelector('main').textContent")  # folded rows too
        for prompt in prompts:
            first_line = prompt.split("<")[0].strip()
            assert first_line in shown, first_line
        details = page.locator("details")
        count = details.count()
        assert count > 0
        page.click("#expand-all")
        assert page.evaluate("[...document.querySelectorAll('details')].every(d => d.open)")
        page.click("#collapse-all")
        assert page.evaluate("[...document.querySelectorAll('details')].every(d => !d.open)")
        page.click("#expand-all")
        shot = page.screenshot(full_page=False)
        SHOTS.mkdir(parents=True, exist_ok=True)
        (SHOTS / f"{name}-{scheme}.png").write_bytes(shot)
        backgrounds.append(assert_not_blank(shot))
        assert watch.errors == [], watch.errors
        context.close()
    dark, light = backgrounds
    assert sum(dark) < 100 < 600 < sum(light), (dark, light)


@needs_samples
def test_the_real_sample_in_chromium(tmp_path: Path) -> None:
    data = copy_samples(tmp_path / "samples")
    run_ok(["export", "1ccb4627", "-o", "sample.html"], tmp_path, data)
    transcript = next((data / "projects").glob("*/1ccb4627-*.jsonl"))
    with chromium() as browser:
        _check_page(browser, tmp_path / "sample.html", _prompts(transcript, "full"), "sample")


def test_every_block_type_and_planted_html_in_chromium(home: Path, workdir: Path) -> None:
    transcript = every_block_session(workdir).write(home)
    run_ok(["export", str(transcript), "--full", "-o", "full.html"], workdir, home)
    with chromium() as browser:
        _check_page(browser, workdir / "full.html", _prompts(transcript, "full"), "every-block")
        context = browser.new_context()
        page = context.new_page()
        page.goto((workdir / "full.html").as_uri())
        assert page.locator("img.inline-image").count() == 2
        assert page.evaluate("document.querySelectorAll('img.inline-image')[0].naturalWidth") == 2
        assert page.locator("script").count() == 1, "only the page's own script"
        context.close()


def test_branch_all_tree_in_chromium(home: Path, workdir: Path) -> None:
    transcript = every_block_session(workdir).write(home)
    run_ok(["export", str(transcript), "--branch", "all", "-o", "tree.html"], workdir, home)
    with chromium() as browser:
        _check_page(browser, workdir / "tree.html", _prompts(transcript, "all"), "tree")
        context = browser.new_context()
        page = context.new_page()
        page.goto((workdir / "tree.html").as_uri())
        branch = page.locator("details.branch")
        assert branch.count() == 1 and not branch.evaluate("d => d.open")
        assert not page.locator("text=Abandoned prompt on a branch").is_visible()
        branch.locator("summary").click()
        assert page.locator("text=Abandoned prompt on a branch").is_visible()
        context.close()
