"""The Vagrantfile passes `vagrant validate`, rejects bad resource settings, pins its box."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from testpaths import REPO

ROOT = REPO
VAGRANTFILE = ROOT / "Vagrantfile"

needs_vagrant = pytest.mark.skipif(
    shutil.which("vagrant") is None,
    reason="vagrant not installed (`make test` installs it on Debian 12; Ubuntu 24.04 lacks it)")


def validate(tmp_path: Path, **settings: str) -> subprocess.CompletedProcess:
    """`vagrant validate --ignore-provider` (no hypervisor here) with its state kept in tmp_path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LGKIT_VM_")}
    env.update(VAGRANT_CHECKPOINT_DISABLE="1", VAGRANT_HOME=str(tmp_path / "home"),
               VAGRANT_DOTFILE_PATH=str(tmp_path / "dot"), **settings)
    return subprocess.run(["vagrant", "validate", "--ignore-provider", "--no-color"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
@needs_vagrant
def test_vagrant_validates_the_vagrantfile(tmp_path: Path) -> None:
    done = validate(tmp_path, LGKIT_VM_CPUS="2", LGKIT_VM_MEMORY_MB="4096")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Vagrantfile validated successfully." in done.stdout


@pytest.mark.slow
@needs_vagrant
@pytest.mark.parametrize(("name", "value"), [("LGKIT_VM_CPUS", "four"),
                                             ("LGKIT_VM_MEMORY_MB", "0"),
                                             ("LGKIT_VM_MEMORY_MB", "8G")])
def test_bad_resource_settings_stop_with_one_clear_line(tmp_path: Path, name: str,
                                                        value: str) -> None:
    done = validate(tmp_path, **{name: value})
    assert done.returncode != 0
    assert done.stderr.strip() == f"lgkit: error: {name} must be a positive integer, got '{value}'"


def test_box_is_pinned_and_both_providers_get_the_resources() -> None:
    text = VAGRANTFILE.read_text()
    assert re.search(r'^BOX = "bento/ubuntu-24\.04"$', text, re.M)
    assert re.search(r'^BOX_VERSION = "\d{6}\.\d{2}\.\d+"$', text, re.M), "an exact version"
    assert 'setting("LGKIT_VM_CPUS", 4)' in text and 'setting("LGKIT_VM_MEMORY_MB", 8192)' in text
    for provider, var in (("virtualbox", "vb"), ("libvirt", "lv")):
        block = text.split(f'config.vm.provider "{provider}" do |{var}|')[1].split("end")[0]
        assert f"{var}.cpus = CPUS" in block and f"{var}.memory = MEMORY_MB" in block


def test_jupyter_is_forwarded_to_the_hosts_localhost_only() -> None:
    forward = re.search(r'config\.vm\.network "forwarded_port",(.*?)\n\n', VAGRANTFILE.read_text(),
                        re.S)
    assert forward is not None
    assert 'host_ip: "127.0.0.1"' in forward.group(1)
    assert "guest: JUPYTER_PORT, host: JUPYTER_PORT" in forward.group(1)
    port = re.search(r"^JUPYTER_PORT = (\d+)$", VAGRANTFILE.read_text(), re.M)
    served = re.search(r"^PORT=(\d+)$", (ROOT / "vagrant/jupyter.sh").read_text(), re.M)
    assert port and served and port.group(1) == served.group(1)


def test_the_readme_vm_commands_match_the_vagrantfile() -> None:
    section = (ROOT / "README.md").read_text().split("## Reproduce in a VM\n")[1].split("\n## ")[0]
    guest = re.search(r'^GUEST_DIR = "(.+)"$', VAGRANTFILE.read_text(), re.M)
    assert guest is not None and f"\ncd {guest.group(1)} " in section
    assert "\nsudo vagrant/jupyter.sh " in section
    assert os.access(ROOT / "vagrant/jupyter.sh", os.X_OK)
    for name in ("LGKIT_VM_CPUS", "LGKIT_VM_MEMORY_MB"):
        assert name in section and f'setting("{name}"' in VAGRANTFILE.read_text()
