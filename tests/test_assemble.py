"""Generated sources assemble with the real cross assembler and read back."""

import json

import pytest

from asmlink import assemble_and_link, read_table, sha256
from conftest import run_fwembed, write_list


def generate(list_path, out):
    result = run_fwembed("gen", "-q", "--list", list_path, "--out", out)
    assert result.returncode == 0, result.stderr
    return json.loads((out / "manifest.json").read_text())["entries"]


def check_round_trip(manifest, table, files):
    assert [row[0] for row in table] == [e["name"] for e in manifest]
    for entry, (name, data, size, stored, comp, digest) in zip(manifest, table):
        assert data == files[name], name
        assert size == stored == entry["size"] == len(files[name])
        assert comp == 0
        assert digest.hex() == entry["sha256"] == sha256(files[name])


def test_every_entry_reads_back(fwtree, tmp_path):
    """Names, bytes, sizes and digests survive assembly and linking."""
    path = write_list(fwtree, "empty empty.bin\none one.bin\nseven seven.bin\n"
                              "ramp ramp.bin\nramp-again ramp.bin\n")
    manifest = generate(path, tmp_path / "out")
    table = read_table(assemble_and_link(tmp_path / "out", tmp_path))
    files = {"empty": b"", "one": b"\x01", "seven": b"1234567",
             "ramp": bytes(range(256)), "ramp-again": bytes(range(256))}
    check_round_trip(manifest, table, files)


def test_aliases_share_one_copy_of_the_data(fwtree, tmp_path):
    """Two names for one file point at the same bytes in the image."""
    path = write_list(fwtree, "a ramp.bin\nb ramp.bin\n")
    generate(path, tmp_path / "out")
    elf = assemble_and_link(tmp_path / "out", tmp_path)
    rodata = elf.read_bytes()
    assert rodata.count(bytes(range(256))) == 1


NASTY = ['with space.bin', 'comma,plus+at@eq=.bin', '#hash', "quote'single",
         'a /* not a comment */ b', 'x #define y', '??/trigraph', 'semi;colon', '$dollar',
         '%percent', '&amp;', '(paren', 'brace}', '`tick`', 'ends with space ']


@pytest.mark.parametrize("name", NASTY)
def test_awkward_names_assemble_verbatim(fwtree, tmp_path, name):
    """Punctuation that CONFIG_EXTRA_FIRMWARE cannot express reaches the table intact."""
    path = write_list(fwtree, f'"{name}" seven.bin\n')
    generate(path, tmp_path / "out")
    table = read_table(assemble_and_link(tmp_path / "out", tmp_path))
    assert table[0][0] == name


def test_size_mismatch_is_caught_by_the_assembler(fwtree, tmp_path):
    """A data file that changed after generation stops the build."""
    path = write_list(fwtree, "a seven.bin\n")
    generate(path, tmp_path / "out")
    blob = next((tmp_path / "out").glob("blob-*.bin"))
    blob.write_bytes(b"123456789")
    with pytest.raises(AssertionError, match="expected 7 bytes; run fwembed gen again"):
        assemble_and_link(tmp_path / "out", tmp_path)


def test_linker_merges_tables_in_name_order(fwtree, tmp_path):
    """Entries from separate objects end up in one table sorted by name."""
    first = write_list(fwtree, "b one.bin\nd seven.bin\n", name="first.list")
    second = write_list(fwtree, "a ramp.bin\nc empty.bin\n", name="second.list")
    generate(first, tmp_path / "out1")
    generate(second, tmp_path / "out2")
    table = read_table(assemble_and_link([tmp_path / "out1", tmp_path / "out2"], tmp_path))
    assert [(row[0], row[1]) for row in table] == [
        ("a", bytes(range(256))), ("b", b"\x01"), ("c", b""), ("d", b"1234567")]
