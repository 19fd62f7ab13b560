"""The `bash` tool's guard: nothing a command started outlives the agent, however it ends.

Every `bash` command runs in a process group of its own (`bash_tool.py`). Killing those groups
on the way out is not enough: a `kill -9` of the agent runs no code, and a command's backgrounded
children (`(sleep 2; touch late) &`) would go on writing files no checkpoint tracks. So the first
command starts one small guard process per agent process (`python -S -I`, its own session, every
terminal signal ignored). The agent holds the only write end of the guard's stdin and sends it
the id of each command's group. The guard wakes every `_PRUNE_SECONDS` to forget the groups
that have no process left; when its stdin reaches end of file (the agent is gone: exit, crash,
SIGKILL) it SIGKILLs every group it still knows, then exits.

While the agent runs, nothing changes: a finished command's background children keep running
(until the agent ends), an interrupt or a timeout kills the group as before. A process that
leaves its group on purpose (`setsid`) is out of reach. The guard itself failing to start
never fails a command: the group is only not guarded (nothing worse than before).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

_PRUNE_SECONDS = 1.0

_GUARD = f"""
import os, select, signal
for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGPIPE"):
    signal.signal(getattr(signal, name), signal.SIG_IGN)
groups, pending = set(), b""
while True:
    ready = select.select([0], [], [], {_PRUNE_SECONDS} if groups else None)[0]
    if ready:
        chunk = os.read(0, 4096)
        if not chunk:
            break
        *lines, pending = (pending + chunk).split(b"\\n")
        groups.update(int(line) for line in lines if line.strip().isdigit())
    for group in list(groups):
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            groups.discard(group)
        except OSError:
            pass
for group in groups:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
"""

_lock = threading.Lock()
_guard: subprocess.Popen[bytes] | None = None
_guarded: set[int] = set()


def _start() -> subprocess.Popen[bytes] | None:
    try:
        return subprocess.Popen([sys.executable, "-S", "-I", "-c", _GUARD], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                                cwd="/")
    except OSError:
        return None


def _send(guard: subprocess.Popen[bytes], groups: set[int]) -> bool:
    assert guard.stdin is not None
    try:
        guard.stdin.write(b"".join(b"%d\n" % group for group in sorted(groups)))
        guard.stdin.flush()
    except OSError:
        return False
    return True


def ensure_guard() -> None:
    """Starts the guard unless it runs (called before a command starts, so that registering its
    group afterwards is one write, not a process start: the window in which a `kill -9` of the
    agent would miss the group is the time between the fork and that write)."""
    global _guard
    with _lock:
        if _guard is not None and _guard.poll() is None:
            return
        # First command, or the guard died (someone killed it): a new one gets every group still alive.
        alive = set()
        for known in _guarded:
            try:
                os.killpg(known, 0)
            except ProcessLookupError:
                continue
            except OSError:
                pass
            alive.add(known)
        _guarded.intersection_update(alive)
        _guard = _start()
        if _guard is not None and _guarded and not _send(_guard, _guarded):
            _guard = None


def guard_group(group: int) -> None:
    """Has the guard SIGKILL process group `group` if the agent ends while any of it still runs."""
    with _lock:
        _guarded.add(group)
        if _guard is not None and _guard.poll() is None and _send(_guard, {group}):
            return
    ensure_guard()  # it died meanwhile: a new one gets the group too


def guard_pid() -> int | None:
    """The guard's process id, while it runs (for tests and `doctor`-style checks)."""
    with _lock:
        return _guard.pid if _guard is not None and _guard.poll() is None else None
