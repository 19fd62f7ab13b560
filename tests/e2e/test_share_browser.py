"""A shared page in a real browser follows the session live: each turn committed after the page
opened appears without a reload. The delay from the commit (the turn's return, in this process)
to the row being in the page's DOM (a MutationObserver's clock) is measured and written to
`target/share-latency.json`: from the turn's start (an upper bound: the commit is inside the
turn) and from its return (a lower bound: the turn patches meta and history after its commit,
so the page may be first). The issue's target is 200 ms (reported, not asserted: timing
assertions fail on a loaded machine)."""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import pytest

from commandcode.agent.runtime import AgentSession
from helpers.browser import PageWatch, chromium
from helpers.cli import run_ok, wait_for
from helpers.share import share_server
from helpers.transcripts import TranscriptBuilder

pytestmark = pytest.mark.browser
OBSERVER = """() => {
  window.__seen = {};
  new MutationObserver(() => {
    const text = document.getElementById('transcript').textContent;
    for (const marker of (text.match(/live-turn-\\d+/g) || [])) {
      if (!(marker in window.__seen)) window.__seen[marker] = Date.now();
    }
  }).observe(document.getElementById('transcript'), {childList: true, subtree: true, characterData: true});
}"""


def test_each_commit_appears_on_the_open_page(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(workdir)
    builder = TranscriptBuilder(workdir)
    builder.user("first prompt")
    builder.assistant("first reply")
    builder.write(home)
    latencies, after_return = [], []
    with share_server(home, workdir) as server, chromium() as browser:
        url = run_ok(["share", builder.session_id, "--yes"], workdir, home).stdout.strip()
        page = browser.new_page()
        watch = PageWatch(page)
        page.goto(url)
        wait_for(lambda: page.evaluate("document.getElementById('transcript').textContent.includes('first reply')"),
                 what="the page")
        page.wait_for_timeout(300)  # the stream's first reset has arrived
        page.evaluate(OBSERVER)
        with AgentSession.start(workdir, reference=builder.session_id) as agent:
            for turn in range(5):
                marker = f"live-turn-{turn}"
                started = time.time() * 1000
                agent.turns.run_turn(f"please answer {marker}")
                returned = time.time() * 1000
                # page.wait_for_function evaluates through `new Function`, which the page's CSP forbids
                wait_for(lambda marker=marker: page.evaluate(f"'{marker}' in window.__seen"), what=marker)
                seen = page.evaluate(f"window.__seen['{marker}']")
                latencies.append(seen - started)
                after_return.append(seen - returned)
        assert page.evaluate("document.querySelector('dd[data-field=\"messages\"]').textContent") == "12"
        page.close()
        assert watch.errors == [], watch.errors
        assert server["process"].poll() is None
    report = {"from_turn_start_ms": [round(value, 1) for value in latencies],
              "from_turn_return_ms": [round(value, 1) for value in after_return],
              "median_upper_bound_ms": round(statistics.median(latencies), 1), "max_upper_bound_ms": round(max(latencies), 1),
              "target_ms": 200}
    target = Path(__file__).resolve().parents[2] / "target"
    target.mkdir(exist_ok=True)
    (target / "share-latency.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"share page latency after commit: {report}")
    assert len(latencies) == 5
