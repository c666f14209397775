"""fwembed gen with compression: every compress= value, defaults, round trips.

The stored bytes are decoded again with Debian's own xz and zstd commands,
which must give back the original file.
"""

import json
import lzma
import os
import subprocess

import pytest

from conftest import FWEMBED, PYTHON, ROOT, run_fwembed, write_list
from fwembedlib.compress import auto_keeps
from fwembedlib.fwlist import read_list

TEXT = b"fwembed compresses this line well. " * 64


@pytest.fixture
def src(fwtree):
    (fwtree / "text.bin").write_bytes(TEXT)
    return fwtree


def gen(list_path, out, *extra):
    result = run_fwembed("gen", "-q", "--list", list_path, "--out", out, *extra)
    assert result.returncode == 0, result.stderr
    entries = json.loads((out / "manifest.json").read_text())["entries"]
    return {e["name"]: e for e in entries}


def stored(out, entry):
    return (out / f"{entry['blob']}.bin").read_bytes()


def decode(tool, data):
    return subprocess.run([tool, "-d", "-c", "-q"], input=data, capture_output=True,
                          check=True).stdout


@pytest.mark.parametrize("method", ["xz", "zstd"])
def test_round_trip_through_the_real_decoder(src, tmp_path, method):
    """xz and zstd entries decode with the xz and zstd commands to the original bytes."""
    names = ["empty.bin", "one.bin", "seven.bin", "ramp.bin", "text.bin"]
    path = write_list(src, "".join(f"{n} {n} compress={method}\n" for n in names))
    entries = gen(path, tmp_path / "out")
    for name in names:
        entry = entries[name]
        assert entry["compression"] == method
        data = stored(tmp_path / "out", entry)
        assert len(data) == entry["stored_size"]
        assert decode(method, data) == (src / name).read_bytes(), name


def test_none_stores_the_file_itself(src, tmp_path):
    """compress=none stores the bytes as they are."""
    path = write_list(src, "t text.bin compress=none\n")
    entry = gen(path, tmp_path / "out")["t"]
    assert (entry["compression"], entry["stored_size"]) == ("none", len(TEXT))
    assert stored(tmp_path / "out", entry) == TEXT


def test_xz_stream_uses_crc32_and_lzma2_only(src, tmp_path):
    """The .xz container carries a CRC32 check and one LZMA2 filter, as lib/xz needs."""
    path = write_list(src, "t text.bin compress=xz\n")
    data = stored(tmp_path / "out", gen(path, tmp_path / "out")["t"])
    # Stream flags (bytes 6-7): 0x00 then the check ID; 0x01 is CRC32.
    assert data[:6] == b"\xfd7zXZ\x00" and data[6:8] == b"\x00\x01"
    info = subprocess.run(["xz", "--robot", "--list", "-vv", "-"], input=data,
                          capture_output=True, check=False)
    if info.returncode != 0:  # older xz cannot list stdin; use a file
        (tmp_path / "t.xz").write_bytes(data)
        info = subprocess.run(["xz", "--robot", "--list", "-vv", tmp_path / "t.xz"],
                              capture_output=True, check=True)
    blocks = [line for line in info.stdout.decode().splitlines() if line.startswith("block")]
    assert blocks and all(line.split("\t")[-1].startswith("--lzma2=") for line in blocks)
    assert lzma.decompress(data) == TEXT


def test_zstd_frame_records_the_content_size(src, tmp_path):
    """The zstd frame header holds the content size, which lib/zstd can check."""
    path = write_list(src, "t text.bin compress=zstd\n")
    data = stored(tmp_path / "out", gen(path, tmp_path / "out")["t"])
    (tmp_path / "t.zst").write_bytes(data)
    info = subprocess.run(["zstd", "-lv", tmp_path / "t.zst"], capture_output=True,
                          text=True, check=True).stdout
    assert f"Decompressed Size: {len(TEXT) / 1024:.2f} KiB ({len(TEXT)} B)" in info
    assert "Check: XXH64" in info


def test_auto_picks_the_smaller_encoding(src, tmp_path):
    """auto stores compressible data in whichever of xz and zstd is smaller."""
    path = write_list(src, "t text.bin compress=auto\nx text.bin compress=xz\n"
                           "z text.bin compress=zstd\n")
    entries = gen(path, tmp_path / "out")
    smaller = min(("xz", "zstd"), key=lambda m: (entries[m[0]]["stored_size"], m))
    assert entries["t"]["compression"] == smaller
    assert entries["t"]["stored_size"] == entries[smaller[0]]["stored_size"]


