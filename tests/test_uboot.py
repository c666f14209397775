"""U-Boot images with the real mkimage and mtools, on tiny inputs."""

import hashlib
import re
import shutil
import struct
import subprocess

import pytest

from conftest import ROOT, run_fwembed
from fwembedlib.board import load_board
from fwembedlib.uboot import its_text
from fwharness import ubootlog

DATA = ROOT / "tests" / "data"
VIRT_UBOOT = ROOT / "boards" / "virt-uboot"


@pytest.fixture
def parts(tmp_path):
    """A fake kernel, device tree and initramfs: mkimage only hashes them."""
    files = {"kernel": tmp_path / "zImage", "fdt": tmp_path / "board.dtb",
             "ramdisk": tmp_path / "initramfs.cpio"}
    files["kernel"].write_bytes(b"kernel " * 100)
    files["fdt"].write_bytes(b"\xd0\x0d\xfe\xed" + bytes(60))
    files["ramdisk"].write_bytes(b"070701" + bytes(200))
    return files


def listing_hashes(listing):
    """{image node: sha256} from mkimage -l."""
    images = re.findall(r"^ Image \d+ \((\w+)\)\n(.*?)(?=^ Image |^ Default)", listing,
                        re.M | re.S)
    return {name: re.search(r"Hash value:\s+([0-9a-f]{64})", body).group(1)
            for name, body in images}


def test_fit_listing_shows_every_image_with_its_sha256(tmp_path, parts):
    """mkimage -l lists kernel, fdt and ramdisk, each hash the sha256 of its file."""
    fit = tmp_path / "image.fit"
    result = run_fwembed("fit", "--board", VIRT_UBOOT, "--kernel", parts["kernel"],
                         "--dtb", parts["fdt"], "--initrd", parts["ramdisk"], "--out", fit)
    assert result.returncode == 0, result.stderr
    listing = subprocess.run(["mkimage", "-l", str(fit)], capture_output=True, text=True,
                             check=True).stdout
    assert listing_hashes(listing) == {
        name: hashlib.sha256(path.read_bytes()).hexdigest() for name, path in parts.items()}
    assert "Load Address: 0x40400000" in listing
    assert " Default Configuration: 'conf-1'" in listing
    assert (tmp_path / "image.fit.its").is_file()


