"""fwembed install and make firmware_install: files, modes, atomicity, errors."""

import os
import stat
import subprocess

import pytest

from conftest import FWEMBED, PYTHON, ROOT, build_group, make, run_fwembed, snapshot, write_list
from fwembedlib.fwlist import read_list

LIST = "a one.bin\nfs/b seven.bin install=yes\n\"fs/sub/c d\" ramp.bin install=yes\n"


def install(*args):
    result = run_fwembed("install", *args)
    assert result.returncode == 0, result.stderr
    return result


def files(folder):
    return {k: v[0] for k, v in snapshot(folder).items()}


def test_installs_the_install_entries_only(fwtree, tmp_path):
    """Entries marked install=yes, and only those, land at DEST/NAME."""
    install("--list", write_list(fwtree, LIST), "--dest", tmp_path / "dest")
    assert files(tmp_path / "dest") == {"fs/b": b"1234567", "fs/sub/c d": bytes(range(256))}


def test_all_installs_every_entry(fwtree, tmp_path):
    """--all installs built-in entries too."""
    install("--list", write_list(fwtree, LIST), "--dest", tmp_path / "dest", "--all")
    assert sorted(files(tmp_path / "dest")) == ["a", "fs/b", "fs/sub/c d"]


def test_modes_ignore_the_umask(fwtree, tmp_path):
    """Files get mode 0644 and new directories 0755, whatever the umask."""
    subprocess.run([PYTHON, FWEMBED, "install", "--list", write_list(fwtree, LIST),
                    "--dest", tmp_path / "dest"], check=True, capture_output=True,
                   preexec_fn=lambda: os.umask(0o077))
    modes = {p.relative_to(tmp_path).as_posix(): stat.S_IMODE(p.stat().st_mode)
             for p in tmp_path.joinpath("dest").rglob("*")}
    assert modes == {"dest/fs": 0o755, "dest/fs/sub": 0o755,
                     "dest/fs/b": 0o644, "dest/fs/sub/c d": 0o644}
    assert stat.S_IMODE((tmp_path / "dest").stat().st_mode) == 0o755


def test_prints_one_install_line_per_file(fwtree, tmp_path):
    """Each file written is named on a Kbuild-style INSTALL line."""
    result = install("--list", write_list(fwtree, LIST), "--dest", tmp_path / "dest")
    assert result.stdout == (f"  INSTALL {tmp_path}/dest/fs/b\n"
                             f"  INSTALL {tmp_path}/dest/fs/sub/c d\n")


def test_second_run_rewrites_nothing(fwtree, tmp_path):
    """Files that already hold the right bytes and mode are left alone."""
    path = write_list(fwtree, LIST)
    install("--list", path, "--dest", tmp_path / "dest")
    before = snapshot(tmp_path / "dest")
    result = install("--list", path, "--dest", tmp_path / "dest")
    assert result.stdout == ""
    assert snapshot(tmp_path / "dest") == before


def test_wrong_mode_is_reinstalled(fwtree, tmp_path):
    """An installed file with another mode is replaced with a 0644 one."""
    path = write_list(fwtree, LIST)
    install("--list", path, "--dest", tmp_path / "dest")
    os.chmod(tmp_path / "dest" / "fs" / "b", 0o600)
    result = install("--list", path, "--dest", tmp_path / "dest")
    assert result.stdout == f"  INSTALL {tmp_path}/dest/fs/b\n"
    assert stat.S_IMODE((tmp_path / "dest" / "fs" / "b").stat().st_mode) == 0o644


def test_changed_file_is_replaced_by_rename(fwtree, tmp_path):
    """A new version is renamed into place: a hard link to the old file keeps the old bytes."""
    path = write_list(fwtree, LIST)
    install("--list", path, "--dest", tmp_path / "dest")
    os.link(tmp_path / "dest" / "fs" / "b", tmp_path / "old-b")
    (fwtree / "seven.bin").write_bytes(b"7654321")
    install("--list", path, "--dest", tmp_path / "dest")
    assert (tmp_path / "dest" / "fs" / "b").read_bytes() == b"7654321"
    assert (tmp_path / "old-b").read_bytes() == b"1234567"
    assert sorted(p.name for p in (tmp_path / "dest" / "fs").iterdir()) == ["b", "sub"]


