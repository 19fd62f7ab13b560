"""Debian's chromium driven by Playwright, for the `browser` tests (dependencies.md's traps:
`executable_path="/usr/bin/chromium"`, never `playwright install`; chromium writes into `HOME`
even with a temporary profile, so `HOME` is a temporary folder), and a PNG reader so a test can
tell a blank screenshot from a page."""

from __future__ import annotations

import os
import shutil
import struct
import tempfile
import zlib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless chromium `Browser` (skips the test where chromium is not installed)."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no chromium at {CHROMIUM} (.ci/run installs it)")
    from playwright.sync_api import sync_playwright

    home = tempfile.mkdtemp(prefix="chromium-home-")
    previous = os.environ.get("HOME")
    os.environ["HOME"] = home
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            try:
                yield browser
            finally:
                browser.close()
    finally:
        if previous is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = previous
        shutil.rmtree(home, ignore_errors=True)


class PageWatch:
    """Console errors and uncaught exceptions of a page, collected as they happen."""

    def __init__(self, page: Any) -> None:
        self.errors: list[str] = []
        page.on("console", lambda message: self.errors.append(f"console: {message.text}")
                if message.type == "error" else None)
        page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))


def png_pixels(data: bytes) -> tuple[int, int, list[tuple[int, ...]]]:
    """`(width, height, pixels)` of an 8-bit RGB or RGBA PNG (what chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, idat, width, height, channels = 8, b"", 0, 0, 0
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6), (depth, color)
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        position += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytearray] = []
    previous = bytearray(stride)
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for index in range(stride):
            left = line[index - channels] if index >= channels else 0
            up = previous[index]
            corner = previous[index - channels] if index >= channels else 0
            if kind == 1:
                line[index] = (line[index] + left) & 0xFF
            elif kind == 2:
                line[index] = (line[index] + up) & 0xFF
            elif kind == 3:
                line[index] = (line[index] + (left + up) // 2) & 0xFF
            elif kind == 4:
                estimate = left + up - corner
                best = min((abs(estimate - left), 0, left), (abs(estimate - up), 1, up), (abs(estimate - corner), 2, corner))
                line[index] = (line[index] + best[2]) & 0xFF
        rows.append(line)
        previous = line
    pixels = [tuple(line[index:index + 3]) for line in rows for index in range(0, stride, channels)]
    return width, height, pixels


def assert_not_blank(data: bytes) -> tuple[int, ...]:
    """Asserts a screenshot shows something (no one colour covers 99% of it); returns its background."""
    _width, _height, pixels = png_pixels(data)
    counts = Counter(pixels)
    background, most = counts.most_common(1)[0]
    assert most / len(pixels) < 0.99 and len(counts) > 20, f"blank screenshot ({len(counts)} colours)"
    return background
