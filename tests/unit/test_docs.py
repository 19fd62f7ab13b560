"""The docs tell the truth about the tree: every `§` reference to `docs/format.md` names a section
it has, the package map in `docs/architecture.md` names every module of `python/commandcode/`
once (and nothing that is not there), and no README table row is listed twice.

Each failure prints exactly what is wrong (file, line, the missing section or module, and for a
module the map does not name, a map line to paste from its docstring), so the map can be fixed
after branches that add or move modules are merged.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "commandcode"
FORMAT = ROOT / "docs" / "format.md"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
README = ROOT / "README.md"
MAP_HEADING = "## The package map"

# Where `§` references are looked for: code, tests, benches and docs.
SCANNED = [
    *sorted(PACKAGE.rglob("*.py")), *sorted(PACKAGE.rglob("*.pyi")),
    *sorted((ROOT / "rust").rglob("*.rs")),
    *sorted((ROOT / "tests").rglob("*.py")), *sorted((ROOT / "tests").rglob("*.md")),
    *sorted((ROOT / "benches").glob("*.py")),
    *sorted((ROOT / "docs").glob("*.md")), README,
]
SECTION = re.compile(r"§\s?(\d+(?:\.\d+)*)")
# A `§` that cites something else: an issue (`issue 26 §4`) or the shared reference description of
# the real CLI (`ref §8`, `reference format doc §10`), which is not in this repository.
CITING = re.compile(r"(issue\s+\d+|\bref\b|\breference\b)|docs/format\.md|\bformat\b", re.IGNORECASE)
MAP_ENTRY = re.compile(r"^- `([\w./]+)`")


def format_sections() -> set[str]:
    sections = set()
    for line in FORMAT.read_text(encoding="utf-8").splitlines():
        found = re.match(r"^#{2,4}\s+(\d+(?:\.\d+)*)\.?\s", line)
        if found:
            sections.add(found.group(1))
    return sections


def cites_format(before: str) -> bool:
    """Whether a `§` after `before` (its line up to it) cites `docs/format.md`: unless the last
    citing word before it names an issue or the reference (`ref §8, §9`: both the reference's)."""
    words = list(CITING.finditer(before))
    return not words or words[-1].group(1) is None


def section_references() -> list[tuple[str, int, str]]:
    """(file, line, section) of every `§` reference to `docs/format.md`. A `§` cites the format
    doc unless the nearest citing word before it on its line is an issue or the reference."""
    found = []
    for path in SCANNED:
        if path.is_symlink() or path == Path(__file__).resolve() or "target" in path.relative_to(ROOT).parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            for match in SECTION.finditer(line):
                if cites_format(line[: match.start()]):
                    found.append((str(path.relative_to(ROOT)), number, match.group(1)))
    return found


def test_every_section_reference_exists() -> None:
    sections = format_sections()
    assert {"1", "4.4", "20"} <= sections, "the format doc's headings were not read"
    missing = [f"{path}:{line}: §{section} is not a section of docs/format.md"
               for path, line, section in section_references() if section not in sections]
    assert not missing, "\n" + "\n".join(missing)


def package_modules() -> dict[str, Path]:
    """Every module of the package as the map names it: `sessions/reader.py`, a package as
    `sessions/` (its `__init__.py`), the root modules by file name."""
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative.name == "__init__.py":
            name = "commandcode/" if relative.parent == Path() else f"{relative.parent.as_posix()}/"
        else:
            name = relative.as_posix()
        modules[name] = path
    return modules


def map_entries() -> list[tuple[int, str]]:
    """(line, module) of each entry of the map: a line `- \\`sessions/reader.py\\` — ...`."""
    lines = ARCHITECTURE.read_text(encoding="utf-8").splitlines()
    assert MAP_HEADING in lines, f"docs/architecture.md has no {MAP_HEADING!r} section"
    start = lines.index(MAP_HEADING) + 1
    entries = []
    for number, line in enumerate(lines[start:], start + 1):
        if line.startswith("## "):
            break
        found = MAP_ENTRY.match(line)
        if found:
            entries.append((number, found.group(1)))
    return entries


def _first_line(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "(no docstring: say what it owns)"
    return " ".join(doc.split("\n\n")[0].split())


def test_the_package_map_names_every_module_once() -> None:
    modules = package_modules()
    entries = map_entries()
    named = Counter(name for _, name in entries)
    problems = [f"docs/architecture.md:{line}: `{name}` is named {named[name]} times in the map"
                for line, name in entries if named[name] > 1]
    problems += [f"docs/architecture.md:{line}: `{name}` is in the map but not in python/commandcode/"
                 for line, name in entries if name not in modules]
    problems += [f"not in the map: - `{name}` — {_first_line(path)}"
                 for name, path in modules.items() if name not in named]
    assert not problems, "\n" + "\n".join(problems)


def row_key(cell: str) -> tuple[str, ...]:
    """A command's words up to its first option, that option included when it is required (a
    mode: `rewind REF --to`, `rewind REF --redo`) and left out when optional (`[--json]`)."""
    words: list[str] = []
    for match in re.finditer(r"\[|\]|[^\s\[\]]+", cell):
        word = match.group(0)
        if word == "[":
            depth = cell.count("[", 0, match.start()) - cell.count("]", 0, match.start())
            if depth == 0 and re.match(r"\s*-", cell[match.end():]):
                break  # an optional flag: the rows that differ only from here on are the same row
            continue
        if word == "]":
            continue
        depth = cell.count("[", 0, match.start()) - cell.count("]", 0, match.start())
        if depth == 0:
            words.append(word)
            if word.startswith("-"):
                break
    return tuple(words)


def readme_rows() -> list[tuple[int, tuple[str, ...]]]:
    """(line, key) of each README table row (`row_key` of its first cell)."""
    rows = []
    for number, line in enumerate(README.read_text(encoding="utf-8").splitlines(), 1):
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        rows.append((number, row_key(re.split(r"(?<!\\)\|", line)[1].strip().strip("`"))))
    return rows


def test_no_readme_row_is_listed_twice() -> None:
    rows = readme_rows()
    assert len(rows) > 10, "the README's tables were not read"
    counted = Counter(key for _, key in rows)
    twice = [f"README.md:{line}: the row for `{' '.join(key)}` is listed {counted[key]} times"
             for line, key in rows if counted[key] > 1]
    assert not twice, "\n" + "\n".join(twice)


def test_the_checks_see_what_they_must() -> None:
    """The readers above find what they look for, so the checks cannot pass by not seeing."""
    line = "format §2.5, §4.4; issue 26 §4; ref §8, §9; docs/format.md §99 and (§7.1)"
    kinds = [(match.group(1), cites_format(line[: match.start()])) for match in SECTION.finditer(line)]
    assert kinds == [("2.5", True), ("4.4", True), ("4", False), ("8", False), ("9", False), ("99", True),
                     ("7.1", True)]
    assert MAP_ENTRY.match("- `sessions/reader.py` — opens a transcript").group(1) == "sessions/reader.py"  # type: ignore[union-attr]
    assert "sessions/reader.py" in package_modules() and "sessions/" in package_modules()
    assert row_key("commandcode -p PROMPT [-n NAME] [-r REF \\| -c]") == ("commandcode", "-p")
    assert row_key("commandcode checkpoints list REF [--all] [--json]") == ("commandcode", "checkpoints", "list", "REF")
    assert row_key("commandcode rewind REF --to N --mode M") == ("commandcode", "rewind", "REF", "--to")
    assert row_key("commandcode rewind REF") == ("commandcode", "rewind", "REF")
    assert row_key("commandcode [-n NAME] [-r [REF] \\| -c]") == ("commandcode",)
