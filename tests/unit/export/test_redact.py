"""Secret redaction: a corpus of every secret shape, and look-alikes that must survive untouched,
through both matchers (the Rust core's and Python's `re`), and through every redacted format
(html, md, jsonl --redact) of a real session whose transcript stays byte-identical."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commandcode import _native
from commandcode.export.document import export_session, render_text
from commandcode.export.redact import RULES, Redactor, summary
from commandcode.sessions.reader import open_session
from helpers.transcripts import TranscriptBuilder

# (rule, text around the secret, the secret). Built from pieces so no scanner flags this file.
SECRETS = [
    ("anthropic-key", "ANTHROPIC={}", "sk-ant-api03-" + "Ab1_" * 20 + "xyzAA"),
    ("openai-key", "key: {}", "sk-proj-" + "Z9y8X7w6" * 6),
    ("openai-key", "legacy {}", "sk-" + "a1B2c3D4" * 6),
    ("google-api-key", "maps={}", "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"[:35]),
    ("github-token", "git push https://x:{}@github.com", "ghp_" + "16C7e42F292c6912E7710c838347Ae178B4a"),
    ("github-token", "fine-grained {}", "github_pat_" + "11ABCDEFG0" * 7),
    ("gitlab-token", "GL {}", "glpat-" + "xY12abCD34efGH56ijKL"),
    ("slack-token", "slack {}", "xoxb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx"),
    ("stripe-key", "stripe {}", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"),
    ("aws-access-key-id", "id {} here", "AKIA" + "IOSFODNN7EXAMPLE"),
    ("aws-secret-key", "aws_secret_access_key = {}", "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"),
    ("jwt", "cookie={}", "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("bearer-token", "Authorization: Bearer {}", "abcDEF123456ghiJKL789mnoPQR"),
    ("basic-auth", "Authorization: Basic {}", "dXNlcjpodW50ZXIyMjIy"),
    ("private-key", "{}", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc\n-----END RSA PRIVATE KEY-----"),
    ("private-key", "{}", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----"),
    ("connection-password", "DATABASE_URL postgres://app:{}@db.internal:5432/x", "s3cr3t-pw!"),
    ("connection-password", "mongodb+srv://root:{}@cluster0.example.net", "Tr0ub4dor&3"),
    ("env-secret", "DB_PASSWORD={}", "correcthorsebattery"),
    ("env-secret", "export STRIPE_SECRET_KEY='{}'", "notastripeshape123"),
    ("env-secret", "  MY_API_KEY = {}", "abcd1234efgh"),
    ("quoted-secret", '{{"password": "{}"}}', "hunter2hunter2"),
]

LOOK_ALIKES = [
    "MAX_TOKENS=4096",
    "TOKEN_LIMIT=5000",
    "PASSWORD=",
    "PASSWORD=${DB_PASSWORD}",
    "password: str = Field(...)",
    'password = input("Password: ")',
    "https://user@example.com/path",
    "http://localhost:8080/api/v1",
    "redis://cache:6379/0",
    "sk-learn and scikit-learn",
    "the task-ant-colony algorithm",
    "AKIA is a prefix; AKIAshort",
    "eyJ is how base64 JSON starts",
    "Bearer token",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----",
    "a ghp_ prefix alone, and ghp_short",
    "git commit -m 'token refactor'",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "uuid 1ccb4627-5286-46c5-84a9-ce35adae899d",
    "def get_secret_key(self): return self._key",
]


@pytest.fixture(params=["native", "re"])
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("rule, around, secret", SECRETS, ids=[f"{rule}-{index}" for index, (rule, _, _) in enumerate(SECRETS)])
def test_every_secret_shape_is_redacted(engine: str, rule: str, around: str, secret: str) -> None:
    redactor = Redactor(engine=engine)
    text = around.format(secret)
    cleaned = redactor.redact(text)
    assert secret not in cleaned
    assert f"[REDACTED:{rule}]" in cleaned, cleaned
    assert cleaned.replace(f"[REDACTED:{rule}]", secret) == text, "only the secret itself is replaced"
    assert redactor.counts == {rule: 1}


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_survive(engine: str, text: str) -> None:
    redactor = Redactor(engine=engine)
    assert redactor.redact(text) == text
    assert redactor.total == 0


def test_both_matchers_agree_on_the_whole_corpus() -> None:
    corpus = "\n".join([around.format(secret) for _, around, secret in SECRETS] + LOOK_ALIKES) * 3
    native, python = Redactor(engine="native"), Redactor(engine="re")
    assert native.redact(corpus) == python.redact(corpus)
    assert native.counts == python.counts and native.total == 3 * len(SECRETS)


def test_every_rule_is_in_the_corpus() -> None:
    assert {name for name, _ in RULES} == {rule for rule, _, _ in SECRETS}


def test_non_ascii_text_around_secrets() -> None:
    token = "ghp_" + "16C7e42F292c6912E7710c838347Ae178B4a"
    for engine in ("native", "re"):
        assert Redactor(engine=engine).redact(f"é→ {token} ✓") == "é→ [REDACTED:github-token] ✓"


# Unicode's White_Space (PropList.txt): what `\s` matched while the core carried Unicode tables.
WHITE_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"


def test_every_unicode_space_separates_as_before(engine: str) -> None:
    # The rules spell the class out (the core has no Unicode tables): each of the 25 characters
    # still counts as a space between a name and its secret, in both matchers, and characters
    # outside White_Space (a file separator, a zero-width space) still do not.
    secret = "abcDEF123456ghiJKL789mnoPQR"
    for space in WHITE_SPACE:
        assert Redactor(engine=engine).redact(f"Authorization: Bearer{space}{secret}") == \
            "Authorization: Bearer[REDACTED:bearer-token]".replace("Bearer", "Bearer" + space), repr(space)
        assert Redactor(engine=engine).redact(f'{{"password":{space}"hunter2hunter2"}}') == \
            f'{{"password":{space}"[REDACTED:quoted-secret]"}}', repr(space)
    for other in "\x1c\x1f\u200b\ufeff":
        assert Redactor(engine=engine).redact(f"Bearer{other}{secret}") == f"Bearer{other}{secret}", repr(other)


def test_names_fold_ascii_case_only(engine: str) -> None:
    secret = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
    assert Redactor(engine=engine).redact(f"AWS_Secret_Access_KEY={secret}") == "AWS_Secret_Access_KEY=[REDACTED:aws-secret-key]"
    # A Kelvin sign is not a `k` (as with JavaScript's `/i`): both matchers leave it.
    assert Redactor(engine=engine).redact(f"aws_secret_access_\u212aey={secret}") == f"aws_secret_access_\u212aey={secret}"


@pytest.mark.parametrize("pattern", [r"\s", r"\w+", r"\p{Greek}", "(?i)key"])
def test_the_core_carries_no_unicode_tables(pattern: str) -> None:
    # Each table the native module carries is relocated by the loader at every import (issue
    # 30's warm open): a rule that needs one is refused, with its index, not compiled.
    with pytest.raises(ValueError, match="redaction rule 0: "):
        _native.Redactor([pattern], ["[R]"])


def test_summary_line() -> None:
    assert summary({}) == "no secrets found"
    assert summary({"jwt": 1, "github-token": 2}) == "3 secrets redacted (2 github-token, 1 jwt)"


def test_no_secret_survives_any_redacted_format(home: Path, workdir: Path, tmp_path: Path) -> None:
    builder = TranscriptBuilder(workdir)
    for index, (_, around, secret) in enumerate(SECRETS):
        builder.user(f"prompt {index}: " + around.format(secret))
        builder.tool(f"call_{index}", "bash", {"command": around.format(secret)}, "output " + around.format(secret))
        builder.assistant({"type": "thinking", "thinking": around.format(secret), "signature": ""},
                          "reply " + around.format(secret))
    builder.user("innocent:\n" + "\n".join(LOOK_ALIKES))
    builder.assistant("done")
    path = builder.write(home)
    before = path.read_bytes()
    session = open_session(path)
    for fmt in ("md", "html"):
        text, result = render_text(session, fmt)
        assert result.redactions and sum(result.redactions.values()) >= 4 * len(SECRETS)
        for _, _, secret in SECRETS:
            assert secret not in text and json.dumps(secret)[1:-1] not in text, (fmt, secret)
        for innocent in ("MAX_TOKENS=4096", "http://localhost:8080/api/v1", "sk-learn and scikit-learn"):
            assert innocent in text, (fmt, innocent)
    out = tmp_path / "x.jsonl"
    export_session(path, out, "jsonl", redact_jsonl=True)
    copied = out.read_text(encoding="utf-8")
    for _, _, secret in SECRETS:
        assert json.dumps(secret)[1:-1] not in copied and secret not in copied, secret
    assert all(json.loads(line) for line in copied.splitlines())
    assert path.read_bytes() == before, "the transcript itself is never changed"
