"""The `shell` fixture of the slash-command unit tests: the shared fake shell around a new,
entered session of `workdir` (closed after the test)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from commandcode.agent.runtime import AgentSession
from helpers.fake_shell import FakeShell


@pytest.fixture
def shell(home: Path, workdir: Path) -> Iterator[FakeShell]:
    fake = FakeShell(AgentSession.start(workdir).__enter__())
    yield fake
    fake.agent.close()
