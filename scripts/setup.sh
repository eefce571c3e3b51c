#!/usr/bin/env bash
# Install what the kit needs on Debian 12 / Ubuntu 24.04 (as root); quick and silent when done.
#
# 1. Debian packages, only the missing ones (apt-get update runs only when something is missing).
#    The names are the same on Debian 12 and Ubuntu 24.04. With LGKIT_TEST_TOOLS=1 (`make test`
#    sets it) also the tools only tests use, where the distribution packages them: shellcheck,
#    vagrant (Debian 12 has it; Ubuntu 24.04 does not, and tests/vm/test_vm_vagrantfile.py skips).
#    build-essential is the C compiler of the built-in target's native engine (without it the
#    engine falls back to Python, saying so).
# 2. .venv made with the system python3, requirements.lock installed, then the kit in editable mode.
#    A stamp file (.venv/.lgkit-setup.sha256, hash of requirements.lock + pyproject.toml) makes a
#    second run install nothing. Only the venv's pip installs Python packages, so PEP 668 (Debian
#    12, Ubuntu 24.04) does not apply. Python 3.12 (Ubuntu 24.04) has no distutils, which Mininet
#    2.3.0 imports: pyproject.toml adds setuptools, whose shim provides it, on Python >= 3.12.
# 3. Mininet (a Debian package, pure Python) is made importable in .venv by ONE symlink:
#    .venv/lib/pythonX.Y/site-packages/mininet -> the system package directory. No other system
#    package leaks into the venv (we do not use --system-site-packages).
# 4. .venv/bmv2-shims/bin: p4c, p4c-bm2-ss, simple_switch(_grpc), simple_switch_CLI -> the kit.
# 5. scripts/p4rt-venv.sh (the p4runtime-shell venv), when present.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$ROOT/.venv"
STAMP="$VENV/.lgkit-setup.sha256"
SYSTEM_PYTHON=/usr/bin/python3

APT_PACKAGES=(python3-venv mininet bridge-utils net-tools iputils-ping iperf3 redis-server
              nftables iproute2 ethtool tcpdump procps psmisc iptables build-essential
              libnetfilter-queue-dev)
TEST_TOOLS=(shellcheck vagrant)

say() { echo "setup: $*"; }

missing_packages() {
    local status pkg
    for pkg in "$@"; do
        status="$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)"
        [[ "$status" == ii* ]] || echo "$pkg"
    done
}

packaged() { [[ "$(apt-cache policy "$1" 2>/dev/null)" =~ Candidate:\ [0-9] ]]; }

install_apt_packages() {
    local missing tools=() pkg
    mapfile -t missing < <(missing_packages "${APT_PACKAGES[@]}")
    if [[ "${LGKIT_TEST_TOOLS:-0}" == 1 && $EUID -eq 0 ]]; then
        mapfile -t tools < <(missing_packages "${TEST_TOOLS[@]}")
    fi
    ((${#missing[@]} + ${#tools[@]} == 0)) && return 0
    if ((${#missing[@]})); then
        if [[ $EUID -ne 0 ]]; then
            echo "setup: missing Debian packages: ${missing[*]}; run 'make setup' as root" >&2
            exit 1
        fi
        apt-get update -qq
    fi
    for pkg in "${tools[@]}"; do
        if packaged "$pkg"; then missing+=("$pkg"); fi
    done
    ((${#missing[@]} == 0)) && return 0
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # The kit starts its own redis-server (port 6390); the package's service, where systemd starts
    # it (Ubuntu), listens on 6379 and does not interfere.
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

wanted_stamp() { cat requirements.lock pyproject.toml | sha256sum | cut -d' ' -f1; }

install_venv() {
    if [[ ! -x "$VENV/bin/python" ]]; then
        say "creating .venv with $SYSTEM_PYTHON"
        "$SYSTEM_PYTHON" -m venv "$VENV"
    fi
    local want
    want="$(wanted_stamp)"
    [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]] && return 0
    say "installing requirements.lock into .venv"
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q -r requirements.lock
    local log
    log="$(mktemp)"
    if ! "$VENV/bin/python" -m pip install -q --no-deps -e . >"$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        exit 1
    fi
    rm -f "$log"
    echo "$want" > "$STAMP"
}

link_mininet() {
    local site target
    site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    [[ -e "$site/mininet/__init__.py" ]] && return 0
    target="$(cd / && "$SYSTEM_PYTHON" -c 'import mininet, os; print(os.path.dirname(mininet.__file__))')"
    say "linking Mininet ($target) into .venv"
    ln -sfn "$target" "$site/mininet"
}

# The BMv2/p4c-named shims (docs/course.md): a directory of their own, put on PATH (last) only
# by the tutorial environment, so they never shadow a real BMv2 or p4c.
link_bmv2_shims() {
    local dir="$VENV/bmv2-shims/bin" pair
    mkdir -p "$dir"
    for pair in p4c:lgkit-p4c p4c-bm2-ss:lgkit-p4c-bm2-ss simple_switch:lgkit-simple-switch \
                simple_switch_grpc:lgkit-simple-switch-grpc simple_switch_CLI:lgkit-simple-switch-cli; do
        ln -sfn "../../bin/${pair#*:}" "$dir/${pair%%:*}"
    done
}

install_apt_packages
install_venv
link_mininet
link_bmv2_shims
if [[ -x scripts/p4rt-venv.sh ]]; then
    scripts/p4rt-venv.sh
fi