def test_auto_stores_incompressible_data_raw(src, tmp_path):
    """auto keeps data raw when compression saves less than one eighth."""
    path = write_list(src, "r ramp.bin compress=auto\ns seven.bin compress=auto\n")
    entries = gen(path, tmp_path / "out")
    assert entries["r"]["compression"] == "none"
    assert entries["s"]["compression"] == "none"


def test_auto_threshold_is_one_eighth():
    """Compressed data is kept at 7/8 of the size or less, not above."""
    assert auto_keeps(800, 700)
    assert not auto_keeps(800, 701)


def test_list_default_applies_below_it(src, tmp_path):
    """A %default line sets compress= for the entries after it."""
    path = write_list(src, "a text.bin\n%default compress=xz\nb text.bin\n"
                           "c text.bin compress=zstd\n%default compress=none\nd text.bin\n")
    entries = gen(path, tmp_path / "out")
    assert [entries[n]["compression"] for n in "abcd"] == ["none", "xz", "zstd", "none"]


def test_command_line_default_fills_in(src, tmp_path):
    """--compress applies to entries that neither the line nor a %default set."""
    path = write_list(src, "a text.bin\nb text.bin compress=none\n"
                           "%default compress=zstd\nc text.bin\n")
    entries = gen(path, tmp_path / "out", "--compress", "xz")
    assert [entries[n]["compression"] for n in "abc"] == ["xz", "none", "zstd"]


def test_unused_command_line_default_warns(src, tmp_path):
    """--compress that no entry takes (each sets compress= or has a %default) is named."""
    path = write_list(src, "%default compress=none\na text.bin\nb text.bin compress=xz\n")
    result = run_fwembed("gen", "-q", "--list", path, "--out", tmp_path / "out",
                         "--compress", "zstd")
    assert result.returncode == 0, result.stderr
    assert result.stderr == (f"{path}: warning: --compress zstd (make's COMPRESS=zstd) changes "
                             "no entry: every entry sets compress= itself or through "
                             "%default\n")


def test_used_command_line_default_does_not_warn(src, tmp_path):
    """--compress that one entry takes, or none at all, says nothing."""
    path = write_list(src, "a text.bin\nb text.bin compress=xz\n")
    for method in ("zstd", "none"):
        result = run_fwembed("gen", "-q", "--list", path, "--out", tmp_path / method,
                             "--compress", method)
        assert (result.returncode, result.stderr) == (0, "")


def test_shipped_boards_leave_compression_to_make():
    """Every board list has entries without compress=, which make's COMPRESS= stores."""
    for folder in sorted((ROOT / "boards").iterdir()):
        entries = read_list(folder / "firmware.list")
        assert any(e.compress is None and not e.install for e in entries), folder.name


def test_directory_mode_takes_the_command_line_default(src, tmp_path):
    """FIRMWARE_DIR runs (--dir) compress every file as --compress says."""
    out = tmp_path / "out"
    result = run_fwembed("gen", "-q", "--dir", src, "--out", out, "--compress", "zstd")
    assert result.returncode == 0, result.stderr
    entries = json.loads((out / "manifest.json").read_text())["entries"]
    assert {e["compression"] for e in entries} == {"zstd"}


def test_one_file_in_two_encodings(src, tmp_path):
    """One file under two names with different compression: two stored forms, one digest."""
    path = write_list(src, "a text.bin compress=xz\nb text.bin compress=zstd\n"
                           "c text.bin\n")
    entries = gen(path, tmp_path / "out")
    assert len({entries[n]["blob"] for n in "abc"}) == 3
    assert len({entries[n]["sha256"] for n in "abc"}) == 1
    mk = (tmp_path / "out" / "objects.mk").read_text()
    assert "builtin-fw-compression := xz zstd\n" in mk


def test_table_records_compression_and_stored_size(src, tmp_path):
    """table.S gives each entry its size, stored size and BUILTIN_FW_* encoding."""
    path = write_list(src, "a text.bin compress=xz\n")
    entry = gen(path, tmp_path / "out")["a"]
    table = (tmp_path / "out" / "table.S").read_text()
    assert f", {len(TEXT)}, {entry['stored_size']}, BUILTIN_FW_XZ, " in table


