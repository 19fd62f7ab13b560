"""A racing writer for the concurrency tests (test support only).

    python tests/support/stress_writer.py TRANSCRIPT CWD WORKER ENTRIES SEED

Appends ENTRIES message entries to TRANSCRIPT, a few per commit: each round opens a
`SessionWriter` (retrying after a short random sleep when another process holds the lock),
appends 1-8 entries whose text is `w<WORKER>-<seq>`, commits and closes. Prints one JSON line at
the end: `{"worker", "committed", "refused", "holders_named"}` (`holders_named` counts refusals
whose error named the holder's pid).
"""

from __future__ import annotations

import json
import random
import sys
import time
import uuid
from pathlib import Path

from commandcode.errors import SessionLockedError
from commandcode.sessions.files import SessionFiles
from commandcode.sessions.writer import SessionWriter


def main() -> None:
    transcript, cwd, worker, wanted, seed = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    rng = random.Random(seed * 1000 + worker)
    files = SessionFiles.for_transcript(transcript)
    committed = refused = named = 0
    while committed < wanted:
        batch = min(wanted - committed, rng.randint(1, 8))
        try:
            with SessionWriter(files, cwd) as writer:
                for offset in range(batch):
                    role = "assistant" if (committed + offset) % 2 else "user"
                    writer.append_message({"role": role, "content": [{"type": "text", "text": f"w{worker}-{committed + offset}"}],
                                           "meta": {"messageId": str(uuid.uuid4())}})
                writer.commit(force=True)
            committed += batch
        except SessionLockedError as error:
            refused += 1
            if error.holder_pid and f"process {error.holder_pid}" in str(error):
                named += 1
            time.sleep(rng.uniform(0.0005, 0.004))
    print(json.dumps({"worker": worker, "committed": committed, "refused": refused, "holders_named": named}), flush=True)


if __name__ == "__main__":
    main()
