#!/usr/bin/env bash
# The P4 project's Ubuntu packages: p4c, BMv2 (simple_switch_grpc with PI) and PI, from its
# openSUSE Build Service repository home:p4lang, as p4lang's p4c and BMv2 READMEs install them.
set -euo pipefail
# shellcheck source=vagrant/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# shellcheck source=/dev/null
. /etc/os-release
# The packages are signed: the deb line may stay http (the OBS mirrors redirect to http mirrors,
# which apt refuses after https); the key comes over https and is trusted for this repository only.
REPO="http://download.opensuse.org/repositories/home:/p4lang/xUbuntu_${VERSION_ID}/"
KEY_URL="https://download.opensuse.org/repositories/home:/p4lang/xUbuntu_${VERSION_ID}/Release.key"
KEYRING=/etc/apt/keyrings/home_p4lang.gpg
SOURCE_LIST=/etc/apt/sources.list.d/home_p4lang.list
P4LANG_PACKAGES=(p4lang-p4c p4lang-bmv2 p4lang-pi)

apt_install ca-certificates curl gpg

if [[ -s "$KEYRING" ]]; then
    say "already present: $KEYRING"
else
    install -d -m 0755 "$(dirname "$KEYRING")"
    curl -fsSL "$KEY_URL" | gpg --dearmor --yes -o "$KEYRING"
    chmod 0644 "$KEYRING"
    say "fetched the home:p4lang signing key into $KEYRING"
fi

line="deb [signed-by=$KEYRING] $REPO /"
if holds "$SOURCE_LIST" "$line"; then
    say "already configured: $SOURCE_LIST"
else
    printf '%s\n' "$line" >"$SOURCE_LIST"
    APT_UPDATED=0
    say "wrote $SOURCE_LIST ($REPO)"
fi

apt_install "${P4LANG_PACKAGES[@]}"

for tool in p4c p4c-bm2-ss simple_switch simple_switch_grpc simple_switch_CLI; do
    command -v "$tool" >/dev/null || die "$tool is missing after installing ${P4LANG_PACKAGES[*]}"
done
say "P4 tools: $(p4c --version | head -n 1); simple_switch_grpc $(simple_switch_grpc --version)"
