"""Project-folder slugs, ported exactly from the Command Code CLI.

This module owns one thing: turning a working directory into the folder
name the real Command Code CLI uses for that project.  The CLI calls
``@sindresorhus/slugify`` (v2.2.1, default options, which pulls in
``@sindresorhus/transliterate`` v1.6.0) on the absolute cwd string and
falls back to ``"root"`` when the result is empty.  Everything below
mirrors that library step by step:

1. NFC-normalize.
2. Apply the transliteration table *sequentially, in table order* (one
   ``String#replace(/key/g)`` per entry upstream): the transliterate
   package's built-in table followed by slugify's overridable replacements
   (``&`` -> " and ", ``🦄`` -> " unicorn ", ``♥`` -> " love "), merged with
   JS ``Map`` semantics (a repeated key keeps its first position and takes
   the last value).
3. NFD, delete every ``\\p{Diacritic}`` code point, NFC.
4. Decamelize (four regexes, ASCII ``[A-Z]`` / ``[a-z]`` / ``\\d`` only).
5. Lowercase.
6. Drop the apostrophe in ``word't`` / ``word's`` when followed by
   whitespace or the end of the string.
7. Replace every run of characters outside ``[a-z0-9]`` with ``-``,
   collapse repeated ``-`` and trim one from each end.

Pure Python, no dependencies.  The tables (``slug_tables.json`` beside this
module, generated from the npm packages themselves) are loaded and compiled on
the first non-ASCII input only: ASCII paths, the common case, need two small tables kept here
(pinned to the full ones by a test).  The test suite pins outputs produced by
the real library.

Known limit: Unicode normalization comes from this interpreter's
``unicodedata`` (Unicode 14 on Python 3.11) while Node.js ships its own ICU
(Unicode 17 on Node 20).  Results can only differ for strings containing
combining marks added after the interpreter's Unicode version that end up
canonically reordered next to a table key; upstream's own output varies
across Node versions in exactly the same way.
"""

from __future__ import annotations

import functools

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

__all__ = ["project_slug"]


def _cp(cp: int) -> str:
    return f"\\U{cp:08x}"


@functools.cache
def upstream_tables() -> tuple[dict[str, str], dict[str, str], tuple[tuple[int, int], ...]]:
    """The transliterate and slugify replacement tables (in upstream order) and the
    ``\\p{Diacritic}`` code-point ranges, read from ``slug_tables.json``."""
    import json
    import os

    path = os.path.join(os.path.dirname(__file__), "slug_tables.json")
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    return (dict(data["transliterate"]), dict(data["slugify"]),
            tuple((first, last) for first, last in data["diacritic_ranges"]))


def _replacements() -> dict[str, str]:
    """The merged table, JS ``Map`` semantics (``{**a, **b}`` keeps a's order and lets b
    override values in place, appending new keys)."""
    transliterate, slugify, _ = upstream_tables()
    return {**transliterate, **slugify}


def _build_phases(
    entries: list[tuple[str, str]],
) -> tuple[dict[int, str] | tuple[str, str], ...]:
    """Compile the sequential replacement list into equivalent phases.

    Upstream runs one global replace per entry, in order, so the output of
    an entry can be rewritten by a *later* entry (``🙰`` -> ``&`` ->
    `` and ``; removing ``ъ`` can create a later multi-character key such
    as ``тс``).  A run of consecutive single-code-point keys can be applied
    in one ``str.translate`` pass exactly when no value in the run contains
    a key that comes later in the same run; a new run starts whenever that
    would be violated.  Multi-code-point keys stay individual
    ``str.replace`` calls (left-to-right, non-overlapping, like JS).
    """
    phases: list[dict[int, str] | tuple[str, str]] = []
    run: dict[int, str] = {}
    run_value_chars: set[str] = set()
    for key, value in entries:
        if len(key) == 1 and key not in run_value_chars:
            run[ord(key)] = value
            run_value_chars.update(value)
            continue
        if run:
            phases.append(run)
        run, run_value_chars = {}, set()
        if len(key) == 1:
            run[ord(key)] = value
            run_value_chars.update(value)
        else:
            phases.append((key, value))
    if run:
        phases.append(run)
    return tuple(phases)


@functools.cache
def _unicode_tables() -> tuple[tuple[dict[int, str] | tuple[str, str], ...], re.Pattern[str]]:
    """The replacement phases and the diacritic pattern, built on first non-ASCII input."""
    import re

    diacritics = re.compile(
        "[" + "".join(_cp(a) if a == b else f"{_cp(a)}-{_cp(b)}" for a, b in upstream_tables()[2]) + "]+"
    )
    return _build_phases(list(_replacements().items())), diacritics


