"""Two kernels, one firmware list: KERNEL=6.1|6.12 picks the series, the tree and
the build directories; KERNEL_SRC's version comes from its Makefile; a board
boots on 6.12 with the loader's own FW_LOADER_DEBUG digests checked too."""

import re

import pytest

from conftest import (CHECK_KERNELS, DEFAULT_KERNEL, KERNELS, ROOT, build_group, make, out_name,
                      run_command)
from fwembedlib.manifest import read as read_manifest
from fwharness import extrafw

BUILD = ROOT / "build"


def fake_tree(tmp_path, version, patchlevel):
    tree = tmp_path / f"linux-{version}.{patchlevel}"
    tree.mkdir()
    (tree / "Makefile").write_text(f"VERSION = {version}\nPATCHLEVEL = {patchlevel}\n")
    return tree


@pytest.mark.parametrize("kernel", [pytest.param(k, marks=build_group("virt64", k))
                                    for k in KERNELS])
def test_kernel_picks_its_tree_series_and_build_directory(kernel):
    """make -n shows each kernel's own tree and series, and a build directory
    that the default kernel's does not collide with."""
    result = make("-n", "tree", "fw", "BOARD=virt64", f"KERNEL={kernel}")
    assert result.returncode == 0, result.stderr
    assert f"scripts/prepare-kernel {kernel} {BUILD}/linux-{kernel} " \
        f"{ROOT}/kernel-patch/{kernel}" in result.stdout
    out = "virt64" if kernel == "6.1" else f"virt64-{kernel}"
    assert f" --out {BUILD}/{out}/fw" in result.stdout
    assert f"linux-source-{kernel}" in result.stdout


def test_kernel_src_version_comes_from_its_makefile(tmp_path):
    """KERNEL_SRC alone picks the kernel its Makefile names."""
    result = make("-n", "tree", f"KERNEL_SRC={fake_tree(tmp_path, 6, 12)}")
    assert result.returncode == 0, result.stderr
    assert f"scripts/prepare-kernel 6.12 {BUILD}/linux-6.12 " in result.stdout
    assert "linux-source-6.12" not in result.stdout


def test_kernel_src_of_another_version_is_refused(tmp_path):
    """KERNEL=6.1 with a 6.12 tree, or a tree of a kernel with no series,
    stops make before anything runs, saying why."""
    tree = fake_tree(tmp_path, 6, 12)
    result = make("tree", "KERNEL=6.1", f"KERNEL_SRC={tree}")
    assert result.returncode == 2
    assert f"KERNEL_SRC={tree} is Linux 6.12, not KERNEL=6.1" in result.stderr
    result = make("tree", f"KERNEL_SRC={fake_tree(tmp_path, 5, 15)}")
    assert result.returncode == 2
    assert "KERNEL=5.15: no series in kernel-patch/5.15/ (there are: 6.1 6.12)" in result.stderr


def test_tree_without_a_version_is_refused(tmp_path):
    """A KERNEL_SRC whose Makefile names no version is no kernel tree."""
    (tmp_path / "Makefile").write_text("all:\n")
    result = make("tree", f"KERNEL_SRC={tmp_path}")
    assert result.returncode == 2
    assert "not a kernel source tree" in result.stderr


def board_out(board, kernel):
    """make's build directory for the board on the kernel."""
    return BUILD / out_name(board, kernel)


def boots_with_every_entry_verified(board, kernel):
    """make run BOARD=board KERNEL=kernel: the kernel's series boots the board,
    every entry passes, and where the kernel prints the loader's own
    FW_LOADER_DEBUG digests, every entry passes there too. The verdicts."""
    result = run_command(f"make run BOARD={board} KERNEL={kernel}")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    out = board_out(board, kernel)
    assert f"Linux version {kernel}." in (out / "console.log").read_text(errors="replace")
    manifest = read_manifest(out / "fw" / "manifest.json")
    assert re.search(r" checks passed, 0 failed", result.stdout)
    return result.stdout, manifest


def loader_digest_names(stdout):
    return re.findall(r"^  PASS .*\[FW_LOADER_DEBUG\] (.*)$", stdout, re.M)


def built_in_names(board, kernel, manifest):
    """The manifest's names and those that the board's CONFIG_EXTRA_FIRMWARE
    builds in, as the harness reads them from its .config, sorted."""
    extra = extrafw.expected_entries(board_out(board, kernel) / "linux" / ".config",
                                     BUILD / f"linux-{kernel}")
    return sorted([e.name for e in manifest] + [e.name for e in extra])


@pytest.mark.kernel
@build_group("virt64", "6.12")
def test_virt64_on_6_12_verifies_every_entry_and_the_loaders_digests():
    """make run KERNEL=6.12: the 6.12 series boots virt64 and every entry
    passes, then again in the loader's own FW_LOADER_DEBUG lines, for raw,
    compressed and filesystem entries alike."""
    stdout, manifest = boots_with_every_entry_verified("virt64", "6.12")
    assert sorted(loader_digest_names(stdout)) == built_in_names("virt64", "6.12", manifest)
    kinds = {("filesystem" if not e.builtin else e.compression) for e in manifest}
    assert {"none", "xz", "zstd", "filesystem"} <= kinds
    checks = 2 * len(manifest) + 4
    assert f"{checks} checks passed, 0 failed" in stdout


# Every board on every kernel of CHECK_KERNELS but the default, whose boots
# test_boards covers; virt64 on 6.12 is the test above.
OTHER_BOARD_BOOTS = [(kernel, board.name) for kernel in CHECK_KERNELS if kernel != DEFAULT_KERNEL
                     for board in sorted((ROOT / "boards").iterdir())
                     if (board / "board.cfg").is_file()
                     and (kernel, board.name) != ("6.12", "virt64")]


@pytest.mark.kernel
@pytest.mark.parametrize("kernel, board", [pytest.param(k, b, marks=build_group(b, k))
                                           for k, b in OTHER_BOARD_BOOTS])
def test_board_boots_on_the_kernel_with_every_entry_verified(kernel, board):
    """make run BOARD=board KERNEL=kernel passes every check, the loader's
    FW_LOADER_DEBUG digest of every entry among them, and of every file the
    board builds in through CONFIG_EXTRA_FIRMWARE (x86_64's). A U-Boot
    board's kernel adds the dynamic debug parameters to its boot script's
    command line itself."""
    stdout, manifest = boots_with_every_entry_verified(board, kernel)
    assert sorted(loader_digest_names(stdout)) == built_in_names(board, kernel, manifest)
