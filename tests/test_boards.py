"""Every board boots: make run on each board folder, and U-Boot images.

The versatile board's own tests are in test_run.py; these build and boot
the other boards, and boot the versatile kernel as a uImage. Each board's
kernel is built once, in build/<board>, shared with 'make run BOARD=...'.
"""

import hashlib
import json
import re
import subprocess

import pytest

from conftest import HARNESS, PYTHON, ROOT, build_group, make, on_board, run_command
from fwembedlib.board import load_board
from fwembedlib.elf import read_sections
from fwembedlib.manifest import read as read_manifest
from fwharness import extrafw, listing

pytestmark = pytest.mark.kernel
BUILD = ROOT / "build"
PASS_RE = re.compile(r"^  PASS  ", re.M)
# Every board folder but versatile, whose own tests are in test_run.py.
BOARDS = sorted(p.name for p in (ROOT / "boards").iterdir()
                if p.is_dir() and p.name != "versatile")


def assert_ok(result):
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]


@pytest.mark.parametrize("board", [on_board(b) for b in BOARDS])
def test_make_run_verifies_every_entry_on_the_board(board):
    """make run BOARD=... boots the board and every entry of its list passes."""
    result = run_command(f"make run BOARD={board}")
    assert_ok(result)
    manifest = read_manifest(BUILD / board / "fw" / "manifest.json")
    installed = len([e for e in manifest if not e.builtin])
    extra = extrafw.expected_entries(BUILD / board / "linux" / ".config",
                                     BUILD / "linux-6.1")
    # Each entry, each CONFIG_EXTRA_FIRMWARE file, the self-test's three
    # checks (partial reads and two error paths), the debugfs listing, each
    # init-only entry requested again after boot, and on a U-Boot board its
    # check of the FIT's hashes.
    checks = len(manifest) + len(extra) + 4 + sum(e.lifetime == "init" for e in manifest) + \
        (load_board(ROOT / "boards" / board).boot == "uboot")
    assert len(PASS_RE.findall(result.stdout)) == checks
    assert f"{board}: {len(manifest) - installed} firmware entries and {installed} installed" \
        in result.stdout
    assert f"{checks} checks passed, 0 failed" in result.stdout


@build_group("virt64")
def test_virt64_table_uses_the_64_bit_layout():
    """The arm64 kernel's table holds 64-bit entries: six 8-byte fields each."""
    vmlinux = BUILD / "virt64" / "linux" / "vmlinux"
    assert vmlinux.read_bytes()[4] == 2  # ELFCLASS64
    table = {s.name: s for s in read_sections(vmlinux)}[".builtin_fw"]
    manifest = json.loads((BUILD / "virt64" / "fw" / "manifest.json").read_text())
    builtin = [e for e in manifest["entries"] if e["builtin"]]
    assert table.size == len(builtin) * 6 * 8


@build_group("virt-uboot")
def test_virt_uboot_checked_every_fit_hash():
    """U-Boot printed a passing sha256 check for the kernel, initramfs and tree."""
    log = (BUILD / "virt-uboot" / "console.log").read_text(errors="replace")
    assert len(re.findall(r"Verifying Hash Integrity \.\.\. sha256\+ OK", log)) == 3
    assert log.index("Found U-Boot script /boot.scr") < log.index("Starting kernel ...")


