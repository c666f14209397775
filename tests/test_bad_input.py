"""A table of bad inputs through the real command line.

Every case must exit 1 with 'path[:line]: error: ...' naming the offending
file, create no output directory, and leave an earlier good run's outputs
exactly as they were (content and timestamps).
"""

import os

import pytest

from conftest import run_fwembed, snapshot


def list_case(text, line, message):
    """A firmware list whose given line is wrong."""
    def setup(tmp):
        (tmp / "src" / "firmware.list").write_bytes(text.encode("latin-1"))
        where = f"{tmp}/src/firmware.list" + (f":{line}" if line else "")
        return ["--list", tmp / "src" / "firmware.list"], where
    return pytest.param(setup, message, id=message[:40])


def dir_case(make, where, message):
    """A firmware directory that make() spoils; where is relative to it."""
    def setup(tmp):
        make(tmp / "fwdir")
        return ["--dir", tmp / "fwdir"], f"{tmp}/fwdir{where}"
    return pytest.param(setup, message, id=message[:40])


def symlink(target, link):
    def make(folder):
        os.symlink(target, folder / link)
    return make


def loop(folder):
    os.symlink("loop-b", folder / "loop-a")
    os.symlink("loop-a", folder / "loop-b")


def fifo(folder):
    os.mkfifo(folder / "pipe")


def subdir_link(folder):
    (folder / "d").mkdir()
    os.symlink("d", folder / "dlink")


def quoted_file(folder):
    (folder / 'q"uote.bin').write_bytes(b"q")


def empty_dir(folder):
    for path in folder.iterdir():
        path.unlink()


CASES = [
    list_case("a missing.bin\n", 1, "source 'missing.bin': no such file"),
    list_case("ok one.bin\nd sub\n", 2, "source 'sub': a directory"),
    # Unreadable even for root: reading /proc/self/mem at offset 0 fails.
    list_case("a /proc/self/mem\n", 1, "source '/proc/self/mem': "),
    list_case("a one.bin\nb one.bin\na one.bin\n", 3, "duplicate firmware name 'a'"),
    list_case('"" one.bin\n', 1, "empty firmware name"),
    list_case("/abs one.bin\n", 1, "starts with '/'"),
    list_case("a//b one.bin\n", 1, "empty path component"),
    list_case("a/ one.bin\n", 1, "empty path component"),
    list_case("./a one.bin\n", 1, "a '.' path component"),
    list_case("a/../b one.bin\n", 1, "a '..' path component"),
    list_case(".. one.bin\n", 1, "a '..' path component"),
    list_case("a\x01b one.bin\n", 1, "control or non-ASCII character '\\x01'"),
    list_case("a\x7fb one.bin\n", 1, "control or non-ASCII character '\\x7f'"),
    list_case("a\\b one.bin\n", 1, "forbidden character '\\\\'"),
    list_case("x" * 256 + " one.bin\n", 1, "256 bytes long; the limit is 255"),
    list_case('"open one.bin\n', 1, "unterminated quote"),
    list_case("lonely\n", 1, "expected NAME SOURCE [OPTION ...]"),
    list_case("a one.bin colour=red\n", 1, "unknown option 'colour'"),
    list_case("a one.bin nokey\n", 1, "unknown option 'nokey': expected key=value"),
    list_case('a one.bin license="a;b"\n', 1, "is not an SPDX license expression"),
    list_case("a one.bin license=MIT license=MIT\n", 1, "option 'license' given twice"),
    list_case("a one.bin install=1\n", 1, "install='1': expected yes or no"),
    list_case("a one.bin install=yes\nb missing.bin install=yes\n", 2,
              "source 'missing.bin': no such file"),
    list_case('a"b" one.bin\n', 1, "must be quoted as a whole"),
    list_case("a one.bin\nb\xe9 one.bin\n", 2, "non-ASCII byte in firmware list"),
    list_case("# nothing here\n\n", None, "firmware list has no entries"),
    list_case('a ""\n', 1, "empty source path"),
    # Found by the generator fuzzer (make stress): a source name too long
    # for the filesystem ended in a traceback.
    list_case("a " + "x" * 300 + "\n", 1, "File name too long"),
    list_case("a one.bin compress=lz4\n", 1, "compress='lz4': expected one of none, xz"),
    list_case("%default compress=xz\n%deflaut compress=xz\na one.bin\n", 2,
              "unknown directive '%deflaut': expected %default"),
    list_case("%default\na one.bin\n", 1, "%default needs at least one OPTION"),
    list_case("a one.bin install=yes compress=xz\n", 1,
              "compress= does not apply to an install=yes entry"),
    list_case("%default colour=red\na one.bin\n", 1, "unknown option 'colour'"),
    dir_case(symlink("../src/one.bin", "escape.bin"), "/escape.bin", "symlink points outside"),
    dir_case(loop, "/loop-a", "symlink cannot be resolved: Too many levels"),
    dir_case(symlink("nowhere.bin", "dangling.bin"), "/dangling.bin",
             "symlink cannot be resolved: No such file"),
    dir_case(fifo, "/pipe", "not a regular file"),
    dir_case(subdir_link, "/dlink", "symlink to a directory is not supported"),
    dir_case(quoted_file, '/q"uote.bin', "forbidden character '\"'"),
    dir_case(empty_dir, "", "firmware directory holds no files"),
]


