"""The firmware list format."""

import pytest

from conftest import write_list
from fwembedlib.errors import FwembedError
from fwembedlib.fwlist import read_list


def test_comments_blank_lines_and_quotes(fwtree):
    """Comments and blank lines are skipped; quoted fields keep spaces and '#'."""
    path = write_list(fwtree, "# header\n\n"
                              "a.bin one.bin   # trailing comment\n"
                              '"b c, #d.bin" "seven.bin"\n')
    entries = read_list(path)
    assert [(e.name, e.source) for e in entries] == [("a.bin", "one.bin"),
                                                     ("b c, #d.bin", "seven.bin")]


def test_source_is_relative_to_the_list(tmp_path, fwtree):
    """A source path is taken relative to the list's folder, not the cwd."""
    sub = tmp_path / "boards" / "x"
    sub.mkdir(parents=True)
    path = write_list(sub, "r.bin ../../src/ramp.bin\n")
    entry = read_list(path)[0]
    assert entry.path.read_bytes() == bytes(range(256))
    assert entry.source == "../../src/ramp.bin"


def test_license_option(fwtree):
    """license= takes an SPDX expression, quoted when it has spaces."""
    path = write_list(fwtree, 'a one.bin license=MIT\nb one.bin license="GPL-2.0 OR MIT"\n')
    assert [e.license for e in read_list(path)] == ["MIT", "GPL-2.0 OR MIT"]


def test_install_option(fwtree):
    """install=yes marks a filesystem entry; no, or no option, a built-in one."""
    path = write_list(fwtree, "a one.bin install=yes\nb one.bin install=no\nc one.bin\n")
    assert [e.install for e in read_list(path)] == [True, False, False]


def test_default_applies_until_the_next_default(fwtree):
    """%default sets options for the entries below it that do not set them."""
    path = write_list(fwtree, "%default license=MIT install=yes\na one.bin\n"
                              "b one.bin license=BSD-2-Clause install=no\n")
    assert [(e.license, e.install) for e in read_list(path)] == [("MIT", True),
                                                                  ("BSD-2-Clause", False)]


def test_next_default_starts_afresh(fwtree):
    """A %default replaces the earlier one: options it does not name lose their default."""
    path = write_list(fwtree, "%default license=MIT compress=xz\na one.bin\n"
                              "%default install=yes\nb one.bin\n")
    entries = read_list(path)
    assert [(e.license, e.compress, e.install) for e in entries] == [
        ("MIT", "xz", False), (None, None, True)]


def test_where_has_the_line_number(fwtree):
    """Each entry remembers its list line for later error messages."""
    path = write_list(fwtree, "\n\na one.bin\n")
    assert read_list(path)[0].where == f"{path}:3"


@pytest.mark.parametrize("text, line, message", [
    ("a\n", 1, "expected NAME SOURCE"),
    ("ok one.bin\n\"open one.bin\n", 2, "unterminated quote"),
    ('a"b" one.bin\n', 1, "must be quoted as a whole"),
    ("a one.bin bogus\n", 1, "unknown option 'bogus'"),
    ("a one.bin colour=red\n", 1, "unknown option 'colour'"),
    ("a one.bin license=MIT license=MIT\n", 1, "given twice"),
    ("a one.bin license=\"no;way\"\n", 1, "not an SPDX license expression"),
    ("a one.bin\nb one.bin install=maybe\n", 2, "install='maybe': expected yes or no"),
    ("a one.bin install=yes\na seven.bin\n", 2, "duplicate firmware name 'a'"),
    ("a one.bin\nb seven.bin\na ramp.bin\n", 3, "duplicate firmware name 'a' "
                                                 "(first listed at line 1)"),
    ("/abs one.bin\n", 1, "starts with '/'"),
    ("a/../b one.bin\n", 1, "'..' path component"),
    ('"" one.bin\n', 1, "empty firmware name"),
    ('a ""\n', 1, "empty source path"),
    ("a missing.bin\n", 1, "source 'missing.bin': no such file"),
    ("a .\n", 1, "source '.': a directory"),
    ("a\tone.bin\x01\n", 1, "control or non-ASCII"),
])
def test_errors_name_file_and_line(fwtree, text, line, message):
    """Every list error reads 'list:line: error: ...'."""
    path = write_list(fwtree, text)
    with pytest.raises(FwembedError) as err:
        read_list(path)
    assert str(err.value).startswith(f"{path}:{line}: error: ")
    assert message in str(err.value)


def test_empty_list_is_an_error(fwtree):
    """A list with only comments embeds nothing, which is surely a mistake."""
    path = write_list(fwtree, "# nothing\n")
    with pytest.raises(FwembedError, match="no entries"):
        read_list(path)


def test_non_ascii_byte_names_the_line(fwtree):
    """A non-ASCII byte is reported with its line."""
    path = fwtree / "firmware.list"
    path.write_bytes(b"a one.bin\nb\xc3\xa9 one.bin\n")
    with pytest.raises(FwembedError, match=r":2: error: non-ASCII"):
        read_list(path)
