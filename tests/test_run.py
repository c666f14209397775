"""make run end to end: build the versatile kernel, boot it in QEMU, verify.

These tests share build/versatile with 'make run', so a warm tree makes them
quick. They run in file order: the sample list first, then incremental
builds, then whole directories.
"""

import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from conftest import FWEMBED, HARNESS, PYTHON, ROOT, build_group, make, run_command
from fwembedlib import emit
from fwembedlib.manifest import read as read_manifest

pytestmark = [pytest.mark.kernel, build_group("versatile")]
VMLINUX = ROOT / "build" / "versatile" / "linux" / "vmlinux"
PASS_RE = re.compile(r"^  PASS  ", re.M)
GENERATED_AS_RE = re.compile(r"^  AS\s+drivers/base/firmware_loader/builtin/generated/(\S+)$",
                             re.M)


def assert_ok(result):
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]


def test_make_run_verifies_the_sample_list():
    """make run boots the versatile kernel and every sample entry passes."""
    result = run_command("make run")
    assert_ok(result)
    assert len(PASS_RE.findall(result.stdout)) == 26
    assert "  PASS         63 B  6b25e9fd12b2  fwembed/hello, world+v2@rev=3 #1.txt" in \
        result.stdout
    assert "  PASS      16384 B  " in result.stdout
    assert "  PASS      16384 B  b7f6b5398608  [after boot] fwembed/boot-only/regs-16k.bin" in \
        result.stdout
    assert "versatile: 17 firmware entries and 1 installed" in result.stdout
    assert "26 checks passed, 0 failed" in result.stdout
    regdb = pathlib.Path("/lib/firmware/regulatory.db-upstream").read_bytes()
    assert f"  PASS  {len(regdb):>9} B  {hashlib.sha256(regdb).hexdigest()[:12]}  regulatory.db" \
        in result.stdout
    assert "  PASS                             [check] debugfs_listing_matches_manifest" in \
        result.stdout
    assert (ROOT / "build" / "versatile" / "console.log").read_text().count("ok ") >= 9


def test_second_run_does_not_relink_vmlinux():
    """With nothing changed, make run leaves vmlinux alone."""
    before = VMLINUX.stat().st_mtime_ns
    result = make("run")
    assert_ok(result)
    assert VMLINUX.stat().st_mtime_ns == before
    assert "  LD      vmlinux" not in result.stdout


def test_sample_list_mixes_encodings():
    """The sample manifest holds raw, xz and zstd entries, an empty one compressed."""
    entries = json.loads((ROOT / "build" / "versatile" / "fw" / "manifest.json").read_text())
    by_name = {e["name"]: e for e in entries["entries"]}
    assert {e["compression"] for e in by_name.values()} == {"none", "xz", "zstd"}
    assert by_name["fwembed/empty.xz"]["compression"] == "xz"
    assert by_name["fwembed/empty.xz"]["size"] == 0
    assert by_name["fwembed/hello.txt"]["compression"] != \
        by_name["fwembed/hello, world+v2@rev=3 #1.txt"]["compression"]


INIT_K_RE = re.compile(r"^Memory: .*, (\d+)K init, ", re.M)
FREED_K_RE = re.compile(r"^Freeing unused kernel image \(initmem\) memory: (\d+)K$", re.M)
INIT_ONLY_RE = re.compile(r"^# (\d+) init-only entries, (\d+) bytes of data, freed after boot$",
                          re.M)


def boot_lines(log):
    return [line.rstrip("\r") for line in log.read_text(errors="replace").splitlines()]


def test_init_only_entries_are_served_at_boot_then_gone():
    """The boot above: the self-test, an initcall, gets the init-only regs-16k
    image; then the kernel says the entries are gone, frees its init memory,
    and the test init's request through test_firmware fails with -ENOENT."""
    lines = boot_lines(ROOT / "build" / "versatile" / "console.log")
    name = "fwembed/boot-only/regs-16k.bin"
    digest = hashlib.sha256((ROOT / "firmware" / "regs-16k.bin").read_bytes()).hexdigest()
    order = [f'# size=16384 sha256={digest} name="{name}"',
             "firmware_loader: 4 init-only built-in firmware entries are gone; their 16444 "
             "bytes of data are freed with the init memory",
             "Freeing unused kernel image (initmem) memory: ",
             f"{name}\t16384\t16384\tnone\t{digest}\tfreed",
             f'fwembed-init: after boot: "{name}": error -2']
    where = [next((n for n, line in enumerate(lines) if line.startswith(want)), None)
             for want in order]
    assert None not in where, order[where.index(None)]
    assert where == sorted(where)


