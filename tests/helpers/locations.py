"""Where the test suite's own files are, whatever folder a test file lives in."""

from __future__ import annotations

import os
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
FIXTURES = TESTS / "fixtures"  # the hand-made bad-input and hostile corpus
SUPPORT = TESTS / "support"  # scripts the tests run as subprocesses (stress writers, killable CLI)
KILLABLE = SUPPORT / "killable_cli.py"
# The real CLI's sample files (see their README); `COMMANDCODE_SAMPLES_HOME` points elsewhere.
SAMPLES_HOME = Path(os.environ.get("COMMANDCODE_SAMPLES_HOME", TESTS / "real_cli_samples" / "home"))
