"""Fuzzing the generator: no input may end in a traceback.

Hypothesis writes firmware lists of arbitrary bytes, and lists made of
near-valid lines (names, sources, quotes, options and directives mixed
with junk), and feeds them to the list parser and the whole generator.
Every input must either be accepted or be refused with a FwembedError,
whose message starts with the list's path; an accepted input must write a
complete output directory, a refused one must write nothing. Name
validation gets arbitrary strings. A smaller share goes through the real
command line, which must exit 0 or 1 and never print a traceback.

FWEMBED_FUZZ_EXAMPLES sets the number of examples per test (make stress
uses 10,000; make check 50, the default).
"""

import os
import pathlib
import subprocess
import sys
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from fwembedlib.errors import FwembedError  # noqa: E402  pylint: disable=wrong-import-position
from fwembedlib.fwlist import read_list  # noqa: E402  pylint: disable=wrong-import-position
from fwembedlib.gen import generate  # noqa: E402  pylint: disable=wrong-import-position
from fwembedlib.names import name_problem  # noqa: E402  pylint: disable=wrong-import-position

EXAMPLES = int(os.environ.get("FWEMBED_FUZZ_EXAMPLES", "50"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SOURCES = {"one.bin": b"\x01", "empty.bin": b"", "text.bin": b"fwembed " * 40}

# Pieces of lines that are almost right, so that the parser's deeper paths
# are reached, not only its first check.
token = st.sampled_from([
    "a", "fw/a.bin", "one.bin", "empty.bin", "text.bin", "missing.bin", "sub",
    '"', '"a b"', '"a"b', "#", "# c", "%default", "%defaults", "compress=xz",
    "compress=zstd", "compress=auto", "compress=none", "compress=lz4", "compress=",
    "license=MIT", 'license="GPL-2.0 OR MIT"', "license=a;b", "install=yes",
    "install=no", "install=maybe", "=", "k=v", "..", ".", "/abs", "a//b", "\\",
    "x" * 256, "\t", " ", "\r", "\x00", "\x7f", "\xe9",
])
line = st.lists(st.one_of(token, st.text(max_size=8)), max_size=6).map(" ".join)
near_valid = st.lists(line, max_size=8).map(lambda ls: "\n".join(ls).encode("latin-1",
                                                                             "replace"))
any_bytes = st.binary(max_size=400)


def workdir():
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="fwembed-fuzz-"))
    (tmp / "sub").mkdir()
    for name, data in SOURCES.items():
        (tmp / name).write_bytes(data)
    return tmp


def check_list(content, compress="none"):
    """Parse and generate; any exception but FwembedError fails the test."""
    tmp = workdir()
    try:
        path = tmp / "firmware.list"
        path.write_bytes(content)
        try:
            entries = read_list(path)
        except FwembedError as err:
            assert str(err).startswith(str(path)), err
            return
        assert entries
        out = tmp / "out"
        try:
            generate(out, list_path=path, compress=compress)
        except FwembedError as err:
            assert str(err).startswith(str(path)), err
            assert not out.exists()
            return
        assert (out / "manifest.json").is_file() and (out / "table.S").is_file()
    finally:
        subprocess.run(["rm", "-rf", str(tmp)], check=True)


@FUZZ
@given(any_bytes)
def test_arbitrary_bytes_never_crash_the_parser(content):
    """Any bytes as a firmware list: accepted, or refused with a located error."""
    check_list(content)


@FUZZ
@given(near_valid, st.sampled_from(["none", "xz", "zstd", "auto"]))
def test_near_valid_lists_never_crash_the_generator(content, compress):
    """Lines of names, sources, quotes, options and junk: accepted or refused cleanly."""
    check_list(content, compress)


@FUZZ
@given(st.text(max_size=300))
def test_name_validation_never_raises(name):
    """name_problem() answers for any string: None or a message."""
    problem = name_problem(name)
    assert problem is None or isinstance(problem, str)


@settings(FUZZ, max_examples=max(20, EXAMPLES // 50))
@given(near_valid)
def test_command_line_exits_0_or_1_without_traceback(content):
    """The real fwembed gen: exit 0 or 1, never a traceback or an internal error."""
    tmp = workdir()
    try:
        (tmp / "firmware.list").write_bytes(content)
        result = subprocess.run(["/usr/bin/python3", str(ROOT / "tools" / "fwembed"), "gen",
                                 "-q", "--list", str(tmp / "firmware.list"),
                                 "--out", str(tmp / "out")],
                                capture_output=True, text=True, check=False)
        assert result.returncode in (0, 1), result.stderr
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    finally:
        subprocess.run(["rm", "-rf", str(tmp)], check=True)
