"""What loading the native module costs a process (issue 30's warm open): the libraries it brings
in and the relocations the loader applies, each page of them a page fault at every import."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

from commandcode import _native

PT_DYNAMIC = 2
DT_RELACOUNT = 0x6FFFFFF9
# Relocations the loader applies to the module's .data.rel.ro at every import: 2,934 with the
# default linker, 2,964 with the wheel's zig (issue 30); 7,557 while regex carried its Unicode
# tables (rust/Cargo.toml). A dependency or feature that brings tables of pointers back shows here.
MAX_RELATIVE_RELOCATIONS = 4_000


def _relative_relocations(path: Path) -> int:
    """The module's DT_RELACOUNT: its relative relocations (ELF64, little-endian)."""
    data = path.read_bytes()
    assert data[:6] == b"\x7fELF\x02\x01", "an ELF64 little-endian module"
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for index in range(phnum):
        kind, _flags, offset, _vaddr, _paddr, size = struct.unpack_from("<IIQQQQ", data, phoff + index * phentsize)
        if kind == PT_DYNAMIC:
            for at in range(offset, offset + size, 16):
                tag, value = struct.unpack_from("<qQ", data, at)
                if tag == DT_RELACOUNT:
                    return int(value)
    raise AssertionError("no DT_RELACOUNT in the module's dynamic section")


def test_the_module_keeps_its_relocations_few() -> None:
    count = _relative_relocations(Path(_native.__file__))
    assert 1_000 < count < MAX_RELATIVE_RELOCATIONS, count


def test_importing_the_module_loads_no_unwinder_library() -> None:
    # libgcc_s is linked into the module (rust/build/unwinder.rs; zig's wheel has its own
    # libunwind): importing it maps no libgcc_s.so.1 into a process that had none.
    probe = ("import sys\n"
             "def mapped(): return {line.split()[-1] for line in open('/proc/self/maps') if '.so' in line}\n"
             "before = mapped()\n"
             "import commandcode._native\n"
             "print('\\n'.join(sorted(mapped() - before)))\n")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert any(path.endswith("_native.abi3.so") for path in loaded), loaded  # the probe sees what loads
    assert not [path for path in loaded if "libgcc_s" in path], loaded
