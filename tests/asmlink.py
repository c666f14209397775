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
LINKER_SCRIPT = f"""
SECTIONS {{
  . = {BASE:#x};
  .rodata : {{ *(.rodata) *(.rodata.*) }}
  .builtin_fw : ALIGN(8) {{
    __start_builtin_fw = .;
    KEEP(*(.builtin_fw))
    __end_builtin_fw = .;
  }}
  /DISCARD/ : {{ *(.ARM.attributes) }}
}}
"""


def header_from_series():
    """The text of <linux/builtin_fw.h> as the patch series adds it."""
    for patch in sorted((ROOT / "kernel-patch").glob("*.patch")):
        lines = patch.read_text().splitlines()
        for i, line in enumerate(lines):
            if line == f"+++ b/{HEADER}":
                body = []
                for hunk_line in lines[i + 2:]:
                    if not hunk_line.startswith("+"):
                        break
                    body.append(hunk_line[1:])
                return "\n".join(body) + "\n"
    raise AssertionError(f"{HEADER} not found in kernel-patch/")


def run(cmd, cwd):
    result = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, f"{' '.join(map(str, cmd))}\n{result.stderr}"
    return result.stdout


def assemble_and_link(outdir, workdir):
    """Assemble every .S in outdir, link them, return the ELF path."""
    include = workdir / "include"
    (include / "linux").mkdir(parents=True, exist_ok=True)
    (include / HEADER.split("/", 1)[1]).write_text(header_from_series())
    objects = []
    for source in sorted(pathlib.Path(outdir).glob("*.S")):
        obj = workdir / (source.stem + ".o")
        run([f"{CROSS}gcc", "-D__ASSEMBLY__", "-I", include, f"-Wa,-I{outdir}",
             "-c", source, "-o", obj], cwd=workdir)
        objects.append(obj)
    script = workdir / "fw.lds"
    script.write_text(LINKER_SCRIPT)
    elf = workdir / "fw.elf"
    run([f"{CROSS}ld", "-T", script, "-o", elf, *objects], cwd=workdir)
    return elf


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
