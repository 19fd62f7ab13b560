"""Secret redaction: the one rule table, and the matcher that applies it to text that leaves.

Every html and md export, share and gist goes through `Redactor.redact` before anything is
written (a jsonl export stays a byte copy unless `--redact`); the transcript is never changed.
The rules are gitleaks-style shapes with high specificity: provider API keys (Anthropic,
OpenAI, Google, Stripe, Slack), GitHub tokens, AWS access key ids and secret keys, bearer and
basic `Authorization` credentials, JWTs, PEM private key blocks, passwords in connection strings
and `.env`-style `SECRET=…` assignments (also quoted `"password": "…"` pairs), quotes also in
their JSON-escaped form (`{\\"password\\": \\"…\\"}`, a JSON text inside a string).

A rule's pattern has a group named `s`: only that part is replaced, by `[REDACTED:<rule>]`, so
`Bearer abc…` keeps `Bearer ` and `postgres://user:pw@host` keeps everything but `pw`. The
patterns use no lookaround, so the same strings compile in Python's `re` and in the Rust core's
`regex` crate, which does the matching (`_native.Redactor`: measured 1 GB in a few seconds, where
`re` is the bottleneck of an export; `benches/bench_export.py --engine re` compares them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .. import _native

# An ASCII word boundary (Rust `regex` syntax; `re` reads it as `\b`): the lazy DFA keeps it, and
# a literal after it still drives the prefilter, where a consumed boundary character would not.
_B = r"(?-u:\b)"
# A quote, or a JSON-escaped one (`\\"`: a JSON text printed inside another, e.g. tool output).
_Q = r"\\?[\"']"
# Unicode's White_Space, spelled out: what `\s` means to the `regex` crate, without the Unicode
# tables the core no longer carries (rust/Cargo.toml: they were ~4,600 of the native module's
# relocations, a page fault per 4 KB of them at every import). `_WS` goes inside a class, `_S` is
# one whitespace character and `_NS` one that is not. Names in the rules match their ASCII letters
# either case (`(?i-u:…)`, Python's `(?ai:…)`), as JavaScript's `/i` does: a Kelvin sign no longer
# stands for a `k`.
_WS = r"\x09-\x0d \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_S = f"[{_WS}]"
_NS = f"[^{_WS}]"
_ENV_NAME = r"(?:[A-Za-z0-9]+_)*(?:SECRET|TOKEN|PASSWORD|PASSWD|PWD|APIKEY|API_KEY|SECRET_KEY|ACCESS_KEY|PRIVATE_KEY|AUTH_KEY|CREDENTIALS|ACCESS_TOKEN|AUTH_TOKEN|CLIENT_SECRET)"

# (rule name, pattern). Order matters only where shapes overlap: the first rule to claim a span wins.
RULES: tuple[tuple[str, str], ...] = (
    ("private-key", r"(?P<s>-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?s:.)*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)"),
    ("anthropic-key", _B + r"(?P<s>sk-ant-[A-Za-z0-9]{2,8}-[A-Za-z0-9_\-]{32,})"),
    ("openai-key", _B + r"(?P<s>sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}T3BlbkFJ[A-Za-z0-9_\-]{16,}|sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,}|sk-[A-Za-z0-9]{48})"),
    ("google-api-key", _B + r"(?P<s>AIza[0-9A-Za-z_\-]{35})"),
    ("github-token", _B + r"(?P<s>gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{60,255})"),
    ("gitlab-token", _B + r"(?P<s>glpat-[A-Za-z0-9_\-]{20,})"),
    ("slack-token", _B + r"(?P<s>xox[abposr]-[0-9]{6,}-[A-Za-z0-9\-]{10,})"),
    ("stripe-key", _B + r"(?P<s>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,})"),
    ("aws-access-key-id", _B + r"(?P<s>(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})(?-u:\b)"),
    ("aws-secret-key", r"(?i-u:aws_?secret_?(?:access_?)?key)[\"']?" + _S + r"*[:=]" + _S + r"*[\"']?(?P<s>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|$)"),
    ("jwt", _B + r"(?P<s>eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{16,})"),
    ("bearer-token", r"(?-u:\b)(?i-u:bearer)" + _S + r"+(?P<s>[A-Za-z0-9._~+/\-]{20,}=*)"),
    ("basic-auth", r"(?-u:\b)(?i-u:authorization)[\"']?" + _S + r"*[:=]" + _S + r"*[\"']?(?i-u:basic)" + _S + r"+(?P<s>[A-Za-z0-9+/]{12,}=*)"),
    ("connection-password", r"(?-u:\b)[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^" + _WS + r":/@\"'<>]{1,64}:(?P<s>[^" + _WS + r"@/\"'<>]{1,128})@[A-Za-z0-9.\-\[\]]"),
    ("env-secret", _B + _ENV_NAME + r"[ \t]*=[ \t]*" + _Q + r"?(?P<s>(?:[^" + _WS + r"\"'$#\\]|\\[^" + _WS + r"\"'])(?:[^" + _WS + r"\"'$#\\]|\\[^" + _WS + r"\"']){3,})"),
    ("quoted-secret", _Q + r"(?i-u:password|passwd|secret|api_?key|access_?token|auth_?token|client_?secret|secret_?key)" + _Q
     + _S + r"*[:=]" + _S + r"*" + _Q + r"(?P<s>(?:[^\"'" + _WS + r"$\\]|\\[^\"'" + _WS + r"]){4,})" + _Q),
)


_MARKER_PREFIX = "[REDACTED:"


def marker(rule: str) -> str:
    return f"{_MARKER_PREFIX}{rule}]"


def _python_pattern(pattern: str) -> str:
    """A rule in Python's `re` syntax: `\\b` for the ASCII word boundary, `(?ai:…)` for ASCII case
    folding."""
    return pattern.replace("(?-u:\\b)", "\\b").replace("(?i-u:", "(?ai:")


class Redactor:
    """Applies `RULES` to text and counts what it replaced (per rule, over its whole life)."""

    def __init__(self, *, engine: str = "native") -> None:
        self.counts: dict[str, int] = {}
        self._engine = engine
        if engine == "native":
            self._native = _native.Redactor([pattern for _name, pattern in RULES], [marker(name) for name, _ in RULES])
        else:
            self._compiled = [(name, re.compile(_python_pattern(pattern))) for name, pattern in RULES]

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def redact(self, text: str) -> str:
        """`text` with every secret replaced by its marker."""
        if not text:
            return text
        if self._engine == "native":
            result, counts = self._native.redact(text)
            if counts:
                for index, count in counts:
                    name = RULES[index][0]
                    self.counts[name] = self.counts.get(name, 0) + count
            return result
        return self._redact_re(text)

    def _redact_re(self, text: str) -> str:
        for name, pattern in self._compiled:
            pieces: list[str] = []
            last = 0
            for match in pattern.finditer(text):
                start, end = match.span("s")
                if _MARKER_PREFIX in text[start:end]:
                    continue  # an earlier rule's marker (the native matcher's rule too)
                pieces += [text[last:start], marker(name)]
                last = end
                self.counts[name] = self.counts.get(name, 0) + 1
            if pieces:
                pieces.append(text[last:])
                text = "".join(pieces)
        return text


def summary(counts: dict[str, int]) -> str:
    """`3 secrets redacted (2 github-token, 1 jwt)`, or `no secrets found`."""
    total = sum(counts.values())
    if not total:
        return "no secrets found"
    parts = ", ".join(f"{count} {name}" for name, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])))
    return f"{total} secret{'s' if total != 1 else ''} redacted ({parts})"


def rule_names() -> Sequence[str]:
    return [name for name, _pattern in RULES]
