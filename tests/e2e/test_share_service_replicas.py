"""The team share service as a team runs it, in one run: three replicas on one PostgreSQL
database, 300 event-stream viewers spread over them (three of them Chromium pages, the rest plain
HTTP clients), a publisher committing 200 turns through its outbox and background thread; one
replica killed -9 mid-stream (a supervisor starts it again on its port) and the database
restarted. Every viewer ends with every row exactly once, in order."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from helpers.browser import PageWatch, chromium
from helpers.cli import wait_for
from helpers.postgres import Cluster, Replica, token
from helpers.sse import Viewer
from helpers.transcripts import TranscriptBuilder

pytestmark = [pytest.mark.slow, pytest.mark.browser]

VIEWERS, PAGES, TURNS = 300, 3, 200
COUNT_MARKERS = """(count) => {
  const text = document.getElementById('transcript').textContent;
  const counts = [];
  for (let turn = 0; turn < count; turn++) { counts.push(text.split('reply-marker-' + turn + '.').length - 1); }
  return counts;
}"""


def test_three_replicas_300_viewers_a_kill_and_a_database_restart(postgres: Cluster, home: Path, workdir: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from commandcode.sessions.files import SessionFiles
    from commandcode.sharing import client
    from commandcode.sharing.outbox import Outbox

    monkeypatch.setenv("CC_SHARE_TOKEN", token(postgres.url, home, workdir, "alice"))
    builder = TranscriptBuilder(workdir)
    builder.user("the first prompt")
    builder.assistant("the first reply")
    transcript = builder.write(home)
    files = SessionFiles.for_transcript(transcript)
    running = [Replica(postgres.url, home, workdir) for _ in range(3)]
    ports = [replica.port for replica in running]
    (home / "settings.json").write_text(json.dumps({"share": {"server": running[0].url, "token": "$CC_SHARE_TOKEN"}}))
    notices: list[str] = []
    try:
        url = client.publish(files, follow=True, notice=notices.append)
        share_id = json.loads(files.share.read_text())["shareId"]
        events = url.removeprefix(running[0].url).replace("?", "/events?")
        viewers = [Viewer(ports, events, first=index) for index in range(VIEWERS - PAGES)]
        for viewer in viewers:
            viewer.start()
        wait_for(lambda: all(viewer.connected.is_set() for viewer in viewers), timeout=120, what="every viewer")
        with chromium() as browser:
            pages = [browser.new_page() for _ in range(PAGES)]
            watches = [PageWatch(page) for page in pages]
            for page, port in zip(pages, ports, strict=True):
                page.goto(f"http://127.0.0.1:{port}{url.removeprefix(running[0].url)}")
            written = len(builder.text())
            for turn in range(TURNS):
                builder.user(f"prompt {turn}")
                builder.assistant(f"reply-marker-{turn}.")
                text = builder.text()
                with open(transcript, "a", encoding="utf-8") as handle:  # a commit appends its lines
                    handle.write(text[written:])
                written = len(text)
                time.sleep(0.01)
                if turn == 70:
                    running[2].kill()  # kill -9, mid-stream; a supervisor starts it again on its port
                    time.sleep(0.3)
                    running[2] = Replica(postgres.url, home, workdir, "--port", str(ports[2]))
                if turn == 140:
                    postgres.stop()
                    time.sleep(0.3)
                    postgres.start()
            outbox = Outbox(share_id)
            wait_for(lambda: (box := Outbox(share_id)).last() > 0 and box.sent == box.last()
                     and box.last() >= 2 * TURNS + 2, timeout=120, what="the outbox drained")
            total = Outbox(share_id).last()
            outbox = Outbox(share_id)
            for viewer in viewers:
                viewer.target = total
            try:
                wait_for(lambda: all(viewer.finished() for viewer in viewers), timeout=60, what="every viewer's rows")
            except AssertionError:
                behind = [(viewer.seqs[-1:], viewer.index % 3, viewer.connects, viewer.statuses[-3:])
                          for viewer in viewers if not viewer.finished()]
                raise AssertionError(f"{len(behind)} viewers behind (of {total}): {behind[:10]}; "
                                     f"{[replica.errors[-3:] for replica in running]}") from None
            expected = list(range(1, total + 1))
            wrong = [index for index, viewer in enumerate(viewers) if viewer.seqs != expected]
            assert wrong == [], f"{len(wrong)} viewers differ, e.g. {viewers[wrong[0]].seqs[:20] if wrong else ''}"
            html = [entry["html"] for entry in outbox.entries]
            assert all(viewer.html == html for viewer in viewers)
            assert "reset" not in {kind for viewer in viewers for kind in viewer.kinds}
            assert sum(viewer.connects > 1 for viewer in viewers) >= (VIEWERS - PAGES) // 3 - 1, \
                "the killed replica's viewers resumed elsewhere"
            for page, watch in zip(pages, watches, strict=True):
                wait_for(lambda page=page: page.evaluate(COUNT_MARKERS, TURNS) == [1] * TURNS, timeout=60,
                         what="every row on the page")
                assert "the first reply" in page.evaluate("document.getElementById('transcript').textContent")
                assert [error for error in watch.errors if "ERR_CONNECTION_REFUSED" not in error
                        and "net::" not in error] == []
        assert any("does not answer" in notice or "unavailable" in notice for notice in notices), notices
        assert notices[-1] == "the share service is back: the page caught up"
    finally:
        from commandcode.sharing import publisher

        publisher.unfollow(files.session_id)
        for replica in running:
            replica.stop()
