"""U-Boot images: legacy uImage, FIT, boot script and the boot disk.

Every image is made by U-Boot's own mkimage, the boot disk's partition
table by sfdisk and its FAT filesystem by mtools, all without root. Each command is printed before it
runs. The texts (.its source, boot script) are pure functions of their
arguments, so that they are reproducible; mkimage's timestamps come from
SOURCE_DATE_EPOCH, which the caller sets (the Makefile sets it to 0).

The FIT holds the kernel, the device tree and the test initramfs, each
with a sha256 hash node that U-Boot checks before it boots. The boot disk
is an MBR disk with one bootable FAT partition holding boot.scr and the
FIT, which U-Boot's distro boot finds on the virtio disk.
"""

import os
import pathlib
import shutil
import subprocess
import tempfile

from . import atomic
from .command import run
from .errors import FwembedError

# mkimage's -A names of the kernel architectures fwembed boards use.
MKIMAGE_ARCH = {"arm": "arm", "arm64": "arm64"}
FIT_NAME = "image.fit"
SCRIPT_NAME = "boot.scr"
SECTOR = 512
# The partition starts at 1 MiB, as partitioning tools place it.
PARTITION_START = 2048
# The partition type: FAT32 with LBA addressing.
FAT32_LBA = "c"


def mkimage_arch(board):
    arch = board.settings["arch"]
    if arch not in MKIMAGE_ARCH:
        raise FwembedError(board.folder / "board.cfg",
                           f"arch {arch!r}: no U-Boot image architecture is known for it")
    return MKIMAGE_ARCH[arch]


def kernel_load(board, what):
    """The board's kernel load address, which U-Boot images need."""
    value = board.settings.get("kernel_load")
    if not value:
        raise FwembedError(board.folder / "board.cfg",
                           f"board settings lack kernel_load, which {what} needs")
    return int(value, 0)


def make_uimage(board, kernel, out):
    """Wrap the kernel image as a legacy uImage; load = entry = kernel_load."""
    load = f"0x{kernel_load(board, 'a uImage'):08x}"
    with atomic.replacing(out) as tmp:
        run(["mkimage", "-A", mkimage_arch(board), "-O", "linux", "-T", "kernel", "-C", "none",
             "-a", load, "-e", load, "-n", f"fwembed {board.name}", "-d", str(kernel),
             str(tmp)], "mkimage (uImage)")


