"""What `commandcode sessions status REF [--json]` (and so `/status`) adds beyond the basics: the
scratchpad's path, the permission mode turns actually run in (the settings' defaultMode when none
was chosen), and the share's link and expiry, through real processes and a real share server;
a share file that does not parse is one line of the report, never a traceback."""

from __future__ import annotations

import json
import time
from pathlib import Path

from helpers.cli import SCRATCHPAD_BASE, run_json, run_ok, wait_for
from helpers.share import share_server
from helpers.transcripts import one_turn_session


def _session(home: Path, workdir: Path) -> tuple[str, Path]:
    builder, transcript = one_turn_session(home, workdir, "status prompt")
    return builder.session_id, transcript


def test_status_shows_the_scratchpad_and_the_mode_turns_run_in(home: Path, workdir: Path) -> None:
    session_id, _transcript = _session(home, workdir)
    status = run_json(["sessions", "status", session_id, "--json"], workdir, home)
    pad = Path(status["scratchpad"]["path"])
    assert status["scratchpad"]["exists"] is False
    assert pad.parts[-2:] == (session_id, "scratchpad") and str(pad).startswith(SCRATCHPAD_BASE)
    assert not pad.exists()  # reported, not created
    assert status["permission_mode"] == "default"
    (workdir / ".commandcode").mkdir()
    (workdir / ".commandcode" / "settings.json").write_text(json.dumps({"permissions": {"defaultMode": "acceptEdits"}}))
    assert run_json(["sessions", "status", session_id, "--json"], workdir, home)["permission_mode"] == "acceptEdits"
    text = run_ok(["sessions", "status", session_id], workdir, home).stdout
    assert f"scratchpad: {pad}" in text and "permission mode: acceptEdits" in text and "None" not in text


def test_status_shows_the_share_link_its_expiry_and_its_end(home: Path, workdir: Path) -> None:
    session_id, transcript = _session(home, workdir)
    share_file = transcript.with_name(f"{session_id}.share.json")
    with share_server(home, workdir):
        # The two reports must come before the expiry; on a loaded machine three processes can take
        # longer than a short one, so the share is made again, for longer, until they did.
        for seconds in (2, 4, 8, 16, 32, 64):
            url = run_ok(["share", session_id, "--yes", "--no-copy", "--expires", f"{seconds}s"], workdir,
                         home).stdout.strip()
            expires_ms = json.loads(share_file.read_text())["expiresAt"]
            share = run_json(["sessions", "status", session_id, "--json"], workdir, home)["share"]
            text = run_ok(["sessions", "status", session_id], workdir, home).stdout
            if time.time() * 1000 < expires_ms:
                break
        assert share["shared"] is True and share["url"] == url and share["expired"] is False
        assert share["expires_at"].endswith("Z") and share["path"].endswith(".share.json")
        assert f"share: shared at {url}, expires {share['expires_at']}" in text
        assert share["expires_at"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(expires_ms / 1000))
        wait_for(lambda: time.time() * 1000 > expires_ms, timeout=120, what="the share to expire")
        ended = run_json(["sessions", "status", session_id, "--json"], workdir, home)["share"]
        assert ended["shared"] is False and ended["expired"] is True
        assert "share: expired at " in run_ok(["sessions", "status", session_id], workdir, home).stdout
    share_file.write_text("{not json")
    completed = run_ok(["sessions", "status", session_id], workdir, home)
    assert "share: unreadable share file: " in completed.stdout and "Traceback" not in completed.stderr
    assert share_file.read_text() == "{not json"  # reported, left alone
