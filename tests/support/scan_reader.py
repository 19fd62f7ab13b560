"""A reader that scans a transcript over and over while another process appends to it (test
support only).

    python tests/support/scan_reader.py TRANSCRIPT STOP_FILE OUT_FILE

Until STOP_FILE exists (and once more after), opens the session with the library, rebuilds its
context every few scans, and records what it saw. Writes OUT_FILE as JSON:
`{"scans": [[count, sha1 of the ids joined by "\\n", skipped reasons...], ...], "errors": [...]}`.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from commandcode.sessions.reader import open_session


def main() -> None:
    transcript, stop, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    scans: list[list[object]] = []
    errors: list[str] = []
    last = False
    number = 0
    while not last:
        last = stop.exists()
        number += 1
        try:
            session = open_session(transcript)
            ids = [row.id for row in session.tree_rows()]
            if number % 5 == 0:
                context = session.context()
                if context.entry_ids != session.path_ids():
                    errors.append(f"scan {number}: context entries are not the active path")
            reasons = [line.reason for line in session.skipped_lines]
            scans.append([len(ids), hashlib.sha1("\n".join(ids).encode()).hexdigest(), *reasons])
        except Exception as error:
            errors.append(f"scan {number}: {type(error).__name__}: {error}")
    out.write_text(json.dumps({"scans": scans, "errors": errors}))


if __name__ == "__main__":
    main()
