"""Assemble generated output with the real cross toolchain and read it back.

The header comes from the kernel patch series itself, so these tests check
the generator against the macro the kernel really uses.
"""

import dataclasses
import hashlib
import pathlib
import struct
import subprocess

from conftest import ROOT

HEADER = "include/linux/builtin_fw.h"
BASE = 0x10000
WORDS = 6  # fields of struct builtin_fw, one machine word each


@dataclasses.dataclass(frozen=True)
class Toolchain:
    """A Debian cross toolchain (or the host's), by its command prefix."""
    arch: str
    prefix: str
    word: int  # bytes in a pointer and an unsigned long

    def tool(self, name):
        return f"{self.prefix}{name}"


# Every architecture Debian packages a Linux cross toolchain for that the
# project's boards or checks use: arm and arm64 boards, x86_64 (the host's
# own gcc), riscv64 as one more 64-bit little-endian assembler.
ARM = Toolchain("arm", "arm-linux-gnueabi-", 4)
CROSS = ARM.prefix
TOOLCHAINS = [ARM, Toolchain("arm64", "aarch64-linux-gnu-", 8),
              Toolchain("x86_64", "x86_64-linux-gnu-", 8),
              Toolchain("riscv64", "riscv64-linux-gnu-", 8)]

# The same placement as FW_LOADER_BUILT_IN_DATA in vmlinux.lds.h: the
# images in a section of their own, then the table, whose per-entry
# sections the linker sorts by name; and as FW_LOADER_BUILT_IN_INIT_DATA
# in the kernel's init data: the init-only table, then its images.
LINKER_SCRIPT = f"""
SECTIONS {{
  . = {BASE:#x};
  .rodata : {{ *(.rodata) *(.rodata.*) }}
  .builtin_fw_data : {{
    __start_builtin_fw_data = .;
    KEEP(*(.builtin_fw_data))
    __end_builtin_fw_data = .;
  }}
  .builtin_fw : ALIGN(8) {{
    __start_builtin_fw = .;
    KEEP(*(SORT_BY_NAME(.builtin_fw.*)))
    __end_builtin_fw = .;
  }}
  .init.data : ALIGN(8) {{
    *(.init.rodata)
    . = ALIGN(8);
    __start_builtin_fw_init = .;
    KEEP(*(SORT_BY_NAME(.builtin_fw_init.*)))
    __end_builtin_fw_init = .;
    __start_builtin_fw_init_data = .;
    KEEP(*(.builtin_fw_init_data))
    __end_builtin_fw_init_data = .;
  }}
  /DISCARD/ : {{ *(.ARM.attributes) *(.riscv.attributes) *(.note.*) }}
}}
"""


def file_from_series(path, workdir, base=None):
    """The text of a kernel file after the whole patch series.

    Every patch's hunks for the file are applied in series order, with the
    real patch tool, to ``base`` (the file as the kernel tarball has it), or
    to nothing for a file the series creates.
    """
    tree = pathlib.Path(workdir) / "series-tree"
    target = tree / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if base is not None:
        target.write_text(base)
    patches = ROOT / "kernel-patch" / "6.1"
    series = (patches / "series").read_text().split()
    for name in series:
        text = (patches / name).read_text()
        for chunk in text.split("\ndiff --git ")[1:]:
            if chunk.startswith(f"a/{path} b/{path}"):
                diff = "diff --git " + chunk.split("\n-- \n")[0]
                subprocess.run(["patch", "-p1", "-s", "-d", str(tree)], input=diff,
                               text=True, check=True)
    return target.read_text()


def header_from_series(workdir):
    """The text of <linux/builtin_fw.h> after the whole patch series."""
    return file_from_series(HEADER, workdir)


def run(cmd, cwd):
    result = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, f"{' '.join(map(str, cmd))}\n{result.stderr}"
    return result.stdout


def assemble_and_link(outdirs, workdir, toolchain=ARM):
    """Assemble every .S in the output directories, link them, return the ELF."""
    if isinstance(outdirs, (str, pathlib.Path)):
        outdirs = [outdirs]
    include = workdir / "include"
    (include / "linux").mkdir(parents=True, exist_ok=True)
    (include / HEADER.split("/", 1)[1]).write_text(header_from_series(workdir))
    objects = []
    for n, outdir in enumerate(outdirs):
        objects += assemble(outdir, include, workdir / f"obj{n}", toolchain)
    return link(objects, workdir, toolchain)


def link(objects, workdir, toolchain=ARM):
    """Link objects with the kernel's placement of the table; return the ELF."""
    script = workdir / "fw.lds"
    script.write_text(LINKER_SCRIPT)
    elf = workdir / "fw.elf"
    run([toolchain.tool("ld"), "-T", script, "-o", elf, *objects], cwd=workdir)
    return elf


def assemble(outdir, include, objdir, toolchain=ARM, sources=None):
    """Assemble the .S files of outdir (or those given) as Kbuild would."""
    objdir.mkdir(parents=True, exist_ok=True)
    objects = []
    for source in sources or sorted(pathlib.Path(outdir).glob("*.S")):
        obj = objdir / (source.stem + ".o")
        run([toolchain.tool("gcc"), "-D__ASSEMBLY__", "-I", include, f"-Wa,-I{outdir}",
             "-c", source, "-o", obj], cwd=objdir)
        objects.append(obj)
    return objects


def read_table(elf, toolchain=ARM, lifetime="kernel"):
    """Return [(name, data bytes, size, stored_size, compression, digest)]
    of the table, or with lifetime="init" of the init-only table.

    Every entry's data must lie in the built-in data section, as the
    kernel requires; an init-only entry's may also lie in the init-only
    data section.
    """
    symbols = {}
    for line in run([toolchain.tool("nm"), elf], cwd=elf.parent).splitlines():
        addr, _, name = line.split()
        symbols[name] = int(addr, 16)
    image_path = elf.with_suffix(".bin")
    run([toolchain.tool("objcopy"), "-O", "binary", elf, image_path], cwd=elf.parent)
    image = image_path.read_bytes()

    def at(addr, length):
        return image[addr - BASE:addr - BASE + length]

    def cstring(addr):
        end = image.index(b"\0", addr - BASE)
        return image[addr - BASE:end].decode("ascii")

    entry = WORDS * toolchain.word
    layout = "<" + ("I" if toolchain.word == 4 else "Q") * WORDS
    sections = [(symbols["__start_builtin_fw_data"], symbols["__end_builtin_fw_data"])]
    table = "builtin_fw"
    if lifetime == "init":
        table = "builtin_fw_init"
        sections.append((symbols["__start_builtin_fw_init_data"],
                         symbols["__end_builtin_fw_init_data"]))
    start, end = symbols[f"__start_{table}"], symbols[f"__end_{table}"]
    table = []
    assert (end - start) % entry == 0
    for addr in range(start, end, entry):
        name, data, size, stored, comp, digest = struct.unpack(layout, at(addr, entry))
        assert any(first <= data and data + stored <= last for first, last in sections), \
            cstring(name)
        table.append((cstring(name), at(data, stored), size, stored, comp,
                      at(digest, 32) if digest else None))
    return table


def sha256(data):
    return hashlib.sha256(data).hexdigest()
