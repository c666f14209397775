"""fwembed report and make report: rows, totals, JSON, and growth read from ELF files."""

import json
import re
import subprocess

import pytest

from asmlink import CROSS, assemble_and_link
from conftest import ROOT, build_group, run_command, run_fwembed, write_list
from fwembedlib.elf import read_sections

LIST = ("a seven.bin license=MIT\nb seven.bin license=MIT\n"
        "r ramp.bin\nfs/x one.bin install=yes license=CC0-1.0\n")


def gen(list_path, out):
    result = run_fwembed("gen", "-q", "--list", list_path, "--out", out)
    assert result.returncode == 0, result.stderr
    return out / "manifest.json"


def report(*args):
    result = run_fwembed("report", *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_one_row_per_entry(fwtree, tmp_path):
    """Each entry: size, stored, ratio, compression, short digest, license, where,
    lifetime."""
    out = report("--manifest", gen(write_list(fwtree, LIST), tmp_path / "out"))
    rows = out.split("\n\n")[0].splitlines()
    assert rows[0].split() == ["name", "size", "stored", "ratio", "compression", "sha256",
                               "license", "where", "lifetime"]
    assert rows[2].split() == ["a", "7", "7", "100.0%", "none", "8bb0cf6eb9b1", "MIT",
                               "built-in", "kernel"]
    assert rows[3].split() == ["b", "7", "7", "100.0%", "none", "8bb0cf6eb9b1", "MIT",
                               "built-in", "kernel"]
    assert rows[4].split() == ["fs/x", "1", "1", "100.0%", "none", "4bf5122f3445", "CC0-1.0",
                               "install", "-"]
    assert rows[5].split() == ["r", "256", "256", "100.0%", "none", "40aff2e9d2d8", "-",
                               "built-in", "kernel"]


def test_empty_file_has_no_ratio(fwtree, tmp_path):
    """A 0-byte entry shows '-' as its ratio, and null in JSON."""
    manifest = gen(write_list(fwtree, "e empty.bin\n"), tmp_path / "out")
    out = report("--manifest", manifest, "--json", tmp_path / "r.json")
    assert out.splitlines()[2].split()[:4] == ["e", "0", "0", "-"]
    assert json.loads((tmp_path / "r.json").read_text())["entries"][0]["ratio"] is None


def test_totals_count_shared_data_once(fwtree, tmp_path):
    """Totals: built-in and install counts and bytes; two names for one file, one object."""
    out = report("--manifest", gen(write_list(fwtree, LIST), tmp_path / "out"))
    assert "4 entries: 3 built in, 1 to install\n" in out
    assert ("built in: 270 bytes, stored as 270 bytes; 2 distinct data objects hold "
            "263 bytes\n") in out
    assert "to install: 1 bytes\n" in out


def test_json_holds_the_same_data(fwtree, tmp_path):
    """--json writes the rows and totals that are printed."""
    manifest = gen(write_list(fwtree, LIST), tmp_path / "out")
    report("--manifest", manifest, "--json", tmp_path / "sub" / "report.json")
    data = json.loads((tmp_path / "sub" / "report.json").read_text())
    assert [e["name"] for e in data["entries"]] == ["a", "b", "fs/x", "r"]
    assert data["entries"][2] == {
        "name": "fs/x", "size": 1, "stored_size": 1, "ratio": 1.0, "compression": "none",
        "sha256": "4bf5122f344554c53bde2ebb8cd2b7e3d1600ad631c385a5d7cce23c7785459a",
        "license": "CC0-1.0", "builtin": False, "lifetime": None, "blob": None}
    assert data["totals"] == {
        "entries": 4, "builtin_entries": 3, "builtin_size": 270, "builtin_stored_size": 270,
        "builtin_objects": 2, "builtin_objects_size": 263, "init_entries": 0,
        "init_objects": 0, "init_objects_size": 0, "install_entries": 1,
        "install_size": 1}
    assert data["vmlinux"] is None


def readelf_sections(elf, tool):
    """(name, addr, size, allocated) per section, as binutils' readelf reads them."""
    text = subprocess.run([tool, "-S", "-W", elf], capture_output=True, text=True,
                          check=True).stdout
    found = []
    for match in re.finditer(r"^\s+\[\s*\d+\]\s+(\S*)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+"
                             r"([0-9a-f]+)\s+[0-9a-f]+\s+(\S*)\s", text, re.M):
        name, addr, size, flags = match.groups()
        if name != "NULL":
            found.append((name, int(addr, 16), int(size, 16), "A" in flags))
    return found


def ours(elf):
    return [(s.name, s.addr, s.size, s.allocated) for s in read_sections(elf)
            if s.type != "SHT_NULL"]


def test_elf_sections_agree_with_readelf_32_bit(fwtree, tmp_path):
    """Section names, addresses, sizes and flags of an ARM ELF file match readelf."""
    gen(write_list(fwtree, LIST), tmp_path / "out")
    elf = assemble_and_link(tmp_path / "out", tmp_path)
    assert ours(elf) == readelf_sections(elf, f"{CROSS}readelf")
    assert ".builtin_fw" in [s[0] for s in ours(elf)]


def test_elf_sections_agree_with_readelf_64_bit():
    """The same holds for a 64-bit ELF file (the host's Python)."""
    assert ours("/usr/bin/python3") == readelf_sections("/usr/bin/python3", "readelf")


@pytest.fixture
def linked_pair(fwtree, tmp_path):
    """(manifest, ELF with one more 256-byte entry, ELF without it)."""
    small = gen(write_list(fwtree, "a seven.bin\n", name="small.list"), tmp_path / "small")
    big = gen(write_list(fwtree, "a seven.bin\nr ramp.bin\n", name="big.list"),
              tmp_path / "big")
    (tmp_path / "s").mkdir()
    (tmp_path / "b").mkdir()
    without = assemble_and_link(small.parent, tmp_path / "s")
    with_fw = assemble_and_link(big.parent, tmp_path / "b")
    return big, with_fw, without


def test_growth_between_two_linked_tables(linked_pair, tmp_path):
    """One more 256-byte entry: .builtin_fw grows by one 24-byte entry, the data
    section by the image, .rodata by its digest, and totals add up."""
    big, with_fw, without = linked_pair
    report("--manifest", big, "--vmlinux", with_fw, "--base-vmlinux", without,
           "--json", tmp_path / "r.json")
    growth = json.loads((tmp_path / "r.json").read_text())["vmlinux"]
    sections = {s["name"]: s["growth"] for s in growth["sections"]}
    assert sections[".builtin_fw"] == 24
    assert sections[".builtin_fw_data"] >= 256
    assert sections[".rodata"] >= 32
    assert growth["allocated"]["growth"] == sum(sections.values())


def test_growth_is_printed_per_changed_section(linked_pair):
    """The printed table names each section that grew, with both sizes, and the total."""
    big, with_fw, without = linked_pair
    out = report("--manifest", big, "--vmlinux", with_fw, "--base-vmlinux", without)
    table = re.search(r"^\.builtin_fw\s+(\d+)\s+(\d+)\s+\+24$", out, re.M)
    assert table and int(table.group(2)) - int(table.group(1)) == 24
    assert re.search(r"^\.rodata\s+\d+\s+\d+\s+\+\d+$", out, re.M)
    total = re.search(r"^all allocated\s+(\d+)\s+(\d+)\s+\+(\d+)$", out, re.M)
    assert total and int(total.group(2)) - int(total.group(1)) == int(total.group(3)) > 24
    assert f"vmlinux growth: +{total.group(3)} bytes of allocated sections\n" in out


def test_missing_manifest_is_an_error(tmp_path):
    """No manifest: exit 1 and a message naming it."""
    result = run_fwembed("report", "--manifest", tmp_path / "nope.json")
    assert result.returncode == 1
    assert result.stderr.startswith(f"{tmp_path}/nope.json: error: cannot read manifest")


def test_vmlinux_that_is_not_elf_is_an_error(fwtree, tmp_path):
    """A vmlinux that is not an ELF file: exit 1, named, and no JSON written."""
    manifest = gen(write_list(fwtree, "a seven.bin\n"), tmp_path / "out")
    result = run_fwembed("report", "--manifest", manifest, "--vmlinux", manifest,
                         "--base-vmlinux", manifest, "--json", tmp_path / "r.json")
    assert result.returncode == 1
    assert result.stderr == f"{manifest}: error: not an ELF file\n"
    assert not (tmp_path / "r.json").exists()


def test_vmlinux_needs_a_base(fwtree, tmp_path):
    """--vmlinux without --base-vmlinux is a usage error."""
    manifest = gen(write_list(fwtree, "a seven.bin\n"), tmp_path / "out")
    result = run_fwembed("report", "--manifest", manifest, "--vmlinux", "/usr/bin/python3")
    assert result.returncode == 2


@pytest.mark.kernel
@build_group("versatile")
def test_make_report_measures_the_board_kernel():
    """make report: every entry; .builtin_fw grows by 24 bytes per built-in entry
    that stays, the init data by 24 per init-only entry and its own data."""
    result = run_command("make report")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    data = json.loads((ROOT / "build" / "versatile" / "report.json").read_text())
    manifest = json.loads((ROOT / "build" / "versatile" / "fw" / "manifest.json").read_text())
    assert [e["name"] for e in data["entries"]] == [e["name"] for e in manifest["entries"]]
    builtin = sum(e["builtin"] for e in manifest["entries"])
    init = sum(e["lifetime"] == "init" for e in manifest["entries"])
    sections = {s["name"]: s for s in data["vmlinux"]["sections"]}
    assert init and data["totals"]["init_entries"] == init
    assert sections[".builtin_fw"]["growth"] == 24 * (builtin - init)
    assert sections[".init.data"]["growth"] >= 24 * init + data["totals"]["init_objects_size"]
    assert sections[".builtin_fw_data"]["growth"] >= \
        data["totals"]["builtin_objects_size"] - data["totals"]["init_objects_size"]
    assert f"vmlinux growth: {data['vmlinux']['allocated']['growth']:+d} bytes" in result.stdout
    assert "fwembed/on-disk.bin" in result.stdout
