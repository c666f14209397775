"""lifetime=init: entries the kernel serves only while it boots.

The list option, what gen writes for it, and where the linker puts it: the
init-only table and its data in the kernel's init data, as vmlinux.lds.h
places them, assembled with the kernel's own <linux/builtin_fw.h>. The
kernel side is booted in test_run.py.
"""

import json

from asmlink import TOOLCHAINS, assemble_and_link, read_table, sha256
from conftest import run_fwembed, write_list

LIST = ("a.bin ramp.bin\n"
        "boot/a.bin ramp.bin lifetime=init\n"
        "boot/seven.bin seven.bin lifetime=init\n"
        "boot/seven.xz seven.bin lifetime=init compress=xz\n")


def gen(list_path, out):
    result = run_fwembed("gen", "-q", "--list", list_path, "--out", out)
    assert result.returncode == 0, result.stderr
    return out


def test_table_uses_the_init_macro_for_init_entries(fwtree, tmp_path):
    """Init-only names get builtin_fw_init_entry, the others builtin_fw_entry,
    in one name-sorted table source."""
    out = gen(write_list(fwtree, LIST), tmp_path / "out")
    lines = [l.split('"')[:2] for l in (out / "table.S").read_text().splitlines()
             if "builtin_fw_" in l and '"' in l]
    assert lines == [["\tbuiltin_fw_entry ", "a.bin"],
                     ["\tbuiltin_fw_init_entry ", "boot/a.bin"],
                     ["\tbuiltin_fw_init_entry ", "boot/seven.bin"],
                     ["\tbuiltin_fw_init_entry ", "boot/seven.xz"]]


def test_locator_version_2_only_with_init_entries(fwtree, tmp_path):
    """A table with init-only entries points the locator at them (version 2);
    one without keeps version 1 and names no init-only symbol, so that it
    still links with kernels that have no init-only table."""
    with_init = gen(write_list(fwtree, LIST), tmp_path / "a") / "table.S"
    plain = write_list(fwtree, "a.bin ramp.bin\n", "plain.list")
    without = gen(plain, tmp_path / "b") / "table.S"
    assert "\t.long 2, __SIZEOF_POINTER__" in with_init.read_text()
    assert "__start_builtin_fw_init_data" in with_init.read_text()
    assert "\t.long 1, __SIZEOF_POINTER__" in without.read_text()
    assert "_init" not in without.read_text()


def test_data_that_only_init_entries_use_goes_to_init_memory(fwtree, tmp_path):
    """seven.bin, raw and as xz, is only stored for init-only names: its data
    and digests go to the init sections. ramp.bin also has a name that stays,
    so its one copy stays in .builtin_fw_data."""
    out = gen(write_list(fwtree, LIST), tmp_path / "out")
    data = "".join(p.read_text() for p in sorted(out.glob("data-*.S")))
    parts = {part.split(".bin:")[0]: part for part in data.split("\n/* ")[1:]}
    seven = sha256(b"1234567")[:16]
    ramp = sha256(bytes(range(256)))[:16]
    for stem in (f"blob-{seven}", f"blob-{seven}-xz"):
        assert ".section .builtin_fw_init_data," in parts[stem]
        assert ".section .init.rodata," in parts[stem]
        assert "init-only" in parts[stem]
    assert ".section .builtin_fw_data," in parts[f"blob-{ramp}"]
    assert "init" not in parts[f"blob-{ramp}"]


def test_manifest_records_the_lifetime(fwtree, tmp_path):
    """manifest.json says "init" or "kernel", and null for an installed file."""
    out = gen(write_list(fwtree, LIST + "fs.bin one.bin install=yes\n"), tmp_path / "out")
    entries = json.loads((out / "manifest.json").read_text())["entries"]
    assert {e["name"]: e["lifetime"] for e in entries} == {
        "a.bin": "kernel", "boot/a.bin": "init", "boot/seven.bin": "init",
        "boot/seven.xz": "init", "fs.bin": None}


def test_every_assembler_links_the_init_only_table(fwtree, tmp_path):
    """With each architecture's toolchain, the init-only table holds the
    init-only names, sorted, each pointing at its data; the table holds the
    others."""
    out = gen(write_list(fwtree, LIST), tmp_path / "out")
    for toolchain in TOOLCHAINS:
        elf = assemble_and_link(out, tmp_path / toolchain.arch, toolchain)
        kept = read_table(elf, toolchain)
        init = read_table(elf, toolchain, lifetime="init")
        assert [row[0] for row in kept] == ["a.bin"]
        assert [row[0] for row in init] == ["boot/a.bin", "boot/seven.bin", "boot/seven.xz"]
        assert init[0][1] == bytes(range(256)) and init[1][1] == b"1234567"
        size, compression = init[2][2], init[2][4]
        assert (size, compression) == (7, 1) and init[2][1].startswith(b"\xfd7zXZ")


def test_bad_lifetime_is_refused(fwtree, tmp_path):
    """An unknown lifetime stops gen with the list's path and line."""
    path = write_list(fwtree, "a.bin ramp.bin\nb.bin one.bin lifetime=boot\n")
    result = run_fwembed("gen", "--list", path, "--out", tmp_path / "out")
    assert result.returncode == 1
    assert f"{path}:2: error: lifetime='boot': expected kernel or init" in result.stderr
    assert not (tmp_path / "out").exists()


def test_lifetime_does_not_apply_to_installed_files(fwtree, tmp_path):
    """An install=yes entry never reaches the kernel image: lifetime= is refused."""
    path = write_list(fwtree, "b.bin one.bin install=yes lifetime=init\n")
    result = run_fwembed("gen", "--list", path, "--out", tmp_path / "out")
    assert result.returncode == 1
    assert f"{path}:1: error: lifetime= does not apply to an install=yes entry" in result.stderr


def test_default_lifetime_applies_below_it(fwtree, tmp_path):
    """%default lifetime=init makes the entries below it init-only."""
    path = write_list(fwtree, "a.bin ramp.bin\n%default lifetime=init\nb.bin one.bin\n")
    out = gen(path, tmp_path / "out")
    entries = json.loads((out / "manifest.json").read_text())["entries"]
    assert [e["lifetime"] for e in entries] == ["kernel", "init"]