def test_init_only_entries_are_freed_with_the_init_memory(tmp_path):
    """The versatile list with its init-only entries kept for the kernel's
    whole life (no lifetime=init), then as written: the kernel's init memory,
    and what it frees after boot, grow by the size of their data, to within
    a page."""
    board = tmp_path / "resident" / "versatile"   # built in build/versatile too
    shutil.copytree(ROOT / "boards" / "versatile", board)
    text = (board / "firmware.list").read_text()
    assert text.count(" lifetime=init") == 4
    (board / "firmware.list").write_text(text.replace(" lifetime=init", "").replace(
        "../../firmware/", f"{ROOT}/firmware/"))
    console = ROOT / "build" / "versatile" / "console.log"
    assert_ok(make("run", f"BOARD={board}"))
    resident = console.read_text(errors="replace")
    assert "init-only" not in resident
    assert_ok(make("run"))
    freed = console.read_text(errors="replace")
    data = int(INIT_ONLY_RE.search(freed).group(2))
    assert data == 16384 + 60      # regs-16k.bin, and seven.bin as xz; the others share
    grown = int(INIT_K_RE.search(freed).group(1)) - int(INIT_K_RE.search(resident).group(1))
    assert data - 4096 < grown * 1024 < data + 4096
    assert int(FREED_K_RE.search(freed).group(1)) - \
        int(FREED_K_RE.search(resident).group(1)) == grown


def test_install_entry_loads_from_the_initramfs():
    """The install=yes entry is not built in; the boot finds it in /lib/firmware."""
    out = ROOT / "build" / "versatile"
    assert "fwembed/on-disk.bin" not in (out / "fw" / "names.txt").read_text()
    assert (out / "testfs" / "fwembed" / "on-disk.bin").read_bytes() == b"fwembed"
    console = (out / "console.log").read_text()
    assert "# fw_builtin_selftest: 1 names from fw_builtin_selftest.list" in console
    assert '# size=7 sha256=b4035ca821c3' in console and 'name="fwembed/on-disk.bin"' in console


SHADOW = "fwembed/seven.bin"
SHADOW_DATA = b"the filesystem's copy, not the built-in one\n"


