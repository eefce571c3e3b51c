#!/usr/bin/env bash
# Start Jupyter in the VM on 0.0.0.0:8888, which the Vagrantfile forwards to the host's
# 127.0.0.1:8888 only, and print the URL with its token. Ctrl-C stops it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PORT=8888

if ! command -v jupyter-notebook >/dev/null; then
    echo "jupyter.sh: error: jupyter-notebook is not installed; run vagrant/provision.sh" >&2
    exit 1
fi
token="$(python3 -c 'import secrets; print(secrets.token_hex(24))')"
echo "jupyter.sh: on the host, open http://127.0.0.1:$PORT/tree/notebooks?token=$token"
# The token goes through the environment, not the command line that `ps` shows. No port retries:
# only 8888 is forwarded.
JUPYTER_TOKEN="$token" exec jupyter-notebook --no-browser --allow-root --ip=0.0.0.0 \
    --port="$PORT" --NotebookApp.port_retries=0 --notebook-dir="$ROOT"
