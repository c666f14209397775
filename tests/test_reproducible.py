"""Reproducible builds: the same inputs give the same bytes wherever they are built.

Two generator runs from one list, in two output directories and from two
working directories, must write the same files, and those must assemble to
the same objects. Then the x86_64 board's kernel (build/x86_64, the smallest kernel of the boards)
is compared with a clean build of the same inputs made later in another
build directory (OUT_NAME=repro), whose firmware loader directory is
compiled without ccache: the generated files, the firmware objects Kbuild
assembled from them, vmlinux and bzImage must be identical byte for byte.
"""

import os
import pathlib
import shutil

import pytest

from asmlink import assemble_and_link
from conftest import ROOT, build_group, make, run_command, run_fwembed, write_list
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
@build_group("x86_64")
def test_two_kernel_builds_are_identical():
    """A clean build in build/repro equals the board's: fw files, objects, vmlinux, bzImage."""
    board = run_command("make kernel BOARD=x86_64")
    assert board.returncode == 0, board.stdout[-3000:] + board.stderr[-3000:]
    repro_dir = ROOT / "build" / "repro"
    shutil.rmtree(repro_dir, ignore_errors=True)
    repro = run_command("make kernel BOARD=x86_64 OUT_NAME=repro")
    assert repro.returncode == 0, repro.stdout[-3000:] + repro.stderr[-3000:]
    # ccache served that build the board's objects, which would make them
    # equal whatever the compiler does. Compile the loader's directory (the
    # series' code and the generated table) again with ccache bypassed, and
    # link again; the rest of the kernel is upstream's to keep reproducible.
    loader = repro_dir / "linux" / "drivers" / "base" / "firmware_loader"
    compiled = sorted(loader.rglob("*.o"))
    assert any(o.name == "table.o" for o in compiled)
    for obj in compiled:
        obj.unlink()
    fresh = make("kernel", "BOARD=x86_64", "OUT_NAME=repro", CCACHE_DISABLE="1")
    assert fresh.returncode == 0, fresh.stdout[-3000:] + fresh.stderr[-3000:]
    assert "CC      drivers/base/firmware_loader/builtin/main.o" in fresh.stdout
    assert all(obj.exists() for obj in compiled)

    builds = [ROOT / "build" / "x86_64", repro_dir]
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
    for image in ("vmlinux", "arch/x86/boot/bzImage"):
        first, second = ((b / "linux" / image).read_bytes() for b in builds)
        assert first == second, image
    assert run_command("cmp build/x86_64/linux/vmlinux build/repro/linux/vmlinux") \
        .returncode == 0
    shutil.rmtree(repro_dir)