# Pure-ASCII input can only ever match keys made of ASCII characters, and every value is ASCII,
# so for such input the tables reduce to these (`tests/test_slug.py` derives them again from the
# full tables): the one ASCII key, and the ASCII characters with the Diacritic property.
_ASCII_REPLACEMENTS: tuple[tuple[str, str], ...] = (("&", " and "),)
_ASCII_DIACRITICS: dict[int, None] = {ord("^"): None, ord("`"): None}


@functools.cache
def _patterns() -> tuple[tuple[tuple[re.Pattern[str], str], ...], re.Pattern[str], re.Pattern[str],
                         re.Pattern[str]]:
    """decamelize's four patterns, the contraction, non-slug and repeated-separator patterns.

    Compiled on first use: a lowercase ASCII cwd (the common case) never needs them."""
    import re

    # decamelize() from slugify/index.js.  JS ``\d`` is ASCII-only, hence [0-9].
    decamelize = (
        (re.compile(r"([A-Z]{2,})([0-9]+)"), r"\1 \2"),
        (re.compile(r"([a-z0-9]+)([A-Z]{2,})"), r"\1 \2"),
        (re.compile(r"([a-z0-9])([A-Z])"), r"\1 \2"),
        # `[a-rt-z]` skips `s` so plural acronyms like `APIs` stay together.
        (re.compile(r"([A-Z]+)([A-Z][a-rt-z0-9]+)"), r"\1 \2"),
    )
    # /([a-zA-Z\d]+)'([ts])(\s|$)/g with JS's exact ``\s`` set (Python's differs:
    # it lacks U+FEFF and adds U+001C..U+001F, U+0085) and JS's ``$`` (end of
    # input only, unlike Python's ``$`` which also matches before a final "\n").
    contraction = re.compile(
        r"([a-zA-Z0-9]+)'([ts])"
        r"([\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]|\Z)"
    )
    return decamelize, contraction, re.compile(r"[^a-z0-9]+"), re.compile(r"-{2,}")


_SLUG_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_NEEDS_PATTERNS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ'")


def _dash_runs(text: str) -> str:
    """``[^a-z0-9]+`` → ``-`` without `re` (each maximal run becomes one dash, so no ``--``)."""
    out: list[str] = []
    for character in text:
        if character in _SLUG_CHARACTERS:
            out.append(character)
        elif not out or out[-1] != "-":
            out.append("-")
    return "".join(out)


def _transliterate(text: str) -> str:
    if text.isascii():
        for key, value in _ASCII_REPLACEMENTS:
            if key in text:
                text = text.replace(key, value)
        # NFC/NFD are identities on ASCII; only ``^`` and ``` ` `` are diacritics.
        return text.translate(_ASCII_DIACRITICS)
    import unicodedata

    phases, diacritics = _unicode_tables()
    text = unicodedata.normalize("NFC", text)
    for phase in phases:
        if isinstance(phase, dict):
            text = text.translate(phase)
        else:
            key, value = phase
            if key in text:
                text = text.replace(key, value)
    text = diacritics.sub("", unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFC", text)


def _slugify(text: str) -> str:
    text = _transliterate(text)
    if text.isascii() and _NEEDS_PATTERNS.isdisjoint(text):
        # No capital and no apostrophe: decamelize, lower() and the contraction rule change
        # nothing, and only the separator runs remain (`tests/test_slug.py` checks it equals
        # the pattern pipeline below).
        return _dash_runs(text).strip("-")
    return _slugify_with_patterns(text)


def _slugify_with_patterns(text: str) -> str:
    decamelize, contraction, non_slug, repeated_separator = _patterns()
    for pattern, replacement in decamelize:
        text = pattern.sub(replacement, text)
    text = text.lower()
    text = contraction.sub(r"\1\2\3", text)
    text = non_slug.sub("-", text)
    # (Upstream also strips backslashes here; none can survive the line above.)
    text = repeated_separator.sub("-", text)
    return text.strip("-")


def project_slug(cwd: str) -> str:
    """Return the project folder name Command Code uses for ``cwd``.

    This is ``slugify(cwd)`` from ``@sindresorhus/slugify`` 2.x with default
    options (separator ``-``, lowercase, decamelize), or ``"root"`` when
    that yields an empty string (e.g. for ``/``, ``""`` or a path made only
    of characters that transliterate to nothing, such as CJK).  ``cwd`` is
    used verbatim: it is not resolved, normalized or made absolute here.

    >>> project_slug("/Users/fooBar/MyProject")
    'users-foo-bar-my-project'
    >>> project_slug("/")
    'root'
    """
    if not isinstance(cwd, str):
        raise TypeError(f"Expected a string, got {type(cwd).__name__!r}")
    return _slugify(cwd) or "root"
