"""Firmware name rules."""

import pytest

from fwembedlib.names import MAX_NAME_LEN, name_problem


@pytest.mark.parametrize("name", [
    "a.bin", "dir/sub/file.fw", "with space.bin", "comma,plus+at@eq=.bin",
    "#hash", ".hidden", "a..b", "~!$%^&*()[]{}|;:'<>?`", "x" * MAX_NAME_LEN,
])
def test_valid_names(name):
    """Printable ASCII names without quote or backslash are accepted."""
    assert name_problem(name) is None


@pytest.mark.parametrize("name, message", [
    ("", "empty firmware name"),
    ("/abs.bin", "starts with '/'"),
    ("a//b", "empty path component"),
    ("a/", "empty path component"),
    ("./a", "'.' path component"),
    ("a/../b", "'..' path component"),
    ("..", "'..' path component"),
    ("tab\there", "control or non-ASCII"),
    ("nl\nhere", "control or non-ASCII"),
    ("del\x7f", "control or non-ASCII"),
    ("caf\u00e9", "control or non-ASCII"),
    ('quo"te', "forbidden character '\"'"),
    ("back\\slash", "forbidden character '\\\\'"),
    ("x" * (MAX_NAME_LEN + 1), f"the limit is {MAX_NAME_LEN}"),
])
def test_invalid_names(name, message):
    """Each class of bad name is refused with a message saying why."""
    assert message in name_problem(name)
