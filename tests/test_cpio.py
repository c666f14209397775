"""fwembed cpio: the /lib/firmware archive of the test initramfs, read back by cpio(1)."""

import subprocess

from conftest import run_fwembed


def extract(archive, dest):
    dest.mkdir()
    subprocess.run(["cpio", "-idm", "--quiet", "-F", archive], cwd=dest, check=True)


def test_files_land_under_lib_firmware(fwtree, tmp_path):
    """Every file, spaces in its name included, is extracted byte for byte."""
    (fwtree / "sub dir").mkdir()
    (fwtree / "sub dir" / "a, b.bin").write_bytes(b"spaced")
    result = run_fwembed("cpio", "--dir", fwtree, "--out", tmp_path / "fw.cpio")
    assert result.returncode == 0, result.stderr
    extract(tmp_path / "fw.cpio", tmp_path / "root")
    for path in fwtree.rglob("*"):
        if path.is_file():
            rel = path.relative_to(fwtree)
            assert (tmp_path / "root/lib/firmware" / rel).read_bytes() == path.read_bytes()


def test_selftest_list_names_every_file(fwtree, tmp_path):
    """fw_builtin_selftest.list names each packed file once, sorted."""
    run_fwembed("cpio", "--dir", fwtree, "--out", tmp_path / "fw.cpio")
    extract(tmp_path / "fw.cpio", tmp_path / "root")
    listed = (tmp_path / "root/lib/firmware/fw_builtin_selftest.list").read_text()
    assert listed == "empty.bin\none.bin\nramp.bin\nseven.bin\n"


def test_archive_is_deterministic(fwtree, tmp_path):
    """The same folder gives the same bytes, whatever the files' timestamps."""
    run_fwembed("cpio", "--dir", fwtree, "--out", tmp_path / "one.cpio")
    (fwtree / "one.bin").touch()
    run_fwembed("cpio", "--dir", fwtree, "--out", tmp_path / "two.cpio")
    assert (tmp_path / "one.cpio").read_bytes() == (tmp_path / "two.cpio").read_bytes()


def test_members_are_root_owned_with_fixed_modes(fwtree, tmp_path):
    """cpio -itv shows root ownership, 0644 files and 0755 folders."""
    run_fwembed("cpio", "--dir", fwtree, "--out", tmp_path / "fw.cpio")
    listing = subprocess.run(["cpio", "-itv", "--quiet", "-F", tmp_path / "fw.cpio"],
                             capture_output=True, text=True, check=True).stdout
    for line in listing.splitlines():
        mode, _, owner, group = line.split()[:4]
        assert (owner, group) == ("root", "root")
        assert mode in ("-rw-r--r--", "drwxr-xr-x"), line


def test_reserved_name_is_refused(fwtree, tmp_path):
    """A file called fw_builtin_selftest.list would shadow the list: refused."""
    (fwtree / "fw_builtin_selftest.list").write_text("x\n")
    result = run_fwembed("cpio", "--dir", fwtree, "--out", tmp_path / "fw.cpio")
    assert result.returncode == 1
    assert "fw_builtin_selftest.list: error: name is reserved" in result.stderr
    assert not (tmp_path / "fw.cpio").exists()
