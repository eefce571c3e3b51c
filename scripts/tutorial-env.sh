#!/usr/bin/env bash
# Create .venv-tutorial: Python for P4Runtime helper libraries (protobuf 3.20, the `p4` package
# with p4.tmp.p4config_pb2, p4runtime-shell, scapy, Mininet), and .venv-tutorial/env.sh, which
# puts it first on PATH, then the PATH it found, the kit's .venv/bin (lgkit) and the BMv2-named
# shims (.venv/bmv2-shims/bin) last, so a real BMv2/p4c on PATH wins. Idempotent; never touches
# .venv.
# Run `make setup` first (it makes the shims).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${TUTORIAL_VENV:-$ROOT/.venv-tutorial}"
REQS="$ROOT/scripts/tutorial-requirements.txt"
STAMP="$VENV/.lgkit-tutorial.sha256"
PYTHON=/usr/bin/python3

want="$(cat "$REQS" "$ROOT/lgkit/course/p4config_pb2.py" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" && -x "$VENV/bin/python" ]]; then
    echo "tutorial-env: $VENV is ready (source $VENV/env.sh)"
    exit 0
fi
[[ -x "$VENV/bin/python" ]] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQS"
site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
mkdir -p "$site/p4/tmp"
touch "$site/p4/tmp/__init__.py"
cp "$ROOT/lgkit/course/p4config_pb2.py" "$site/p4/tmp/p4config_pb2.py"
if [[ ! -e "$site/mininet/__init__.py" ]]; then
    target="$(cd / && "$PYTHON" -c 'import mininet, os; print(os.path.dirname(mininet.__file__))')"
    ln -sfn "$target" "$site/mininet"
fi
cat > "$VENV/env.sh" <<ENV
# source this file: tutorial Python first; real BMv2/p4c wherever PATH has them; lgkit; the kit's shims last
export PATH="$VENV/bin:\${PATH}:$ROOT/.venv/bin:$ROOT/.venv/bmv2-shims/bin"
ENV
"$VENV/bin/python" -c "import p4.v1.p4runtime_pb2, p4.config.v1.p4info_pb2, p4.tmp.p4config_pb2, grpc, scapy.all, mininet.net, p4runtime_sh.shell"
echo "$want" > "$STAMP"
echo "tutorial-env: created $VENV (source $VENV/env.sh)"