def test_dir_mode_has_no_install_entries(fwtree, tmp_path):
    """With --dir nothing is marked install: nothing is installed without --all."""
    result = install("--dir", fwtree, "--dest", tmp_path / "dest")
    assert "nothing to install" in result.stdout
    assert not (tmp_path / "dest").exists()
    install("--dir", fwtree, "--dest", tmp_path / "dest", "--all")
    assert files(tmp_path / "dest") == files(fwtree)


def blocker_file(dest):
    (dest / "fs").write_text("a file where a directory must go\n")
    return f"{dest}/fs"


def blocker_dir(dest):
    (dest / "fs" / "b").mkdir(parents=True)
    return f"{dest}/fs/b"


@pytest.mark.parametrize("text, line, message", [
    ("a one.bin install=yes\na/b seven.bin install=yes\n", 2,
     "cannot install 'a/b': 'a' ("),
    ("a one.bin\nb missing.bin install=yes\n", 2, "source 'missing.bin': no such file"),
    ("a one.bin install=on\n", 1, "install='on': expected yes or no"),
])
def test_bad_list_installs_nothing(fwtree, tmp_path, text, line, message):
    """A bad list: exit 1, 'list:line: error:', and the destination is untouched."""
    path = write_list(fwtree, text)
    result = run_fwembed("install", "--list", path, "--dest", tmp_path / "dest")
    assert result.returncode == 1
    assert result.stderr.startswith(f"{path}:{line}: error: ")
    assert message in result.stderr
    assert not (tmp_path / "dest").exists()


@pytest.mark.parametrize("spoil, message", [(blocker_file, "not a directory; cannot install"),
                                            (blocker_dir, "is a directory; cannot install")])
def test_blocked_destination_installs_nothing(fwtree, tmp_path, spoil, message):
    """Something in the way of one file stops the run before any file is written."""
    dest = tmp_path / "dest"
    dest.mkdir()
    where = spoil(dest)
    before = snapshot(dest)
    result = run_fwembed("install", "--list", write_list(fwtree, "a/z one.bin install=yes\n" +
                                                          LIST), "--dest", dest)
    assert result.returncode == 1
    assert result.stderr.startswith(f"{where}: error: {message} 'fs/")
    assert snapshot(dest) == before


def test_destination_that_is_a_file_is_refused(fwtree, tmp_path):
    """DEST itself must be a directory, or creatable as one."""
    (tmp_path / "dest").write_text("x")
    result = run_fwembed("install", "--list", write_list(fwtree, LIST), "--dest",
                         tmp_path / "dest")
    assert result.returncode == 1
    assert result.stderr.startswith(f"{tmp_path}/dest: error: ")


def test_make_firmware_install_defaults_to_the_build_directory():
    """make firmware_install installs the board's install entries below build/<name>/."""
    out = ROOT / "build" / "test-install"
    try:
        result = make("firmware_install", "OUT_NAME=test-install")
        assert result.returncode == 0, result.stderr
        assert files(out / "firmware-install") == {
            "fwembed/on-disk.bin": (ROOT / "firmware" / "seven.bin").read_bytes()}
        assert "  INSTALL build/test-install/firmware-install/fwembed/on-disk.bin\n" in \
            result.stdout
    finally:
        subprocess.run(["rm", "-rf", str(out)], check=True)


@build_group("versatile")
def test_make_firmware_install_suggests_install_fw_all(fwtree, tmp_path):
    """With FIRMWARE_DIR nothing is marked install=yes: make suggests INSTALL_FW_ALL=1."""
    result = make("firmware_install", f"FIRMWARE_DIR={fwtree}",
                  f"INSTALL_FW_PATH={tmp_path}/fw")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (f"fwembed install: no entry of {fwtree} is marked install=yes; "
                             "nothing to install (INSTALL_FW_ALL=1 installs every entry)\n")


@build_group("versatile")
def test_make_firmware_install_all_to_a_path(tmp_path):
    """INSTALL_FW_ALL=1 installs every entry; INSTALL_FW_PATH picks the folder."""
    result = make("firmware_install", "INSTALL_FW_ALL=1", f"INSTALL_FW_PATH={tmp_path}/fw")
    assert result.returncode == 0, result.stderr
    entries = read_list(ROOT / "boards" / "versatile" / "firmware.list")
    assert len(files(tmp_path / "fw")) == len(entries) == 18
    assert (tmp_path / "fw" / "fwembed" / "hello, world+v2@rev=3 #1.txt").read_bytes() == \
        (ROOT / "firmware" / "hello.txt").read_bytes()
