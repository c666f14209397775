"""scripts/prepare-kernel: KERNEL_SRC is copied and patched, never modified."""

import fcntl
import os
import subprocess
import time

import pytest

from conftest import ROOT, snapshot

SCRIPT = ROOT / "scripts" / "prepare-kernel"


def prepare(dest, src):
    return subprocess.run([SCRIPT, "6.1", dest, ROOT / "kernel-patch" / "6.1", src],
                          capture_output=True, text=True, check=False)


@pytest.fixture
def fake_tree(tmp_path):
    """Just enough of a tree for the version and cleanliness checks."""
    tree = tmp_path / "linux"
    tree.mkdir()
    (tree / "Makefile").write_text("VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 0\n")
    return tree


def test_wrong_version_is_refused(fake_tree, tmp_path):
    """A tree that is not 6.1 is refused by name."""
    (fake_tree / "Makefile").write_text("VERSION = 5\nPATCHLEVEL = 15\n")
    result = prepare(tmp_path / "dest", fake_tree)
    assert result.returncode == 1
    assert "Linux 5.15, not 6.1" in result.stderr
    assert not (tmp_path / "dest").exists()


def test_configured_tree_is_refused(fake_tree, tmp_path):
    """A tree configured in place cannot serve O= builds; say so."""
    (fake_tree / ".config").write_text("CONFIG_X=y\n")
    result = prepare(tmp_path / "dest", fake_tree)
    assert result.returncode == 1 and "make mrproper" in result.stderr


def test_a_second_run_waits_for_the_first(fake_tree, tmp_path):
    """Runs into one folder take turns: while another holds the lock on
    DEST's parent, the tree is not made; once it lets go, it is."""
    parent = tmp_path / "build"
    parent.mkdir()
    dest = parent / "linux"
    lock = os.open(parent, os.O_RDONLY)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        waiting = subprocess.Popen([SCRIPT, "6.1", dest, "none", fake_tree],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1)
        assert waiting.poll() is None and not dest.exists()
    finally:
        os.close(lock)
    out, err = waiting.communicate(timeout=60)
    assert waiting.returncode == 0, err
    assert out == f"  COPY    {fake_tree} -> {dest}\n"
    assert (dest / "Makefile").read_bytes() == (fake_tree / "Makefile").read_bytes()


def test_patch_failure_names_the_patch(fake_tree, tmp_path):
    """A tree the series does not apply to: the failing patch is named."""
    result = prepare(tmp_path / "dest", fake_tree)
    assert result.returncode == 1
    assert "0001-" in result.stderr and "does not apply" in result.stderr
    assert not (tmp_path / "dest").exists() and not (tmp_path / "dest.tmp").exists()
    assert not list(tmp_path.glob("dest.*")), "the temporary tree was left behind"


@pytest.mark.kernel
def test_kernel_src_is_copied_and_left_untouched(kernel_tree, tmp_path):
    """A real 6.1 tree given as KERNEL_SRC is patched in a copy only."""
    src = tmp_path / "src"
    src.mkdir()
    touched, created = {"Makefile"}, set()
    for patch in (ROOT / "kernel-patch" / "6.1").glob("*.patch"):
        lines = patch.read_text().splitlines()
        for before, line in zip(lines, lines[1:]):
            if line.startswith("+++ b/"):
                (created if before == "--- /dev/null" else touched).add(line[6:])
    touched = sorted(touched - created)
    subprocess.run(["tar", "-C", src, "--strip-components=1", "-xf",
                    "/usr/src/linux-source-6.1.tar.xz",
                    *[f"linux-source-6.1/{path}" for path in touched]], check=True)
    before = snapshot(src)
    result = prepare(tmp_path / "dest", src)
    assert result.returncode == 0, result.stderr
    assert snapshot(src) == before
    assert (tmp_path / "dest" / "include" / "linux" / "builtin_fw.h").is_file()
    assert (tmp_path / "dest" / "drivers/base/firmware_loader/builtin/selftest.c").is_file()