def test_fit_is_reproducible(tmp_path, parts, monkeypatch):
    """The same inputs and SOURCE_DATE_EPOCH give the same FIT, byte for byte."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    outs = []
    for name in ("a.fit", "b.fit"):
        result = run_fwembed("fit", "--board", VIRT_UBOOT, "--kernel", parts["kernel"],
                             "--dtb", parts["fdt"], "--out", tmp_path / name)
        assert result.returncode == 0, result.stderr
        outs.append((tmp_path / name).read_bytes())
    assert outs[0] == outs[1]


def test_its_has_a_hash_node_per_image(parts):
    """The .its source hashes every image it holds, and only those."""
    text = its_text(load_board(VIRT_UBOOT), parts["kernel"], dtb=parts["fdt"])
    assert text.count('algo = "sha256";') == 2
    assert 'ramdisk = "ramdisk";' not in text and 'fdt = "fdt";' in text


def test_uimage_loads_at_the_boards_address(tmp_path, parts):
    """make uimage's command: a legacy uImage at the board's kernel_load."""
    out = tmp_path / "uImage"
    result = run_fwembed("uimage", "--board", ROOT / "boards" / "vexpress-a9",
                         "--kernel", parts["kernel"], "--out", out)
    assert result.returncode == 0, result.stderr
    assert "  RUN     mkimage -A arm -O linux -T kernel" in result.stdout
    listing = subprocess.run(["mkimage", "-l", str(out)], capture_output=True, text=True,
                             check=True).stdout
    assert "Load Address: 60008000" in listing and "Entry Point:  60008000" in listing
    assert "Image Name:   fwembed vexpress-a9" in listing


def test_uimage_without_kernel_load_names_the_key(tmp_path, parts):
    """A board without kernel_load cannot have U-Boot images; nothing is written."""
    board = tmp_path / "board"
    shutil.copytree(ROOT / "boards" / "versatile", board)
    cfg = board / "board.cfg"
    cfg.write_text(re.sub(r"(?m)^kernel_load = .*\n", "", cfg.read_text()))
    result = run_fwembed("uimage", "--board", board, "--kernel", parts["kernel"],
                         "--out", tmp_path / "uImage")
    assert result.returncode == 1
    assert result.stderr == f"{cfg}: error: board settings lack kernel_load, which a uImage needs\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == \
        ["board", "board.dtb", "initramfs.cpio", "zImage"]


def test_boot_disk_holds_script_and_fit_in_a_bootable_partition(tmp_path, parts):
    """The disk: an MBR with one bootable FAT partition at 1 MiB, boot.scr and image.fit."""
    fit = tmp_path / "in.fit"
    fit.write_bytes(b"FIT" * 1000)
    disk = tmp_path / "disk.img"
    result = run_fwembed("uboot-disk", "--board", VIRT_UBOOT, "--fit", fit, "--out", disk)
    assert result.returncode == 0, result.stderr
    data = disk.read_bytes()
    assert data[510:512] == b"\x55\xaa"
    status, ptype, start, count = struct.unpack_from("<B3xB3xII", data, 446)
    assert (status, ptype, start) == (0x80, 0x0C, 2048)
    assert len(data) == (start + count) * 512
    files = subprocess.run(["mdir", "-b", "-i", f"{disk}@@{start * 512}", "::"],
                           capture_output=True, text=True, check=True).stdout.split()
    assert sorted(files) == ["::/boot.scr", "::/image.fit"]
    copied = subprocess.run(["mtype", "-i", f"{disk}@@{start * 512}", "::/image.fit"],
                            capture_output=True, check=True).stdout
    assert copied == fit.read_bytes()
    script = (tmp_path / "boot.cmd").read_text()
    assert "bootm ${ramdisk_addr_r}" in script and 'setenv bootargs "console=ttyAMA0 panic=-1"' \
        in script


def test_boot_disk_is_reproducible(tmp_path, monkeypatch):
    """Two disks from one FIT are identical: sfdisk is given the disk identifier."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    fit = tmp_path / "in.fit"
    fit.write_bytes(b"FIT" * 1000)
    disks = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        result = run_fwembed("uboot-disk", "--board", VIRT_UBOOT, "--fit", fit,
                             "--out", tmp_path / name / "disk.img")
        assert result.returncode == 0, result.stderr
        assert "  RUN     sfdisk " in result.stdout
        disks.append((tmp_path / name / "disk.img").read_bytes())
    assert disks[0] == disks[1]
    assert disks[0][440:444] == (0x66776D62).to_bytes(4, "little")


def test_uboot_log_with_every_hash_verified_passes():
    """A recorded U-Boot boot that checked kernel, ramdisk and fdt passes."""
    lines = (DATA / "uboot-fit-good.log").read_text().splitlines()
    verified, problems, started = ubootlog.fit_hash_checks(lines)
    assert verified == {"kernel": ["sha256"], "ramdisk": ["sha256"], "fdt": ["sha256"]}
    assert problems == [] and started
    assert ubootlog.describe(lines) == (True, "")


def test_uboot_log_with_a_bad_hash_fails_and_says_why():
    """A recorded boot of a FIT with one flipped kernel bit fails, naming the kernel."""
    lines = (DATA / "uboot-fit-bad-hash.log").read_text().splitlines()
    passed, detail = ubootlog.describe(lines)
    assert not passed
    assert "Hash(es) for Image 0 (kernel): sha256 error!" in detail


def test_uboot_log_without_the_fdt_check_fails():
    """A boot whose device tree was not hash-checked does not count as verified."""
    lines = [line for line in (DATA / "uboot-fit-good.log").read_text().splitlines()
             if "Loading fdt" not in line]
    assert ubootlog.describe(lines) == (False, "U-Boot did not verify the sha256 of fdt")
