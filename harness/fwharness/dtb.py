"""The device tree QEMU makes for a board's machine (-machine dumpdtb).

Boards whose dtb setting is 'qemu' get their device tree this way, for the
FIT that U-Boot boots. The board's own QEMU command is used, so the tree
matches the machine the kernel boots on; QEMU writes the tree and exits
without running the guest.
"""

import os
import pathlib

from fwembedlib import atomic
from fwembedlib.command import run
from fwembedlib.errors import FwembedError

from .qemu import qemu_command


def dump_qemu_dtb(board, out, kernel=None, initrd=None):
    """Write the tree of ``board``'s QEMU machine to ``out``."""
    out = pathlib.Path(out)
    empty_disk = atomic.temp_next_to(out.with_name("empty-disk.img"))
    try:
        with atomic.replacing(out) as tmp:
            command = qemu_command(board, kernel or "", "", initrd=initrd, disk=empty_disk)
            run(command + ["-machine", f"dumpdtb={tmp}"], "QEMU dumpdtb")
            if os.path.getsize(tmp) == 0:
                raise FwembedError(out, "QEMU wrote an empty device tree")
    finally:
        empty_disk.unlink(missing_ok=True)
