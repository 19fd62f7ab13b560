"""Parity tests for :mod:`commandcode.config.slug`.

Every expected slug below was produced by the real library
(``@sindresorhus/slugify`` 2.2.1 / ``@sindresorhus/transliterate`` 1.6.0,
Node.js 20, default options, ``slugify(cwd) || "root"``), not by the port.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commandcode.config import slug as slug_module

project_slug = slug_module.project_slug

# (cwd, slug from the real @sindresorhus/slugify)
CASES: list[tuple[str, str]] = [
    ("/home/user/my-project", "home-user-my-project"),
    ("/Users/fooBar/MyProject", "users-foo-bar-my-project"),
    ("/home/u/XMLHttpRequest", "home-u-xml-http-request"),
    ("/home/u/a.b/c--d", "home-u-a-b-c-d"),
    ("/home/u/foo&bar", "home-u-foo-and-bar"),
    ("C:\\Users\\Foo\\proj", "c-users-foo-proj"),
    ("/", "root"),
    ("/srv/日本語", "srv"),
    ("", "root"),
    ("---", "root"),
    ("   ", "root"),
    ("//home///u//x", "home-u-x"),
    ("/home/user/project/", "home-user-project"),
    ("/a/v2Api", "a-v2-api"),
    ("/a/API2Go", "a-api-2-go"),
    ("/a/getHTTP2Response", "a-get-http-2-response"),
    ("/a/APIs", "a-apis"),
    ("/a/myAPIs", "a-my-apis"),
    ("/a/iOS13App", "a-i-os-13-app"),
    ("/a/ABC123def", "a-abc-123def"),
    ("/a/abc123DEF", "a-abc123-def"),
    ("/a/2024Report", "a-2024-report"),
    ("/a/ReportQ4", "a-report-q4"),
    ("/a/v1.2.3", "a-v1-2-3"),
    ("/a/PDFLoader", "a-pdf-loader"),
    ("/a/JSONParserV2", "a-json-parser-v2"),
    ("/u/R&D", "u-r-and-d"),
    ("/u/I♥NY", "u-i-love-ny"),
    ("/u/🦄-app", "u-unicorn-app"),
    ("/u/rocket🚀ship", "u-rocket-ship"),
    ("/u/#\ufe0f\u20e3tag", "u-tag"),
    ("/u/🅰\ufe0fb", "u-ab"),
    ("/u/🙰rbeit", "u-and-rbeit"),
    ("/home/Jürgen/Übung", "home-juergen-uebung"),
    ("/home/u/ÄÖÜ", "home-u-ae-oe-ue"),
    ("/home/u/äöüß", "home-u-aeoeuess"),
    ("/home/u/Straße", "home-u-strasse"),
    ("/home/u/GROẞE", "home-u-grosse"),
    ("/home/u/MÜNCHEN", "home-u-m-ue-nchen"),
    ("/home/u/café", "home-u-cafe"),
    ("/home/u/cafe\u0301", "home-u-cafe"),
    ("/home/u/niño", "home-u-nino"),
    ("/home/u/façade", "home-u-facade"),
    ("/home/u/Ångström", "home-u-angstroem"),
    ("/home/u/naïve résumé", "home-u-naive-resume"),
    ("/home/u/Œuvre", "home-u-uvre"),
    ("/home/u/ﬁle", "home-u-le"),
    ("/home/u/Łódź", "home-u-lodz"),
    ("/home/u/Čeština", "home-u-cestina"),
    ("/home/u/İstanbul-ışık", "home-u-istanbul-isik"),
    ("/home/u/Tiếng Việt", "home-u-tieng-viet"),
    ("/home/u/Đà Nẵng", "home-u-da-nang"),
    ("/home/u/проект", "home-u-proekt"),
    ("/home/u/Щука", "home-u-schuka"),
    ("/home/u/объект", "home-u-obyekt"),
    ("/home/u/тъс", "home-u-ts"),
    ("/home/u/Київ", "home-u-kiyiv"),
    ("/home/u/Ελληνικά", "home-u-ellinika"),
    ("/home/u/αβγ ΔΕΖ", "home-u-avg-dez"),
    ("/home/u/Հայերեն", "home-u-hayyeryen"),
    ("/home/u/ქართული", "home-u-qartuli"),
    ("/home/u/مشروع", "home-u-mshrwe"),
    ("/home/u/项目-2024", "home-u-2024"),
    ("/home/u/프로젝트", "home-u"),
    ("/home/u/ＡＢＣ", "home-u"),
    ("/u/don't", "u-dont"),
    ("/u/it's", "u-its"),
    ("/u/don't/src", "u-don-t-src"),
    ("/u/Bob's Files", "u-bobs-files"),
    ("/u/rock'n'roll", "u-rock-n-roll"),
    ("/u/it’s", "u-it-s"),
    ("/u/it's\x0a", "u-its"),
    ("/u/it's\x1c", "u-it-s"),
    ("/u/it's\ufeff", "u-its"),
    ("/home/u/my_project.v1", "home-u-my-project-v1"),
    ("/home/u/My Project", "home-u-my-project"),
    ("/home/u/__init__", "home-u-init"),
    ("/home/u/.config", "home-u-config"),
    ("/home/u/a---b___c", "home-u-a-b-c"),
    ("/home/u/a^b", "home-u-ab"),
    ("/home/u/a`b", "home-u-ab"),
    ("/home/u/x·y", "home-u-xy"),
    ("/home/u/$money€100", "home-u-money-e100"),
    ("/home/u/~tilde!@#%", "home-u-tilde"),
    ("D:\\Work\\MyApp\\", "d-work-my-app"),
    ("\\\\server\\share\\Dir", "server-share-dir"),
    ("c:/Users/x", "c-users-x"),
    ("/home/u/Kelvin", "home-u-kelvin"),
    ("/home/u/Ångstrom", "home-u-angstrom"),
]


@pytest.mark.parametrize(("cwd", "expected"), CASES, ids=[ascii(c) for c, _ in CASES])
def test_project_slug_matches_real_library(cwd: str, expected: str) -> None:
    assert project_slug(cwd) == expected


def test_cases_are_unique_and_plentiful() -> None:
    assert len({cwd for cwd, _ in CASES}) == len(CASES) >= 40


def test_table_structure_matches_upstream() -> None:
    table = slug_module._replacements()
    # 1872 built-in transliterate entries (after JS Map de-duplication) + 3 slugify ones.
    assert len(table) == 1875
    assert list(table)[-3:] == ["&", "\U0001f984", "\u2665"]
    assert table["\u1e9e"] == "SS"  # listed twice upstream; the later value wins
    # The ASCII fast path relies on every replacement value being ASCII.
    assert all(value.isascii() for value in table.values())


def test_rejects_non_strings() -> None:
    with pytest.raises(TypeError):
        project_slug(None)  # type: ignore[arg-type]


def test_the_ascii_fast_path_tables_are_the_ascii_part_of_the_full_tables() -> None:
    """ASCII paths never load the full tables; what they use instead must be exactly the ASCII
    subset of them (the one ASCII key, and the ASCII code points with the Diacritic property)."""
    diacritic_ranges = slug_module.upstream_tables()[2]

    table = slug_module._replacements()
    assert tuple((k, v) for k, v in table.items() if k.isascii()) == slug_module._ASCII_REPLACEMENTS
    ascii_diacritics = {cp: None for a, b in diacritic_ranges for cp in range(a, min(b, 0x7F) + 1)}
    assert ascii_diacritics == slug_module._ASCII_DIACRITICS


_PATH_ALPHABET = "abcxyz0189/-_. &^`~@#%+=,;:!?()[]{}\\\"\t\n"


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=_PATH_ALPHABET, max_size=40))
def test_the_regex_free_path_equals_the_pattern_pipeline(cwd: str) -> None:
    """A lowercase ASCII cwd without apostrophes skips `re`: same slug as the full pipeline."""
    transliterated = slug_module._transliterate(cwd)
    assert slug_module._slugify(cwd) == slug_module._slugify_with_patterns(transliterated)


@pytest.mark.parametrize("cwd", ["/home/dev/proj", "/srv/a--b/c__d/", "-x-", "/a&b^c`d", "/tmp/  spaced  /", "///"])
def test_lowercase_ascii_paths_take_the_regex_free_path(cwd: str) -> None:
    transliterated = slug_module._transliterate(cwd)
    assert slug_module._NEEDS_PATTERNS.isdisjoint(transliterated)
    assert slug_module._slugify(cwd) == slug_module._slugify_with_patterns(transliterated)
