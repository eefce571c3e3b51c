#!/usr/bin/env bash
# Provision the lgkit VM (Ubuntu 24.04, as root; Vagrantfile runs it, and so may you): P4 tools,
# kernel modules, then the kit through the README's own path (`make setup`), then Jupyter.
# Idempotent: each step says what it did or that it was already done.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=vagrant/lib.sh
source "$ROOT/vagrant/lib.sh"

[[ $EUID -eq 0 ]] || die "run as root (sudo $0)"
JUPYTER_PACKAGES=(jupyter-notebook)
KERNELSPEC=/usr/local/share/jupyter/kernels/python3

say "step 1/4: P4 tools (p4c, BMv2, PI)"
bash "$ROOT/vagrant/p4lang.sh"

say "step 2/4: kernel modules (DCTCP, netem, Soft-RoCE)"
bash "$ROOT/vagrant/kernel.sh"

say "step 3/4: the kit: make setup (scripts/setup.sh; silent when nothing is missing)"
apt_install make
LGKIT_TEST_TOOLS=1 make -C "$ROOT" --no-print-directory setup
"$ROOT/.venv/bin/lgkit" --help >/dev/null
say "the kit is installed in $ROOT/.venv"

say "step 4/4: Jupyter, its python3 kernel being the kit's .venv"
apt_install "${JUPYTER_PACKAGES[@]}"
python="$ROOT/.venv/bin/python"
if [[ -f "$KERNELSPEC/kernel.json" ]] && grep -qF "\"$python\"" "$KERNELSPEC/kernel.json"; then
    say "already registered: $KERNELSPEC ($python)"
else
    "$python" -m ipykernel install --prefix /usr/local --name python3 \
        --display-name "Python 3 (lgkit .venv)" >/dev/null
    say "registered $KERNELSPEC ($python)"
fi

say "done. Next: vagrant ssh, then: cd $ROOT && sudo make demo TARGET=bmv2 (docs/vm.md)"
