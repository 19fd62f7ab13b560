#!/usr/bin/env bash
# Installs a built wheel into a fresh venv and runs it as a user without Rust would (a turn with a
# tool call, listing, context, rewinds, a fork, an export): PATH holds
# only the venv's bin, /usr/bin and /bin (cargo and rustc must not be found), the working
# directory is a scratch folder, and tests/wheel runs alone against the installed package.
#
#     .ci/wheel-smoke.sh dist/commandcode-<version>-cp311-abi3-manylinux_2_17_x86_64.whl
set -euo pipefail
wheel=$(realpath "${1:?usage: .ci/wheel-smoke.sh WHEEL}")
repo=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}  # resolved before PATH is narrowed
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --upgrade pip
"$work/venv/bin/python" -m pip install -q "$wheel" 'pytest>=8'

export PATH="$work/venv/bin:/usr/bin:/bin" COMMANDCODE_WHEEL="$wheel"
unset PYTHONPATH VIRTUAL_ENV CARGO_HOME RUSTUP_HOME
for tool in cargo rustc rustup; do
    if command -v "$tool" >/dev/null; then echo "error: $tool is on PATH: $(command -v "$tool")" >&2; exit 1; fi
done
mkdir "$work/cwd" && cd "$work/cwd"
python -c 'import commandcode; print("+ commandcode", commandcode.__version__, "from", commandcode.__file__)'
python -m pytest -q -p no:cacheprovider -p no:randomly -c /dev/null --rootdir "$repo/tests/wheel" \
    --confcutdir "$repo/tests/wheel" "$repo/tests/wheel"
