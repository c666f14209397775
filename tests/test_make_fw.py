"""make fw: the firmware step runs when, and only when, an input changed.

gen writes fwembed.d, which make reads: the stamp depends on every folder
walked and every source file. The command line is kept in fw.cmd, so a new
COMPRESS= runs the step too. The firmware folder's name has a space, a
quote and a '#', and a file's name a ':' and a '%', which the Makefile
and the depfile must quote for the shell and for make.
"""

import os
import shutil

import pytest

from conftest import ROOT, make

GEN_LINE = "  GEN     build/fwtest-"


@pytest.fixture
def step(tmp_path, request):
    """make fw for a FIRMWARE_DIR in a build directory of the test's own."""
    name = f"fwtest-{request.node.name[:40]}"
    shutil.rmtree(ROOT / "build" / name, ignore_errors=True)
    folder = tmp_path / "vendor's fw #1"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.bin").write_bytes(b"a")
    (folder / "sub" / "b.bin").write_bytes(b"b")
    (folder / "sub" / "c:d%e.bin").write_bytes(b"c")

    def run(*args, target="fw"):
        result = make(target, f"OUT_NAME={name}", f"FIRMWARE_DIR={folder}", *args)
        assert result.returncode == 0, result.stdout + result.stderr
        return GEN_LINE in result.stdout

    run.out = ROOT / "build" / name
    yield folder, run
    shutil.rmtree(ROOT / "build" / name, ignore_errors=True)


def test_odd_names_are_embedded(step):
    """Every file of the folder is embedded under its own name."""
    folder, run = step
    assert run()
    names = (run.out / "fw" / "names.txt").read_text().splitlines()
    assert names == ["a.bin", "sub/b.bin", "sub/c:d%e.bin"]


def test_install_path_with_a_space(step, tmp_path):
    """make firmware_install writes to an INSTALL_FW_PATH with a space in it."""
    _, run = step
    dest = tmp_path / "root fs" / "lib" / "firmware"
    run("INSTALL_FW_ALL=1", f"INSTALL_FW_PATH={dest}", target="firmware_install")
    assert (dest / "sub" / "c:d%e.bin").read_bytes() == b"c"


def test_nothing_changed_runs_nothing(step):
    """A second make fw with the same inputs does not run gen."""
    _, run = step
    assert run()
    assert not run()


def test_changed_source_runs_the_step(step):
    """A source written to (here in a subfolder) runs gen again."""
    folder, run = step
    assert run()
    later = os.stat(folder / "sub" / "b.bin").st_mtime_ns + 10**9
    (folder / "sub" / "b.bin").write_bytes(b"B")
    os.utime(folder / "sub" / "b.bin", ns=(later, later))
    assert run()


def test_added_file_runs_the_step(step):
    """A new file changes its folder, which fwembed.d names."""
    folder, run = step
    assert run()
    (folder / "sub" / "c.bin").write_bytes(b"c")
    later = os.stat(folder / "sub").st_mtime_ns + 10**9
    os.utime(folder / "sub", ns=(later, later))
    assert run()


def test_removed_file_runs_the_step(step):
    """A source that is gone (here the one with ':' and '%' in its name) does
    not stop make; the step runs without it."""
    folder, run = step
    assert run()
    (folder / "sub" / "c:d%e.bin").unlink()
    later = os.stat(folder / "sub").st_mtime_ns + 10**9
    os.utime(folder / "sub", ns=(later, later))
    assert run()
    (folder / "a.bin").unlink()
    later = os.stat(folder).st_mtime_ns + 10**9
    os.utime(folder, ns=(later, later))
    assert run()


def test_new_compress_setting_runs_the_step(step):
    """COMPRESS= is part of the command line that fw.cmd keeps."""
    _, run = step
    assert run()
    assert run("COMPRESS=xz")
    assert not run("COMPRESS=xz")


def test_board_folder_with_spaces(tmp_path):
    """BOARD may name a folder whose path has spaces: make reaches it through
    build/board-links/NAME (spaces made '_') and builds in build/NAME."""
    board = tmp_path / "my boards" / "my board"
    shutil.copytree(ROOT / "boards" / "x86_64", board)
    (board / "firmware.list").write_text(f'"vendor/ramp.bin" {ROOT}/firmware/ramp-256.bin\n')
    out = ROOT / "build" / "my_board"
    shutil.rmtree(out, ignore_errors=True)
    try:
        first = make("fw", f"BOARD={board}")
        assert first.returncode == 0, first.stdout + first.stderr
        assert "  GEN     build/my_board/fw" in first.stdout
        assert (out / "fw" / "names.txt").read_text() == "vendor/ramp.bin\n"
        assert os.readlink(ROOT / "build" / "board-links" / "my_board") == str(board)
        again = make("fw", f"BOARD={board}")
        assert again.returncode == 0 and "  GEN  " not in again.stdout
    finally:
        shutil.rmtree(out, ignore_errors=True)
