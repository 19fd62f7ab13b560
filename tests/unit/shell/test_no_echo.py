"""`terminal.NoEcho`: the tty's echo is off while the shell runs and comes back as it was, on a
real pseudo-terminal; on something that is not a terminal it does nothing."""

from __future__ import annotations

import os
import termios

from commandcode.shell.terminal import NoEcho


def test_echo_is_off_inside_and_restored_after() -> None:
    master, slave = os.openpty()
    try:
        before = termios.tcgetattr(slave)
        assert before[3] & termios.ECHO
        with NoEcho(slave):
            inside = termios.tcgetattr(slave)
            assert not inside[3] & termios.ECHO
            assert inside[3] & termios.ICANON == before[3] & termios.ICANON  # only the echo changes
        assert termios.tcgetattr(slave) == before
    finally:
        os.close(master)
        os.close(slave)


def test_not_a_terminal_is_left_alone(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with open(tmp_path / "plain", "w") as plain, NoEcho(plain.fileno()) as guard:
        assert guard.saved is None
