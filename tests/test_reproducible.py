"""Reproducible builds: the same inputs give the same bytes wherever they are built.

Two generator runs from one list, in two output directories and from two
working directories, must write the same files, and those must assemble to
the same objects. Then docs/reproducibility.md's script rebuilds the virt64
board's kernel in another build directory (OUT_NAME=repro): a copy of
build/virt64 without its generated files, its .config and the firmware
loader's objects, which Kbuild makes again there, compiling the loader
without ccache. The configuration, the generated files, the firmware
objects, vmlinux and Image must be identical byte for byte.
"""

import os
import pathlib
import shutil

import pytest

from asmlink import assemble_and_link
from conftest import ROOT, build_group, run_command, run_fwembed, write_list
from doccmds import doc_script
from fwembedlib import emit

# Outputs that name their own location, so they differ by design: the make
# dependency file names its target by absolute path; the stamp is empty; gen's
# record of its outputs names their inodes and timestamps.
LOCATION_BOUND = {"fwembed.d", ".fwembed-stamp", ".fwembed-outputs"}
GENERATED = pathlib.PurePath("drivers/base/firmware_loader/builtin/generated")


def contents(folder, pattern="*"):
    """{relative path: bytes} of the files below folder matching pattern."""
    folder = pathlib.Path(folder)
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob(pattern))
            if p.is_file() and p.name not in LOCATION_BOUND}


@pytest.fixture
def two_runs(fwtree, tmp_path):
    """Generate one list twice: other output and working directories, other source times."""
    path = write_list(fwtree, "a one.bin license=MIT\n\"b c\" ramp.bin\nd ramp.bin\n"
                              "e empty.bin\nfs/f seven.bin install=yes\n")
    outs = [tmp_path / "first" / "fw", tmp_path / "second" / "deeper" / "fw"]
    for out, cwd, mtime in zip(outs, [fwtree, tmp_path], [10**18, 2 * 10**18]):
        os.utime(fwtree / "one.bin", ns=(mtime, mtime))
        result = run_fwembed("gen", "-q", "--list", os.path.relpath(path, cwd), "--out", out,
                             cwd=cwd)
        assert result.returncode == 0, result.stderr
    return outs


def test_generated_files_are_identical(two_runs):
    """.S files, manifest.json, objects.mk and names.txt are byte-identical."""
    first, second = (contents(out) for out in two_runs)
    assert sorted(first) == sorted(second)
    assert {"table.S", "manifest.json", "objects.mk", "names.txt"} <= set(first)
    for name in first:
        assert first[name] == second[name], name


def test_assembled_objects_are_identical(two_runs, tmp_path):
    """The cross assembler turns both output directories into identical objects."""
    elfs = [assemble_and_link(out, tmp_path / f"asm{n}") for n, out in
            enumerate(two_runs)]
    first, second = (contents(elf.parent, "*.o") for elf in elfs)
    assert len(first) == len(list(two_runs[0].glob("*.S")))
    assert first == second
    assert elfs[0].read_bytes() == elfs[1].read_bytes()


@pytest.mark.kernel
@build_group("virt64")
def test_two_kernel_builds_are_identical():
    """The page's rebuild in build/repro equals build/virt64: .config, fw
    files, firmware objects, vmlinux, Image."""
    result = run_command(doc_script("reproducibility.md"))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    # Made again in build/repro, not copied: the configuration, the
    # generator's files, and the loader's objects (the series' code and the
    # generated table) compiled with ccache bypassed. The rest of the kernel
    # is upstream's to keep reproducible.
    assert "KCONFIG build/repro/linux/.config" in result.stdout
    assert "GEN     build/repro/fw" in result.stdout
    assert "CC      drivers/base/firmware_loader/builtin/main.o" in result.stdout
    assert "AS      drivers/base/firmware_loader/builtin/generated/table.o" in result.stdout
    # Linked again, so that the images compared are not the copies.
    assert "LD      vmlinux\n" in result.stdout
    assert "OBJCOPY arch/arm64/boot/Image" in result.stdout

    builds = [ROOT / "build" / "virt64", ROOT / "build" / "repro"]
    configs = [(b / "linux" / ".config").read_text() for b in builds]
    # Named from each kernel build directory, so the two configurations match.
    assert 'CONFIG_FW_LOADER_GENERATED_DIR="../fw"' in configs[0]
    assert configs[0] == configs[1]

    assert contents(builds[0] / "fw") == contents(builds[1] / "fw")
    # The objects objects.mk links in; older builds may have left others.
    linked = emit.objects_in_mk((builds[0] / "fw" / "objects.mk").read_text())
    assert "table.o" in linked and len(linked) > 1
    for name in linked:
        first, second = ((b / "linux" / GENERATED / name).read_bytes() for b in builds)
        assert first == second, name
    for image in ("vmlinux", "arch/arm64/boot/Image"):
        first, second = ((b / "linux" / image).read_bytes() for b in builds)
        assert first == second, image
    shutil.rmtree(builds[1])
