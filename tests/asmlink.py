"""Assemble generated output with the real cross toolchain and read it back.

The header comes from the kernel patch series itself, so these tests check
the generator against the macro the kernel really uses.
"""

import hashlib
import pathlib
import struct
import subprocess

from conftest import ROOT

CROSS = "arm-linux-gnueabi-"
HEADER = "include/linux/builtin_fw.h"
BASE = 0x10000
# The same placement as FW_LOADER_BUILT_IN_DATA in vmlinux.lds.h: the linker
# sorts the per-entry sections by name.
LINKER_SCRIPT = f"""
SECTIONS {{
  . = {BASE:#x};
  .rodata : {{ *(.rodata) *(.rodata.*) }}
  .builtin_fw : ALIGN(8) {{
    __start_builtin_fw = .;
    KEEP(*(SORT_BY_NAME(.builtin_fw.*)))
    __end_builtin_fw = .;
  }}
  /DISCARD/ : {{ *(.ARM.attributes) }}
}}
"""


def header_from_series(workdir):
    """The text of <linux/builtin_fw.h> after the whole patch series.

    Every patch's hunks for the header are applied in series order, with
    the real patch tool, to an empty tree.
    """
    tree = pathlib.Path(workdir) / "header-tree"
    tree.mkdir(parents=True, exist_ok=True)
    series = (ROOT / "kernel-patch" / "series").read_text().split()
    for name in series:
        text = (ROOT / "kernel-patch" / name).read_text()
        for chunk in text.split("\ndiff --git ")[1:]:
            if chunk.startswith(f"a/{HEADER} b/{HEADER}"):
                diff = "diff --git " + chunk.split("\n-- \n")[0]
                subprocess.run(["patch", "-p1", "-s", "-d", str(tree)], input=diff,
                               text=True, check=True)
    return (tree / HEADER).read_text()


def run(cmd, cwd):
    result = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, f"{' '.join(map(str, cmd))}\n{result.stderr}"
    return result.stdout


def assemble_and_link(outdirs, workdir):
    """Assemble every .S in the output directories, link them, return the ELF."""
    if isinstance(outdirs, (str, pathlib.Path)):
        outdirs = [outdirs]
    include = workdir / "include"
    (include / "linux").mkdir(parents=True, exist_ok=True)
    (include / HEADER.split("/", 1)[1]).write_text(header_from_series(workdir))
    objects = []
    for n, outdir in enumerate(outdirs):
        objects += assemble(outdir, include, workdir / f"obj{n}")
    script = workdir / "fw.lds"
    script.write_text(LINKER_SCRIPT)
    elf = workdir / "fw.elf"
    run([f"{CROSS}ld", "-T", script, "-o", elf, *objects], cwd=workdir)
    return elf


def assemble(outdir, include, objdir):
    objdir.mkdir(parents=True, exist_ok=True)
    objects = []
    for source in sorted(pathlib.Path(outdir).glob("*.S")):
        obj = objdir / (source.stem + ".o")
        run([f"{CROSS}gcc", "-D__ASSEMBLY__", "-I", include, f"-Wa,-I{outdir}",
             "-c", source, "-o", obj], cwd=objdir)
        objects.append(obj)
    return objects


def read_table(elf):
    """Return [(name, data bytes, size, stored_size, compression, digest)]."""
    symbols = {}
    for line in run([f"{CROSS}nm", elf], cwd=elf.parent).splitlines():
        addr, _, name = line.split()
        symbols[name] = int(addr, 16)
    image_path = elf.with_suffix(".bin")
    run([f"{CROSS}objcopy", "-O", "binary", elf, image_path], cwd=elf.parent)
    image = image_path.read_bytes()

    def at(addr, length):
        return image[addr - BASE:addr - BASE + length]

    def cstring(addr):
        end = image.index(b"\0", addr - BASE)
        return image[addr - BASE:end].decode("ascii")

    table = []
    start, end = symbols["__start_builtin_fw"], symbols["__end_builtin_fw"]
    assert (end - start) % 24 == 0
    for addr in range(start, end, 24):
        name, data, size, stored, comp, digest = struct.unpack("<6I", at(addr, 24))
        table.append((cstring(name), at(data, stored), size, stored, comp,
                      at(digest, 32) if digest else None))
    return table


def sha256(data):
    return hashlib.sha256(data).hexdigest()