def test_builtin_firmware_wins_over_the_filesystem(tmp_path):
    """A name both built in and in /lib/firmware gives the built-in data; a missing one -ENOENT."""
    out = ROOT / "build" / "versatile"
    testfs = tmp_path / "testfs"
    shutil.copytree(out / "testfs", testfs)
    (testfs / SHADOW).write_bytes(SHADOW_DATA)
    packed = subprocess.run([PYTHON, FWEMBED, "cpio", "--dir", testfs,
                             "--out", tmp_path / "testfs.cpio"],
                            capture_output=True, text=True, check=False)
    assert packed.returncode == 0, packed.stderr
    initrd = tmp_path / "initramfs.cpio"
    initrd.write_bytes((out / "initramfs-base.cpio").read_bytes() +
                       (tmp_path / "testfs.cpio").read_bytes())
    log = tmp_path / "console.log"
    result = subprocess.run(
        [PYTHON, HARNESS, "boot", "--board", ROOT / "boards" / "versatile",
         "--kernel", out / "linux/arch/arm/boot/zImage",
         "--dtb", out / "linux/arch/arm/boot/dts/versatile-pb.dtb", "--initrd", initrd,
         "--manifest", out / "fw/manifest.json", "--log", log],
        capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    console = log.read_text()
    assert "# fw_builtin_selftest: 2 names from fw_builtin_selftest.list" in console
    builtin = hashlib.sha256((ROOT / "firmware" / "seven.bin").read_bytes()).hexdigest()
    # Requested twice, from the table and from the list: the built-in data both times.
    assert console.count(f'# size=7 sha256={builtin} name="{SHADOW}"') == 2
    assert hashlib.sha256(SHADOW_DATA).hexdigest() not in console
    assert len([ln for ln in result.stdout.splitlines()
                if ln.startswith("  PASS") and ln.endswith(f"  {SHADOW}")]) == 2
    assert "# missing: error=-2 after " in console
    assert "  PASS                             [check] missing_name_is_enoent" in result.stdout
    assert "sysfs fallback" not in console


CORRUPT = "fwembed/regs-16k.bin"


def test_corrupt_digest_is_rejected_in_qemu():
    """An entry whose table digest is wrong fails with -EBADMSG; every other entry passes."""
    assert_ok(make("kernel", f"GEN_EXTRA=--test-corrupt-digest {CORRUPT}"))
    out = ROOT / "build" / "versatile"
    # No test initramfs: its listing shows the table's digest, wrong on purpose.
    result = subprocess.run(
        [PYTHON, HARNESS, "boot", "--board", ROOT / "boards" / "versatile",
         "--kernel", out / "linux/arch/arm/boot/zImage",
         "--dtb", out / "linux/arch/arm/boot/dts/versatile-pb.dtb",
         "--manifest", out / "fw/manifest.json", "--log", out / "console-corrupt.log"],
        capture_output=True, text=True, check=False)
    assert result.returncode == 1, result.stdout + result.stderr
    # Two checks fail: the entry's own request, and the partial read of it.
    fails = [line for line in result.stdout.splitlines() if line.startswith("  FAIL")]
    assert len(fails) == 2
    assert fails[0].endswith(f"{CORRUPT}  (request failed with error -74)")
    assert fails[1].endswith("[check] partial_reads  (check failed)")
    console = (out / "console-corrupt.log").read_text()
    assert f"built-in firmware {CORRUPT}: SHA-256 mismatch, refused" in console
    partial_errors = re.findall(r'^# partial: error=(-\d+) .* name="(.*)"$', console, re.M)
    assert partial_errors == [("-74", CORRUPT)]
    # Every other entry passes.
    for entry in read_manifest(out / "fw" / "manifest.json"):
        if entry.name != CORRUPT and entry.builtin:
            assert re.search(rf"^  PASS .*  {re.escape(entry.name)}$", result.stdout, re.M), \
                entry.name
    assert_ok(make("kernel"))


COMPRESSIBLE = b"fwembed: a .xz or .zst file in FIRMWARE_DIR\n" * 100


@pytest.fixture
def fwdir(tmp_path):
    folder = tmp_path / "fw"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.bin").write_bytes(b"A" * 100)
    (folder / "sub" / "b.bin").write_bytes(b"B" * 200)
    (folder / "sub" / "c,d e.bin").write_bytes(b"C" * 300)
    os.symlink("../a.bin", folder / "sub" / "alias.bin")
    # Compressed files as Fedora installs them, stored as they are: the
    # kernel's own lib/xz and lib/zstd decode them at the request.
    for name, cmd in (("sub/d.bin.xz", ["xz", "--check=crc32", "-c"]),
                      ("e.fw.zst", ["zstd", "-q", "-19", "-c"])):
        (folder / name).write_bytes(subprocess.run(cmd, input=COMPRESSIBLE, capture_output=True,
                                                   check=True).stdout)
    return folder


def data_object(source):
    """The data object that the file at ``source`` (below FIRMWARE_DIR) is packed in."""
    return f"data-{int(emit.key_hash(source), 16) % emit.DATA_OBJECTS:02d}.o"


def test_one_changed_file_reassembles_one_object(fwdir):
    """Same size: one data object re-assembled; new size: it and the table."""
    assert_ok(make("kernel", f"FIRMWARE_DIR={fwdir}"))
    (fwdir / "sub" / "b.bin").write_bytes(b"b" * 200)
    same_size = make("kernel", f"FIRMWARE_DIR={fwdir}")
    assert_ok(same_size)
    assert GENERATED_AS_RE.findall(same_size.stdout) == [data_object("sub/b.bin")]
    (fwdir / "sub" / "b.bin").write_bytes(b"b" * 201)
    new_size = make("kernel", f"FIRMWARE_DIR={fwdir}")
    assert_ok(new_size)
    assert sorted(GENERATED_AS_RE.findall(new_size.stdout)) == \
        sorted([data_object("sub/b.bin"), "table.o"])


def test_firmware_dir_with_symlink_alias_boots(fwdir):
    """FIRMWARE_DIR embeds every file, the symlink as an alias, .xz and .zst
    files decoded under their name without the suffix, and all pass."""
    result = make("run", f"FIRMWARE_DIR={fwdir}")
    assert_ok(result)
    assert "versatile: 6 firmware entries" in result.stdout
    assert "  PASS        100 B  " in result.stdout and "sub/alias.bin" in result.stdout
    for name in ("sub/d.bin", "e.fw"):
        assert re.search(rf"^  PASS +{len(COMPRESSIBLE)} B  [0-9a-f]{{12}}  {re.escape(name)}$",
                         result.stdout, re.M), name


def test_firmware_linux_free_boots():
    """Every file Debian's firmware-linux-free installs is verified in QEMU."""
    files = [p for p in pathlib.Path("/lib/firmware").rglob("*") if p.is_file()]
    result = run_command("make run FIRMWARE_DIR=/lib/firmware")
    assert_ok(result)
    assert f"versatile: {len(files)} firmware entries" in result.stdout
    assert len(PASS_RE.findall(result.stdout)) == len(files) + 4
    assert len(files) >= 26


def copy_board(folder):
    """A copy of the versatile board whose list names two repository files."""
    shutil.copytree(ROOT / "boards" / "versatile", folder)
    (folder / "firmware.list").write_text(
        f'"vendor/ramp.bin" {ROOT}/firmware/ramp-256.bin\n'
        f'"vendor/text.txt" {ROOT}/firmware/hello.txt license=CC0-1.0\n')
    return folder


def test_board_path_outside_the_repository(tmp_path):
    """BOARD= accepts a path to a board folder anywhere."""
    board = copy_board(tmp_path / "vendor" / "versatile")
    result = make("run", f"BOARD={board}")
    assert_ok(result)
    assert "versatile: 2 firmware entries" in result.stdout
    assert "vendor/ramp.bin" in result.stdout


def test_dropped_config_option_stops_the_build(tmp_path):
    """A fragment option that olddefconfig drops is named, and the build stops."""
    board = copy_board(tmp_path / "badsmp")
    with open(board / "kernel.config", "a", encoding="utf-8") as frag:
        frag.write("CONFIG_SMP=y\n")
    result = make("kernel", f"BOARD={board}")
    assert result.returncode != 0
    assert re.search(r"kernel.config:\d+: CONFIG_SMP: wanted y, got n", result.stderr)
    shutil.rmtree(ROOT / "build" / "badsmp", ignore_errors=True)


def test_bad_firmware_list_stops_make_run(tmp_path):
    """A broken list fails make run with the generator's located message."""
    board = copy_board(tmp_path / "broken")
    (board / "firmware.list").write_text(f"ok.bin {ROOT}/firmware/seven.bin\nbad\n")
    result = make("run", f"BOARD={board}")
    assert result.returncode != 0
    assert f"{board}/firmware.list:2: error: expected NAME SOURCE" in result.stderr
    assert not (ROOT / "build" / "broken" / "linux").exists()
    shutil.rmtree(ROOT / "build" / "broken", ignore_errors=True)


@build_group("virt64")
def test_16_mib_entry_verifies_on_virt64(tmp_path):
    """One 16 MiB entry is requested whole, into a buffer and in part, and
    verified, on a board with the RAM for it (virt64, 256 MiB). It builds
    in the board's own folder: the new list reassembles the table and
    relinks, where a folder of its own would be another kernel build."""
    folder = tmp_path / "large"
    folder.mkdir()
    data = b"".join(hashlib.sha256(i.to_bytes(4, "little")).digest()
                    for i in range((16 << 20) // 32))
    (folder / "large.bin").write_bytes(data)
    result = make("run", "BOARD=virt64", f"FIRMWARE_DIR={folder}")
    assert_ok(result)
    digest = hashlib.sha256(data).hexdigest()
    assert f"  PASS  {16 << 20:>9} B  {digest[:12]}  large.bin" in result.stdout
    assert "  PASS                             [check] partial_reads" in result.stdout
