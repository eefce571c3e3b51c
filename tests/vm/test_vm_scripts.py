"""VM provisioning: shellcheck-clean scripts, the kit installed only through `make setup`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from testpaths import REPO

ROOT = REPO
SCRIPTS = sorted((ROOT / "vagrant").glob("*.sh")) + sorted((ROOT / "scripts").glob("*.sh"))
VM_SCRIPTS = sorted((ROOT / "vagrant").glob("*.sh"))


@pytest.mark.skipif(shutil.which("shellcheck") is None,
                    reason="shellcheck not installed (`make test` installs it as root)")
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_shellcheck_is_clean(script: Path) -> None:
    done = subprocess.run(["shellcheck", "-x", str(script.relative_to(ROOT))], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_vm_runs_the_provisioning_script_and_it_runs_make_setup() -> None:
    assert 'inline: "bash #{GUEST_DIR}/vagrant/provision.sh"' in (ROOT / "Vagrantfile").read_text()
    calls = [line for line in (ROOT / "vagrant/provision.sh").read_text().splitlines()
             if re.match(r'\s*(LGKIT_TEST_TOOLS=1 )?make -C "\$ROOT" .*\bsetup$', line)]
    assert len(calls) == 1


def test_the_readme_commands_run_scripts_setup_sh() -> None:
    for goal in ("setup", "demo", "test"):
        done = subprocess.run(["make", "-n", "-C", str(ROOT), goal], capture_output=True,
                              text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        assert "bash scripts/setup.sh" in done.stdout.splitlines(), (goal, done.stdout)


def shell_words(text: str, pattern: str) -> set[str]:
    """The literal words (no $-expansions) in every match of a regex's first group."""
    return {word for match in re.finditer(pattern, text, re.M | re.S)
            for word in match.group(1).split() if "$" not in word}


def test_no_vm_script_duplicates_what_setup_sh_installs() -> None:
    setup = (ROOT / "scripts/setup.sh").read_text()
    kit_packages = shell_words(setup, r"^(?:APT_PACKAGES|TEST_TOOLS)=\(([^)]*)\)")
    assert {"mininet", "iperf3", "redis-server", "nftables", "shellcheck"} <= kit_packages
    for script in VM_SCRIPTS:
        text = script.read_text()
        vm_packages = (shell_words(text, r"^\w+_PACKAGES=\(([^)]*)\)")
                       | shell_words(text, r"^\s*apt_install ([^\n]*)$"))
        assert not vm_packages & kit_packages, (script.name, vm_packages & kit_packages)
        for duplicate in ("pip install", "-m venv", "requirements.lock", "uv pip", "p4rt-venv"):
            assert duplicate not in text, (script.name, duplicate)


def test_apt_install_installs_only_the_missing_packages(tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    stub = tmp_path / "apt-get"
    stub.write_text(f'#!/bin/sh\necho "$*" >> {calls}\n')
    stub.chmod(0o755)
    script = ('source vagrant/lib.sh; apt_install iproute2 procps; '
              'apt_install iproute2 lgkit-no-such-package; apt_install lgkit-other-package')
    done = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"},
                          timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "provision: already installed: iproute2 procps",
        "provision: apt-get update",
        "provision: installing lgkit-no-such-package",
        "provision: installing lgkit-other-package",
    ]
    assert calls.read_text().splitlines() == [
        "update -qq",
        "install -y -qq --no-install-recommends lgkit-no-such-package",
        "install -y -qq --no-install-recommends lgkit-other-package",
    ]
