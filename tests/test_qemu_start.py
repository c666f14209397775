"""Every board's QEMU starts quietly: no host audio backend, no ALSA errors.

Each board's own QEMU command (harness/fwharness/qemu.py fills it in) is
started with its CPUs stopped (-S) and stopped after two seconds: whatever
QEMU printed by then came from setting the machine up.
"""

import re
import subprocess

import pytest

from conftest import ROOT
from fwembedlib.board import load_board
from fwharness.qemu import qemu_command

pytestmark = pytest.mark.kernel
BOARDS = sorted(p for p in (ROOT / "boards").iterdir() if p.is_dir()) + [ROOT / "stress" /
                                                                           "vexpress-a9"]


@pytest.mark.parametrize("folder", BOARDS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_qemu_starts_without_host_sound(folder, tmp_path):
    """The board's QEMU command sets up the machine without trying ALSA or any audio driver."""
    empty, dtb = tmp_path / "empty", tmp_path / "tiny.dtb"
    empty.write_bytes(b"")
    subprocess.run(["dtc", "-I", "dts", "-O", "dtb", "-o", dtb, "-"], input=b"/dts-v1/; / { };",
                   check=True, capture_output=True)
    command = qemu_command(load_board(folder), empty, dtb, initrd=empty, disk=empty) + ["-S"]
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = proc.communicate(timeout=2)
    except subprocess.TimeoutExpired:
        proc.kill()
        output, _ = proc.communicate()
    assert not re.search(r"ALSA|alsa:|audio:|audiodev", output), output