def test_compression_is_deterministic(src, tmp_path):
    """Two runs store byte-identical compressed data."""
    path = write_list(src, "a text.bin compress=xz\nb text.bin compress=zstd\n")
    first = gen(path, tmp_path / "one")
    second = gen(path, tmp_path / "two")
    for name in "ab":
        assert stored(tmp_path / "one", first[name]) == stored(tmp_path / "two", second[name])


def test_unknown_compress_value_names_the_line(src, tmp_path):
    """compress=gzip is refused with the list's path and line."""
    path = write_list(src, "a text.bin\nb text.bin compress=gzip\n")
    result = run_fwembed("gen", "--list", path, "--out", tmp_path / "out")
    assert result.returncode == 1
    assert f"{path}:2: error: compress='gzip': expected one of none, xz, zstd, auto" in \
        result.stderr
    assert not (tmp_path / "out").exists()


def test_corrupt_digest_switch_changes_only_the_table(src, tmp_path):
    """--test-corrupt-digest flips one bit of one entry's digest in table.S only."""
    path = write_list(src, "a text.bin\nb text.bin\n")
    good = gen(path, tmp_path / "good")
    bad = gen(path, tmp_path / "bad", "--test-corrupt-digest", "b")
    assert good == bad
    table = (tmp_path / "bad" / "table.S").read_text()
    assert "fwembed_test_corrupt_digest:\n" in table
    assert table.count("fwembed_test_corrupt_digest") == 2
    line = [ln for ln in table.splitlines() if ln.startswith('\tbuiltin_fw_entry "b"')][0]
    assert line.endswith("fwembed_test_corrupt_digest")
    flipped = "%02x" % (int(good["b"]["sha256"][:2], 16) ^ 1)
    assert f"\t.byte 0x{flipped}, " in table


def encoder_that_only_reports_its_version(folder, tool):
    """A ``tool`` on PATH that answers --version as the real one does and fails
    at any real work: a run that uses it must not have compressed anything."""
    real = subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True, text=True,
                          check=True).stdout.strip()
    shim = folder / tool
    shim.write_text(f'#!/bin/sh\nif [ "$1" = --version ]; then exec {real} --version; fi\n'
                    'echo "compressed again" >&2\nexit 1\n')
    shim.chmod(0o755)


@pytest.mark.parametrize("method", ["xz", "zstd", "auto"])
def test_unchanged_content_is_not_compressed_again(src, tmp_path, method):
    """A second run reuses the compressed copies (and auto's choice) that the
    record says were made from the same content by the same encoder."""
    path = write_list(src, f"t text.bin compress={method}\nr ramp.bin compress={method}\n")
    first = gen(path, tmp_path / "out")
    shims = tmp_path / "bin"
    shims.mkdir()
    for tool in ("xz", "zstd"):
        encoder_that_only_reports_its_version(shims, tool)
    result = subprocess.run([PYTHON, FWEMBED, "gen", "-q", "--list", path, "--out",
                             tmp_path / "out"], capture_output=True, text=True, check=False,
                            env=dict(os.environ, PATH=f"{shims}:{os.environ['PATH']}"))
    assert result.returncode == 0, result.stderr
    entries = {e["name"]: e for e in json.loads((tmp_path / "out" / "manifest.json")
                                                .read_text())["entries"]}
    assert entries == first


def test_parallel_and_serial_runs_store_the_same_bytes(src, tmp_path):
    """Compressing on several threads changes nothing in the outputs."""
    for i in range(6):
        (src / f"t{i}.bin").write_bytes(TEXT * (i + 1))
    path = write_list(src, "".join(f"t{i} t{i}.bin compress=auto\n" for i in range(6)) +
                      "x t0.bin compress=xz\nz t0.bin compress=zstd\n")
    outputs = []
    for jobs in ("1", "4"):
        out = tmp_path / f"out{jobs}"
        result = run_fwembed("gen", "-q", "-j", jobs, "--list", path, "--out", out)
        assert result.returncode == 0, result.stderr
        outputs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())
                        if p.name != ".fwembed-outputs" and p.name != "fwembed.d"})
    assert outputs[0] == outputs[1]


def test_jobs_must_be_positive(src, tmp_path):
    """-j 0 is a usage error."""
    result = run_fwembed("gen", "-j", "0", "--list", write_list(src, "t text.bin\n"),
                         "--out", tmp_path / "out")
    assert result.returncode == 2
    assert "'0' is not a positive number" in result.stderr
