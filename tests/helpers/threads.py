"""Running a call in a thread of a chosen stack size, for the native code's recursion tests."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any


def in_thread(call: Callable[[], Any], *, stack_size: int, recursion_limit: int) -> Any:
    """`call()` in a new thread with `stack_size` bytes of stack and Python's recursion limit set
    to `recursion_limit` (both put back after); returns its result, or the exception it raised."""
    box: list[Any] = []

    def run() -> None:
        try:
            box.append(call())
        except BaseException as error:  # noqa: BLE001 - handed back to the test
            box.append(error)

    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(recursion_limit)
    old_size = threading.stack_size(stack_size)
    try:
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
    finally:
        threading.stack_size(old_size)
        sys.setrecursionlimit(old_limit)
    return box[0]
