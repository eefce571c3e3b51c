# Helpers sourced by the VM provisioning scripts: every step says what it did or that it was done.
# shellcheck shell=bash

say() { echo "provision: $*"; }

die() {
    echo "provision: error: $*" >&2
    exit 1
}

# Whether a Debian package is installed.
installed() { [[ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" == ii* ]]; }

# Whether the distribution has a candidate version of a Debian package.
packaged() { [[ "$(apt-cache policy "$1" 2>/dev/null)" =~ Candidate:\ [0-9] ]]; }

APT_UPDATED=0

# apt-get update once per provisioning run, or again after a source was added (APT_UPDATED=0).
apt_update() {
    ((APT_UPDATED)) && return 0
    say "apt-get update"
    apt-get update -qq
    APT_UPDATED=1
}

# Install the missing ones among the named Debian packages; say which, or that all were there.
apt_install() {
    local pkg missing=()
    for pkg in "$@"; do
        installed "$pkg" || missing+=("$pkg")
    done
    if ((${#missing[@]} == 0)); then
        say "already installed: $*"
        return 0
    fi
    apt_update
    say "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
        >/dev/null
}

# Whether FILE holds exactly CONTENT.
holds() { [[ -f "$1" && "$(cat "$1")" == "$2" ]]; }
