"""Runs one real program offline: in the network namespace it was started in (`unshare -n`, where
only loopback exists), brings loopback up, starts the stub model server there, and runs the
program with `{STUB}` in its arguments, its environment and the files `OFFLINE_RUN_TEMPLATES`
names (`os.pathsep`-separated) replaced by the stub's address.

Usage: `offline_run.py REQUESTS_LOG -- PROGRAM ARGS...`; the requests the stub got are written to
REQUESTS_LOG as JSON lines; the exit code is the program's. Used by `helpers/npm_programs.py`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from helpers.stub_models import stub_model_server  # noqa: E402


def main() -> int:
    log, separator, *command = sys.argv[1:]
    assert separator == "--", "usage: offline_run.py LOG -- PROGRAM ARGS..."
    if os.environ.get("OFFLINE_RUN_NAMESPACE") == "1":
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    with stub_model_server() as stub:
        env = {key: value.replace("{STUB}", stub.url) for key, value in os.environ.items()}
        command = [part.replace("{STUB}", stub.url) for part in command]
        for template in filter(None, env.pop("OFFLINE_RUN_TEMPLATES", "").split(os.pathsep)):
            with open(template, encoding="utf-8") as handle:  # config files that name the stub
                text = handle.read()
            with open(template, "w", encoding="utf-8") as handle:
                handle.write(text.replace("{STUB}", stub.url))
        timeout = float(env.pop("OFFLINE_RUN_TIMEOUT", "240"))
        stdin = env.pop("OFFLINE_RUN_STDIN", None)
        try:
            completed = subprocess.run(command, env=env, input=stdin, text=True, timeout=timeout)
            code = completed.returncode
        except subprocess.TimeoutExpired:
            print(f"offline_run: {command[0]} did not finish in {timeout} s", file=sys.stderr)
            code = 124
        with open(log, "w", encoding="utf-8") as handle:
            for path, body in stub.requests:
                handle.write(json.dumps({"path": path, "body": body}) + "\n")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