def dts_string(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def hash_node(indent):
    return f"{indent}hash-1 {{\n{indent}\talgo = \"sha256\";\n{indent}}};\n"


def its_text(board, kernel, dtb=None, ramdisk=None):
    """The FIT source: kernel, device tree and initramfs, each hashed."""
    arch = mkimage_arch(board)
    load = kernel_load(board, "a FIT image")
    tab = "\t\t\t"
    images = [
        ("kernel", "Linux kernel", kernel, [
            'type = "kernel"', f"arch = \"{arch}\"", 'os = "linux"', 'compression = "none"',
            f"load = <0x{load:08x}>", f"entry = <0x{load:08x}>"]),
    ]
    if dtb:
        images.append(("fdt", "device tree", dtb, [
            'type = "flat_dt"', f"arch = \"{arch}\"", 'compression = "none"']))
    if ramdisk:
        images.append(("ramdisk", "initramfs", ramdisk, [
            'type = "ramdisk"', f"arch = \"{arch}\"", 'os = "linux"',
            'compression = "none"']))
    lines = ["/dts-v1/;\n", "\n", "/ {\n",
             f"\tdescription = {dts_string(f'fwembed {board.name}: ' + board.settings['description'])};\n",
             "\t#address-cells = <1>;\n", "\n", "\timages {\n"]
    for node, description, path, props in images:
        lines.append(f"\t\t{node} {{\n")
        lines.append(f"{tab}description = {dts_string(description)};\n")
        lines.append(f"{tab}data = /incbin/({dts_string(os.path.abspath(path))});\n")
        lines += [f"{tab}{prop};\n" for prop in props]
        lines.append(hash_node(tab))
        lines.append("\t\t};\n")
    lines += ["\t};\n", "\n", "\tconfigurations {\n", '\t\tdefault = "conf-1";\n',
              "\t\tconf-1 {\n",
              f"{tab}description = {dts_string(f'boot {board.name}')};\n"]
    lines += [f"{tab}{node} = \"{node}\";\n" for node, *_ in images]
    lines += ["\t\t};\n", "\t};\n", "};\n"]
    return "".join(lines)


def make_fit(board, kernel, out, dtb=None, ramdisk=None):
    """Write OUT.its and build the FIT OUT from it.

    The image data is placed after the FIT structure, 4 KiB aligned
    (mkimage -E -B), so that U-Boot can use the device tree and the
    initramfs in place.
    """
    out = pathlib.Path(out)
    for path in (kernel, dtb, ramdisk):
        if path and not os.path.isfile(path):
            raise FwembedError(path, "FIT input not found")
    its = out.with_name(out.name + ".its")
    with atomic.replacing(its) as tmp_its, atomic.replacing(out) as tmp:
        tmp_its.write_text(its_text(board, kernel, dtb, ramdisk), encoding="utf-8")
        run(["mkimage", "-E", "-B", "0x1000", "-f", str(tmp_its), str(tmp)], "mkimage (FIT)")


def list_image(path):
    """mkimage -l: U-Boot's own listing of an image."""
    return run(["mkimage", "-l", str(path)], "mkimage -l")


def boot_script_text(board):
    """The U-Boot script: load the FIT from the disk it was found on, check
    every hash (iminfo), and boot it. U-Boot's distro boot sets devtype,
    devnum and distro_bootpart; ramdisk_addr_r is free RAM on every QEMU
    board, where the FIT is used in place."""
    cmdline = board.settings["cmdline"]
    return (f"# fwembed boot script for {board.name}; made by 'fwembed uboot-disk'.\n"
            "echo fwembed: loading " + FIT_NAME + " from ${devtype} ${devnum}:${distro_bootpart}\n"
            "load ${devtype} ${devnum}:${distro_bootpart} ${ramdisk_addr_r} " + FIT_NAME + "\n"
            "iminfo ${ramdisk_addr_r}\n"
            f"setenv bootargs {dts_string(cmdline)}\n"
            "bootm ${ramdisk_addr_r}\n"
            "echo fwembed: bootm failed, resetting\n"
            "reset\n")


def partition_table(sectors, serial):
    """The sfdisk script of the boot disk: an MBR (DOS) label whose disk
    identifier is fixed, so that the disk is reproducible, and one bootable
    FAT partition at 1 MiB."""
    return (f"label: dos\nlabel-id: 0x{serial:08x}\n"
            f"start={PARTITION_START}, size={sectors}, type={FAT32_LBA}, bootable\n")


def make_disk(board, fit, out, serial=0x66776D62):
    """The virtio boot disk: an MBR and a FAT partition with boot.scr and the FIT."""
    out = pathlib.Path(out)
    if not os.path.isfile(fit):
        raise FwembedError(fit, "FIT image not found")
    work = pathlib.Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        cmd = work / "boot.cmd"
        cmd.write_text(boot_script_text(board), encoding="utf-8")
        script = work / SCRIPT_NAME
        run(["mkimage", "-A", mkimage_arch(board), "-O", "linux", "-T", "script", "-C", "none",
             "-n", f"fwembed {board.name}", "-d", str(cmd), str(script)],
            "mkimage (boot script)")
        payload = os.path.getsize(fit) + os.path.getsize(script)
        mib = 1 << 20
        sectors = max(8 * mib, -(-(payload + 2 * mib) // mib) * mib) // SECTOR
        part = work / "fat.img"
        run(["mformat", "-i", str(part), "-C", "-T", str(sectors), "-h", "64", "-s", "32",
             "-H", str(PARTITION_START), "-N", f"{serial:08x}", "-v", "FWEMBED", "::"],
            "mformat")
        fit_copy = work / FIT_NAME
        shutil.copyfile(fit, fit_copy)
        run(["mcopy", "-i", str(part), str(script), str(fit_copy), "::/"], "mcopy")
        with atomic.replacing(out) as tmp:
            os.truncate(tmp, (PARTITION_START + sectors) * SECTOR)
            run(["sfdisk", "--quiet", "--no-reread", "--no-tell-kernel", str(tmp)], "sfdisk",
                stdin=partition_table(sectors, serial))
            with open(tmp, "r+b") as disk:
                disk.seek(PARTITION_START * SECTOR)
                disk.write(part.read_bytes())
        atomic.write_file(out.with_name(SCRIPT_NAME), script.read_bytes())
        atomic.write_file(out.with_name("boot.cmd"), cmd.read_bytes())
    finally:
        subprocess.run(["rm", "-rf", str(work)], check=False)
