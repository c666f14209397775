""".xz and .zst files as sources, as Fedora, Arch and Gentoo install /lib/firmware.

The entry's name drops the suffix and its data is the decoded file. The
file is stored as it is when Linux 6.1's decoder (single-call lib/xz,
lib/zstd) takes it, and decoded and encoded again when not. Debian's own
xz and zstd make the files and judge the results.
"""

import hashlib
import json
import subprocess

import pytest

from conftest import run_fwembed, write_list

DATA = b"register table 0x1000 = 0xdeadbeef\n" * 400


def encode(*cmd, data=DATA):
    return subprocess.run(list(cmd), input=data, capture_output=True, check=True).stdout


def gen_dir(folder, out):
    result = run_fwembed("gen", "-q", "--dir", folder, "--out", out)
    assert result.returncode == 0, result.stderr
    return {e["name"]: e for e in json.loads((out / "manifest.json").read_text())["entries"]}


def stored(out, entry):
    return (out / f"{entry['blob']}.bin").read_bytes()


def decoded(tool, data):
    return subprocess.run([tool, "-d", "-c", "-q"], input=data, capture_output=True,
                          check=True).stdout


@pytest.fixture
def folder(tmp_path):
    path = tmp_path / "lib-firmware"
    (path / "vendor").mkdir(parents=True)
    return path


def test_xz_file_the_kernel_takes_is_stored_as_it_is(folder, tmp_path):
    """vendor/a.bin.xz (CRC32, LZMA2): name vendor/a.bin, the file's own bytes,
    and the digest of the decoded data."""
    xz = encode("xz", "--check=crc32", "-c")
    (folder / "vendor" / "a.bin.xz").write_bytes(xz)
    entry = gen_dir(folder, tmp_path / "out")["vendor/a.bin"]
    assert (entry["compression"], entry["size"]) == ("xz", len(DATA))
    assert entry["sha256"] == hashlib.sha256(DATA).hexdigest()
    assert stored(tmp_path / "out", entry) == xz


@pytest.mark.parametrize("what, xz", [
    ("CRC64 check", ["xz", "--check=crc64", "-c"]),
    ("x86 BCJ filter", ["xz", "--check=crc32", "--x86", "--lzma2", "-c"]),
])
def test_xz_file_the_kernel_refuses_is_encoded_again(folder, tmp_path, what, xz):
    """xz's default CRC64 check, or a BCJ filter: decoded and encoded again as
    lib/xz needs it (CRC32, LZMA2 alone), with the same data."""
    original = encode(*xz)
    (folder / "a.bin.xz").write_bytes(original)
    out = tmp_path / "out"
    entry = gen_dir(folder, out)["a.bin"]
    data = stored(out, entry)
    assert data != original, what
    assert data[6:8] == b"\x00\x01"  # stream flags: CRC32
    assert decoded("xz", data) == DATA


def test_concatenated_xz_streams_are_encoded_again(folder, tmp_path):
    """Two streams in one file: single-call lib/xz stops after the first."""
    half = len(DATA) // 2
    two = encode("xz", "--check=crc32", "-c", data=DATA[:half]) + \
        encode("xz", "--check=crc32", "-c", data=DATA[half:])
    (folder / "a.bin.xz").write_bytes(two)
    entry = gen_dir(folder, tmp_path / "out")["a.bin"]
    data = stored(tmp_path / "out", entry)
    assert data != two and decoded("xz", data) == DATA
    assert entry["sha256"] == hashlib.sha256(DATA).hexdigest()


def test_zst_file_is_stored_as_it_is_and_two_frames_are_not(folder, tmp_path):
    """One zstd frame is kept; two frames are decoded and encoded as one."""
    one = encode("zstd", "-q", "-19", "-c")
    half = len(DATA) // 2
    two = encode("zstd", "-q", "-c", data=DATA[:half]) + encode("zstd", "-q", "-c",
                                                                data=DATA[half:])
    (folder / "one.bin.zst").write_bytes(one)
    (folder / "two.fw.zst").write_bytes(two)
    entries = gen_dir(folder, tmp_path / "out")
    assert stored(tmp_path / "out", entries["one.bin"]) == one
    again = stored(tmp_path / "out", entries["two.fw"])
    assert again != two and decoded("zstd", again) == DATA
    assert entries["two.fw"]["compression"] == "zstd"


def test_file_and_its_xz_giving_one_name_is_an_error(folder, tmp_path):
    (folder / "a.bin").write_bytes(DATA)
    (folder / "a.bin.xz").write_bytes(encode("xz", "--check=crc32", "-c"))
    result = run_fwembed("gen", "--dir", folder, "--out", tmp_path / "out")
    assert result.returncode == 1
    assert "gives the name 'a.bin', as" in result.stderr


def test_file_that_does_not_decode_is_an_error(folder, tmp_path):
    """A .xz file that is not xz data names itself; nothing is written."""
    (folder / "broken.bin.xz").write_bytes(b"not xz at all")
    result = run_fwembed("gen", "--dir", folder, "--out", tmp_path / "out")
    assert result.returncode == 1
    assert "source 'broken.bin.xz': not a valid .xz file" in result.stderr
    assert not (tmp_path / "out").exists()


def test_list_names_decide_whether_a_file_is_decoded(folder, tmp_path):
    """In a list, "a.bin a.bin.xz" decodes (as the kernel's loader would);
    "a.bin.xz a.bin.xz" embeds the file's bytes; compress=none stores the
    decoded data raw."""
    xz = encode("xz", "--check=crc32", "-c")
    (folder / "a.bin.xz").write_bytes(xz)
    path = write_list(folder, "a.bin a.bin.xz\na.bin.xz a.bin.xz\nraw a.bin.xz compress=none\n")
    result = run_fwembed("gen", "-q", "--list", path, "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    entries = {e["name"]: e for e in
               json.loads((tmp_path / "out" / "manifest.json").read_text())["entries"]}
    assert (entries["a.bin"]["compression"], entries["a.bin"]["size"]) == ("xz", len(DATA))
    assert (entries["a.bin.xz"]["compression"], entries["a.bin.xz"]["size"]) == ("none", len(xz))
    assert stored(tmp_path / "out", entries["raw"]) == DATA
