#!/usr/bin/env bash
# Kernel modules the experiments use: tcp_dctcp and sch_netem (Ubuntu ships them in
# linux-modules-extra for the running kernel, installed here), and Soft-RoCE (rdma_rxe) where the
# kernel has it.
# Each is loaded now and listed in /etc/modules-load.d/lgkit.conf so that it loads at boot.
set -euo pipefail
# shellcheck source=vagrant/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KERNEL="$(uname -r)"
MODULES=(tcp_dctcp sch_netem)
BOOT_LIST=/etc/modules-load.d/lgkit.conf
RDMA_PACKAGES=(rdma-core ibverbs-utils)

available() { modinfo "$1" >/dev/null 2>&1; }

load() {
    if [[ -d "/sys/module/$1" ]]; then
        say "already loaded: $1"
    else
        modprobe "$1"
        say "loaded $1"
    fi
}

extra="linux-modules-extra-$KERNEL"
if installed "$extra"; then
    say "already installed: $extra"
else
    apt_update
    if packaged "$extra"; then
        apt_install "$extra"
    else
        say "no $extra package: kernel $KERNEL keeps its base modules"
    fi
fi
for module in "${MODULES[@]}"; do
    available "$module" || die "kernel $KERNEL has no $module module"
done

boot=("${MODULES[@]}")
if available rdma_rxe; then
    apt_install "${RDMA_PACKAGES[@]}"
    boot+=(rdma_rxe)
else
    say "Soft-RoCE skipped: kernel $KERNEL has no rdma_rxe module"
fi

for module in "${boot[@]}"; do
    load "$module"
done

content="$(printf '%s\n' "# lgkit: loaded at boot (vagrant/kernel.sh)" "${boot[@]}")"
if holds "$BOOT_LIST" "$content"; then
    say "already written: $BOOT_LIST"
else
    printf '%s\n' "$content" >"$BOOT_LIST"
    say "wrote $BOOT_LIST (${boot[*]})"
fi
