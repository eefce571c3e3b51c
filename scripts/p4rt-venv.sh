#!/usr/bin/env bash
# Create /work/main/.venv-p4rt: a separate virtualenv with p4runtime-shell 0.0.6 (pins protobuf < 3.21).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${P4RT_VENV:-$ROOT/.venv-p4rt}"
PYTHON="${PYTHON:-$(command -v python3.11 || command -v python3)}"

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import p4runtime_sh.shell" 2>/dev/null; then
    echo "p4rt-venv: $VENV is ready"
    exit 0
fi
if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "p4runtime-shell==0.0.6"
"$VENV/bin/python" -c "import p4runtime_sh.shell"
echo "p4rt-venv: created $VENV"
