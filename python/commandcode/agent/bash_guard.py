"""The `bash` tool's guard: nothing a command started outlives the agent, however it ends.

Every `bash` command runs in a process group of its own (`bash_tool.py`). Killing those groups
on the way out is not enough: a `kill -9` of the agent runs no code, and a command's backgrounded
children (`(sleep 2; touch late) &`) would go on writing files no checkpoint tracks. So the first
command starts one small guard process per agent process (`python -S -I`, its own session, every
terminal signal ignored). The agent holds the only write end of the guard's stdin and sends it
the id of each command's group. The guard wakes every `_PRUNE_SECONDS` to forget the groups
that have no process left; when its stdin reaches end of file (the agent is gone: exit, crash,
SIGKILL) it SIGKILLs every group it still knows, then exits.

A command does not start its user part before its group is registered (`start_guarded`): the
shell is started with a gate on its stdin (a pipe only the agent can write) and first reads one
line from it; the agent writes that line once the group's id is in the guard's pipe (where the
guard will read it even if the agent dies the next instant). An agent killed between the fork
and that write closes the gate instead: the shell reads end of file and exits without running
anything. Only then does it `exec` `/bin/sh -c command` with stdin on `/dev/null` (same pid,
same group, the same `$0`). The gate costs one more `exec` of the shell, not a `fork` of the
agent (a pre-exec hook would make `subprocess` fork instead of `vfork`).

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
import time

_PRUNE_SECONDS = 1.0
# Reads the gate's line (end of file: the agent died before registering the group: run nothing),
# then becomes the user's command, as `/bin/sh -c command` would have run it.
_GATE = 'read -r _ || exit 125; exec /bin/sh -c "$1" </dev/null'

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
    group afterwards is one write, not a process start, while the command waits at its gate)."""
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


def start_guarded(command: str, cwd: str | os.PathLike[str], output: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Starts `/bin/sh -c command` in a process group of its own, its stdout and stderr on
    `output`, and lets its user part run only once the guard knows the group (see the module
    docstring). A failure to register (no guard) still opens the gate: the group is only not
    guarded."""
    ensure_guard()
    gate_read, gate_write = os.pipe()
    try:
        process = subprocess.Popen(["/bin/sh", "-c", _GATE, "/bin/sh", command], cwd=cwd, stdin=gate_read,
                                   stdout=output, stderr=output, start_new_session=True, env=env)
    except BaseException:
        os.close(gate_write)
        raise
    finally:
        os.close(gate_read)
    try:
        _test_delay()
        guard_group(process.pid)  # the group's id is the shell's pid (`start_new_session`)
        try:
            os.write(gate_write, b"\n")
        except BrokenPipeError:
            pass  # the shell is gone already (killed from outside): its exit status says so
    except BaseException:
        os.close(gate_write)  # the gate closed unopened: the shell exits without running the command
        process.wait()
        raise
    os.close(gate_write)
    return process


def _test_delay() -> None:
    """The test hook `COMMANDCODE_TEST_GUARD_DELAY_MS` (`config/testing_hooks.py`): widens the window
    between the fork and the registration, which the guard tests aim at. Unset (always, outside
    tests): none."""
    from ..config.testing_hooks import guard_delay_ms

    delay = guard_delay_ms()
    if delay:
        time.sleep(delay / 1000)
