"""Directory mode: names from paths, symlinks as aliases, refusals."""

import os

import pytest

from fwembedlib.errors import FwembedError
from fwembedlib.scan import scan_dir


def test_names_are_relative_paths_sorted(fwtree):
    """Every regular file is embedded, named by its path below the directory."""
    (fwtree / "sub" / "deeper").mkdir(parents=True)
    (fwtree / "sub" / "deeper" / "x.fw").write_bytes(b"x")
    names = [e.name for e in scan_dir(fwtree)]
    assert names == ["empty.bin", "one.bin", "ramp.bin", "seven.bin", "sub/deeper/x.fw"]


def test_symlink_inside_is_an_alias(fwtree):
    """A symlink to a file inside the directory shares the target's source."""
    os.symlink("ramp.bin", fwtree / "alias.bin")
    entries = {e.name: e for e in scan_dir(fwtree)}
    assert entries["alias.bin"].source == "ramp.bin"
    assert entries["alias.bin"].path == entries["ramp.bin"].path


def test_symlink_escaping_is_refused(fwtree, tmp_path):
    """A symlink that leaves the directory is an error naming the link."""
    (tmp_path / "outside.bin").write_bytes(b"secret")
    os.symlink(tmp_path / "outside.bin", fwtree / "escape.bin")
    with pytest.raises(FwembedError, match=r"escape.bin: error: symlink points outside"):
        scan_dir(fwtree)


def test_symlink_loop_is_refused(fwtree):
    """A symlink loop is an error, not a hang."""
    os.symlink("loop-b", fwtree / "loop-a")
    os.symlink("loop-a", fwtree / "loop-b")
    with pytest.raises(FwembedError, match=r"loop-a: error: symlink cannot be resolved"):
        scan_dir(fwtree)


def test_dangling_symlink_is_refused(fwtree):
    """A symlink to nothing is an error."""
    os.symlink("nowhere.bin", fwtree / "dangling.bin")
    with pytest.raises(FwembedError, match=r"dangling.bin: error: symlink cannot be resolved"):
        scan_dir(fwtree)


def test_directory_symlink_is_refused(fwtree):
    """Symlinked directories are not followed."""
    (fwtree / "d").mkdir()
    os.symlink("d", fwtree / "dlink")
    with pytest.raises(FwembedError, match=r"dlink: error: symlink to a directory"):
        scan_dir(fwtree)


def test_fifo_is_refused(fwtree):
    """Only regular files can be embedded."""
    os.mkfifo(fwtree / "pipe")
    with pytest.raises(FwembedError, match=r"pipe: error: not a regular file"):
        scan_dir(fwtree)


def test_bad_file_name_is_refused(fwtree):
    """A file whose path is not a valid firmware name is an error naming it."""
    (fwtree / 'q"uote.bin').write_bytes(b"q")
    with pytest.raises(FwembedError, match=r"forbidden character"):
        scan_dir(fwtree)


def test_missing_and_empty_directories(tmp_path):
    """A missing or empty directory is an error."""
    with pytest.raises(FwembedError, match="no such directory"):
        scan_dir(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FwembedError, match="holds no files"):
        scan_dir(tmp_path / "empty")
