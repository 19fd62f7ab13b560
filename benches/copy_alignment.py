#!/usr/bin/env python3
"""How the kernel's copy out of the page cache depends on where the destination sits.

    python benches/copy_alignment.py FILE [--block 256KiB-in-bytes] [--rounds 3]

Reads FILE (warm in the page cache: it is read once first) in `--block`-byte preads into a
page-aligned buffer, for pairs of (file offset modulo 4096, destination offset in the buffer),
and prints the CPU time of each pass (best of `--rounds`). On the 2-core AMD EPYC of issue 30 a
1 GB file took 0.10 s when destination and file offset agree modulo 64 (or the destination sits
one byte before) and 0.41-0.43 s when the destination is 1 or 16 bytes off: the reason
`scan::ReadBuffer` and `SessionIndex.read_spans` place what they read at the file offset's place
within a cache line (`scan::COPY_ALIGN`).

Owns: this measurement only.
"""

from __future__ import annotations

import argparse
import mmap
import os
import time

PAIRS = [(0, 0), (4095, 0), (4095, 4095), (1, 0), (1, 1), (0, 1), (0, 16), (0, 63), (4095, 63)]


def one_pass(fd: int, size: int, block: int, view: memoryview, start: int, shift: int) -> float:
    began = time.process_time()
    offset = start
    while offset + block < size:
        os.preadv(fd, [view[shift:shift + block]], offset)
        offset += block
    return time.process_time() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file")
    parser.add_argument("--block", type=int, default=256 << 10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    fd = os.open(args.file, os.O_RDONLY)
    size = os.fstat(fd).st_size
    buffer = mmap.mmap(-1, args.block + 8192)  # page-aligned
    view = memoryview(buffer)
    one_pass(fd, size, args.block, view, 0, 0)  # into the page cache
    print("file offset % 4096  destination offset  CPU s")
    for start, shift in PAIRS:
        best = min(one_pass(fd, size, args.block, view, start, shift) for _ in range(args.rounds))
        print(f"{start:>18}  {shift:>18}  {best:.3f}")


if __name__ == "__main__":
    main()