def missing_list(tmp):
    return ["--list", tmp / "src" / "nope.list"], f"{tmp}/src/nope.list"


def list_is_dir(tmp):
    return ["--list", tmp / "src"], f"{tmp}/src"


def missing_dir(tmp):
    return ["--dir", tmp / "nope"], f"{tmp}/nope"


def dir_is_file(tmp):
    return ["--dir", tmp / "src" / "one.bin"], f"{tmp}/src/one.bin"


CASES += [
    pytest.param(missing_list, "cannot read firmware list: No such file", id="missing list"),
    pytest.param(list_is_dir, "cannot read firmware list: Is a directory", id="list is dir"),
    pytest.param(missing_dir, "firmware directory: no such directory", id="missing dir"),
    pytest.param(dir_is_file, "firmware directory: not a directory", id="dir is a file"),
]


@pytest.fixture
def tree(tmp_path):
    """Source files, a good firmware directory, and a good earlier run's outputs."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "one.bin").write_bytes(b"\x01")
    (src / "sub").mkdir()
    fwdir = tmp_path / "fwdir"
    fwdir.mkdir()
    (fwdir / "good.bin").write_bytes(b"good")
    good = src / "good.list"
    good.write_text("good.bin one.bin\n")
    result = run_fwembed("gen", "-q", "--list", good, "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    return tmp_path


def test_there_are_at_least_thirty_cases():
    """The table covers the classes the tool promises to refuse."""
    assert len(CASES) >= 30


@pytest.mark.parametrize("setup, message", CASES)
def test_bad_input_is_refused_cleanly(tree, setup, message):
    """Exit 1, a located message, no new output, earlier outputs intact."""
    args, where = setup(tree)
    before = snapshot(tree / "out")
    result = run_fwembed("gen", *args, "--out", tree / "out")
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith(f"{where}: error: "), result.stderr
    assert message in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert snapshot(tree / "out") == before

    fresh = run_fwembed("gen", *args, "--out", tree / "fresh")
    assert fresh.returncode == 1
    assert not (tree / "fresh").exists()


def test_output_below_a_file_is_refused(tree):
    """An output directory that cannot be created: exit 1, nothing written."""
    (tree / "blocker").write_text("a file, not a directory\n")
    result = run_fwembed("gen", "--list", tree / "src" / "good.list",
                         "--out", tree / "blocker" / "out")
    assert result.returncode == 1
    assert result.stderr.startswith(f"{tree}/blocker/out: error: output directory: ")
    assert (tree / "blocker").read_text() == "a file, not a directory\n"