@build_group("virt-uboot")
def test_virt_uboot_refuses_a_fit_with_a_flipped_bit(tmp_path):
    """A disk whose FIT kernel has one flipped bit: U-Boot refuses it, the boot fails."""
    out = BUILD / "virt-uboot"
    disk = bytearray((out / "disk.img").read_bytes())
    kernel = (out / "linux" / "arch" / "arm" / "boot" / "zImage").read_bytes()
    chunk = kernel[len(kernel) // 2:len(kernel) // 2 + 64]
    assert disk.count(chunk) == 1
    disk[disk.index(chunk)] ^= 1
    bad = tmp_path / "disk.img"
    bad.write_bytes(disk)
    result = subprocess.run(
        [PYTHON, str(HARNESS), "boot", "--board", str(ROOT / "boards" / "virt-uboot"),
         "--kernel", "unused", "--disk", str(bad), "--initrd", str(out / "initramfs.cpio"),
         "--manifest", str(out / "fw" / "manifest.json"), "--log", str(tmp_path / "log")],
        capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 1
    assert "  FAIL                             [check] uboot_verified_fit_sha256  " \
           "(Hash(es) for Image 0 (kernel): sha256 error!" in result.stdout
    assert "Starting kernel" not in (tmp_path / "log").read_text(errors="replace")


@build_group("versatile")
def test_versatile_boots_from_a_uimage():
    """make uimage wraps the versatile zImage; QEMU boots it and every entry passes."""
    assert_ok(make("initramfs"))
    assert_ok(run_command("make uimage"))
    out = BUILD / "versatile"
    listing = subprocess.run(["mkimage", "-l", str(out / "uImage")], capture_output=True,
                             text=True, check=True).stdout
    assert "Image Type:   ARM Linux Kernel Image (uncompressed)" in listing
    assert "Load Address: 00008000" in listing
    result = subprocess.run(
        [PYTHON, str(HARNESS), "boot", "--board", str(ROOT / "boards" / "versatile"),
         "--kernel", str(out / "uImage"),
         "--dtb", str(out / "linux" / "arch" / "arm" / "boot" / "dts" / "versatile-pb.dtb"),
         "--initrd", str(out / "initramfs.cpio"), "--manifest", str(out / "fw" / "manifest.json"),
         "--log", str(out / "console-uimage.log")],
        capture_output=True, text=True, timeout=300, check=False)
    assert_ok(result)
    assert "/uImage -dtb " in result.stdout
    # Each entry, the self-test's three checks, the debugfs listing, and
    # each init-only entry requested again after boot.
    manifest = read_manifest(out / "fw" / "manifest.json")
    checks = len(manifest) + 4 + sum(e.lifetime == "init" for e in manifest)
    assert len(PASS_RE.findall(result.stdout)) == checks
    assert f"{checks} checks passed, 0 failed" in result.stdout


@build_group("versatile")
def test_make_fit_lists_kernel_dtb_and_initramfs_with_their_sha256():
    """make fit: mkimage -l shows each image, hashed with the sha256 of its file."""
    result = run_command("make fit")
    assert_ok(result)
    out = BUILD / "versatile"
    files = {"kernel": out / "linux" / "arch" / "arm" / "boot" / "zImage",
             "fdt": out / "linux" / "arch" / "arm" / "boot" / "dts" / "versatile-pb.dtb",
             "ramdisk": out / "initramfs.cpio"}
    for number, (node, path) in enumerate(files.items()):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert re.search(rf"^ Image {number} \({node}\)\n(?:  .*\n)*?  Hash algo:    sha256\n"
                         rf"  Hash value:   {digest}$", result.stdout, re.M), node
    assert "Load Address: 0x00008000" in result.stdout


def console_listing(log):
    """The lines the kernel's debugfs listing printed on a board's console."""
    lines = [line.rstrip("\r") for line in log.read_text(errors="replace").splitlines()]
    begin = lines.index(listing.BEGIN)
    return lines[begin + 1:lines.index(listing.END, begin)]


def ls_lines(image):
    """The listing ls prints, as the kernel prints it once booted: ls shows
    an image, where init-only entries are still there."""
    result = run_command(f"tools/fwembed ls {image}")
    assert_ok(result)
    return [re.sub(r"\tinit$", "\tfreed", line).replace("freed when boot ends",
                                                          "freed after boot")
            for line in result.stdout.splitlines()]


@pytest.mark.parametrize("board", [on_board(b) for b in BOARDS])
def test_ls_reads_the_board_images_as_the_kernel_lists_itself(board):
    """fwembed ls on vmlinux and on the image QEMU booted prints, line for
    line, the debugfs listing that kernel printed at boot."""
    out = BUILD / board
    settings = load_board(ROOT / "boards" / board).settings
    kernel_listing = console_listing(out / "console.log")
    for image in (out / "linux" / "vmlinux", out / "linux" / settings["image"]):
        assert ls_lines(image.relative_to(ROOT)) == kernel_listing, image


@build_group("virt-uboot")
def test_ls_reads_the_fit_u_boot_booted():
    """The FIT on virt-uboot's boot disk: its kernel, a zImage, lists as booted."""
    out = BUILD / "virt-uboot"
    assert ls_lines((out / "image.fit").relative_to(ROOT)) == console_listing(out / "console.log")


@build_group("versatile")
def test_ls_reads_the_versatile_uimage_and_fit():
    """The versatile uImage booted above, its FIT and vmlinux list as that boot did."""
    out = BUILD / "versatile"
    kernel_listing = console_listing(out / "console-uimage.log")
    for image in (out / "uImage", out / "image.fit", out / "linux" / "vmlinux"):
        assert ls_lines(image.relative_to(ROOT)) == kernel_listing, image


@build_group("versatile")
def test_extract_gives_the_file_the_list_names(tmp_path):
    """An xz entry of the versatile kernel's uImage extracts to its source's bytes."""
    out = tmp_path / "regs-16k.bin"
    result = run_command(f"tools/fwembed extract build/versatile/uImage fwembed/regs-16k.bin "
                         f"--out {out}")
    assert_ok(result)
    assert out.read_bytes() == (ROOT / "firmware" / "regs-16k.bin").read_bytes()


@pytest.mark.parametrize("board", [on_board(b) for b in sorted(BOARDS + ["versatile"])])
def test_verify_names_a_blob_with_a_flipped_bit(board, tmp_path):
    """verify passes on the board's vmlinux, and names the one entry whose
    data has a flipped bit in a copy of it."""
    vmlinux = BUILD / board / "linux" / "vmlinux"
    assert_ok(run_command(f"tools/fwembed verify {vmlinux.relative_to(ROOT)}"))
    manifest = read_manifest(BUILD / board / "fw" / "manifest.json")
    raw = [e for e in manifest if e.builtin and e.compression == "none" and e.size >= 64]
    entry = max(raw, key=lambda e: (e.size, e.name))
    data = (BUILD / board / "fw" / f"{entry.blob}.bin").read_bytes()
    image = bytearray(vmlinux.read_bytes())
    assert image.count(data) == 1
    image[image.index(data) + len(data) // 2] ^= 1
    bad = tmp_path / "vmlinux"
    bad.write_bytes(image)
    result = run_command(f"tools/fwembed verify {bad}")
    assert result.returncode == 1
    assert result.stdout.count("  FAIL    ") == 1
    assert f"  FAIL    {entry.name}\n" in result.stdout
    assert "error: 1 of " in result.stderr and f"'{entry.name}': SHA-256 " in result.stderr
