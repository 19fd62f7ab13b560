"""The CLI's last net: an exception no command handled is one `error:` line and a hint, exit 1,
also when it is a Rust panic (pyo3 raises `pyo3_runtime.PanicException`, a BaseException)."""

from __future__ import annotations

import pytest

from commandcode.cli import fast_path
from helpers.cli import run_in_process


def _panic_class() -> type[BaseException]:
    # The class pyo3 creates on the first panic: `pyo3_runtime.PanicException(BaseException)`.
    return type("PanicException", (BaseException,), {"__module__": "pyo3_runtime"})


@pytest.mark.parametrize("raised", [RuntimeError("boom"), _panic_class()("called `Option::unwrap()` on a `None` value")],
                         ids=["exception", "rust-panic"])
def test_an_unhandled_error_is_one_line_not_a_traceback(raised: BaseException, monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(argv: list[str]) -> bool:
        raise raised

    monkeypatch.delenv("COMMANDCODE_DEBUG", raising=False)
    monkeypatch.setattr(fast_path, "run_fast", explode)
    code, out, err = run_in_process(["sessions", "list"])
    assert code == 1 and out == ""
    lines = err.splitlines()
    assert lines[0].startswith("error: internal error (") and str(raised) in lines[0]
    assert lines[1].startswith("hint: this is a bug in commandcode") and len(lines) == 2


def test_other_base_exceptions_are_not_swallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    def exit_generator(argv: list[str]) -> bool:
        raise GeneratorExit

    monkeypatch.setattr(fast_path, "run_fast", exit_generator)
    with pytest.raises(GeneratorExit):
        run_in_process(["sessions", "list"])
