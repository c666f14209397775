"""The table assembles, links and reads back with every architecture's assembler.

Assemblers differ: x86's separates macro arguments by blanks, ARM's starts a
comment with '@', 64-bit ones need the wider layout. Each test runs with the
GNU toolchain of arm, arm64, x86_64 and riscv64, links with the kernel's
placement (images in .builtin_fw_data, the table sorted by SORT_BY_NAME) and
reads every entry back.
"""

import functools
import json
import lzma
import pathlib
import subprocess
import tarfile

import pytest

from asmlink import TOOLCHAINS, assemble, file_from_series, link, read_table, run, sha256
from conftest import run_fwembed, write_list

COMPRESSION = {"none": 0, "xz": 1, "zstd": 2}
TARBALL = pathlib.Path("/usr/src/linux-source-6.1.tar.xz")
BUILTIN_MAKEFILE = "drivers/base/firmware_loader/builtin/Makefile"
# Two CONFIG_EXTRA_FIRMWARE names; one has a comma, which the rule mangles
# out of its symbols but keeps in the name.
EXTRA_FIRMWARE = {"extra-hello.bin": b"hello from EXTRA_FIRMWARE\n",
                  "vendor,chip-1.bin": bytes(range(251)) * 3}


def include_dir(workdir):
    include = workdir / "include"
    (include / "linux").mkdir(parents=True, exist_ok=True)
    (include / "linux" / "builtin_fw.h").write_text(
        file_from_series("include/linux/builtin_fw.h", workdir))
    return include


def decode(compression, data):
    if compression == "xz":
        return lzma.decompress(data, format=lzma.FORMAT_XZ)
    if compression == "zstd":
        return subprocess.run(["zstd", "-d", "-c"], input=data, capture_output=True,
                              check=True).stdout
    return data


@pytest.mark.parametrize("toolchain", TOOLCHAINS, ids=lambda t: t.arch)
def test_generated_table_reads_back(fwtree, tmp_path, toolchain):
    """Raw, xz and zstd entries, an alias and an awkward name read back intact."""
    (fwtree / "text.bin").write_bytes(b"firmware text, compressible " * 40)
    path = write_list(fwtree, "raw ramp.bin\nalias ramp.bin\nempty empty.bin\n"
                              "packed.xz text.bin compress=xz\n"
                              "packed.zst text.bin compress=zstd\n"
                              '"name, with space" seven.bin\n')
    out = tmp_path / "out"
    result = run_fwembed("gen", "-q", "--list", path, "--out", out)
    assert result.returncode == 0, result.stderr
    manifest = json.loads((out / "manifest.json").read_text())["entries"]

    objects = assemble(out, include_dir(tmp_path), tmp_path / "obj", toolchain)
    table = read_table(link(objects, tmp_path, toolchain), toolchain)

    assert [row[0] for row in table] == [e["name"] for e in manifest]
    for entry, (name, data, size, stored, compression, digest) in zip(manifest, table):
        assert (size, stored) == (entry["size"], entry["stored_size"]), name
        assert compression == COMPRESSION[entry["compression"]], name
        assert sha256(decode(entry["compression"], data)) == entry["sha256"], name
        assert digest.hex() == entry["sha256"], name


@functools.lru_cache(maxsize=None)
def tarball_file(path):
    """One file of the kernel tarball, read once per session (about 20 s)."""
    with tarfile.open(TARBALL) as tar:
        return tar.extractfile(f"linux-source-6.1/{path}").read().decode()


def extra_firmware_gen_s(workdir, fwdir):
    """The .gen.S files that the patched builtin/Makefile writes for
    CONFIG_EXTRA_FIRMWARE, made by make from that Makefile's own rule."""
    base = tarball_file(BUILTIN_MAKEFILE)
    makefile = workdir / "builtin.mk"
    makefile.write_text(file_from_series(BUILTIN_MAKEFILE, workdir, base))
    wrapper = workdir / "wrapper.mk"
    gen = workdir / "gen"
    gen.mkdir()
    # Kbuild's filechk writes through a temporary file; the text is the same.
    wrapper.write_text(f"""obj := {gen}
src := drivers/base/firmware_loader/builtin
srctree := /nonexistent
comma := ,
CONFIG_EXTRA_FIRMWARE := {' '.join(EXTRA_FIRMWARE)}
CONFIG_EXTRA_FIRMWARE_DIR := {fwdir}
filechk = {{ $(filechk_$(1)); }} > $@
.PHONY: FORCE
include {makefile}
""")
    targets = [str(gen / f"{name}.gen.S") for name in EXTRA_FIRMWARE]
    run(["make", "-s", "-f", wrapper, *targets], cwd=workdir)
    return [pathlib.Path(t) for t in targets]


@pytest.mark.kernel
@pytest.mark.parametrize("toolchain", TOOLCHAINS, ids=lambda t: t.arch)
def test_extra_firmware_rule_reads_back(tmp_path, toolchain):
    """CONFIG_EXTRA_FIRMWARE's generated .gen.S assembles and reads back,
    beside a generated table, in one sorted table."""
    fwdir = tmp_path / "extra"
    fwdir.mkdir()
    for name, data in EXTRA_FIRMWARE.items():
        (fwdir / name).write_bytes(data)
    sources = extra_firmware_gen_s(tmp_path, fwdir)
    include = include_dir(tmp_path)
    objects = assemble(fwdir, include, tmp_path / "obj", toolchain, sources=sources)

    (fwdir / "generated.bin").write_bytes(b"generated")
    path = write_list(fwdir, "a-generated generated.bin\n")
    out = tmp_path / "out"
    assert run_fwembed("gen", "-q", "--list", path, "--out", out).returncode == 0
    objects += assemble(out, include, tmp_path / "obj-gen", toolchain)

    table = read_table(link(objects, tmp_path, toolchain), toolchain)
    assert [(row[0], row[1], row[4], row[5]) for row in table] == [
        ("a-generated", b"generated", 0, bytes.fromhex(sha256(b"generated"))),
        ("extra-hello.bin", EXTRA_FIRMWARE["extra-hello.bin"], 0, None),
        ("vendor,chip-1.bin", EXTRA_FIRMWARE["vendor,chip-1.bin"], 0, None)]
