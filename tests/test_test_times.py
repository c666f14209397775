"""scripts/test-times: seconds per test file, from pytest's JUnit XML."""

import subprocess

from conftest import PYTHON, ROOT

SCRIPT = ROOT / "scripts" / "test-times"
XML = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.test_quick" name="a" time="1.5"/>
<testcase classname="tests.test_slow" name="b" time="100.2"/>
<testcase classname="tests.test_quick" name="c" time="2.0"/>
</testsuite></testsuites>
"""


def run(*args):
    return subprocess.run([PYTHON, SCRIPT, *map(str, args)], capture_output=True, text=True,
                          check=False)


def test_files_are_summed_and_sorted_slowest_first(tmp_path):
    (tmp_path / "pytest.xml").write_text(XML)
    result = run(tmp_path / "pytest.xml")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "     100 s     1 tests  test_slow",
        "       4 s     2 tests  test_quick",
        "     104 s     3 tests  in all"]


def test_missing_file_is_a_located_error(tmp_path):
    result = run(tmp_path / "none.xml")
    assert result.returncode == 1
    assert result.stderr.startswith(f"{tmp_path / 'none.xml'}: error: ")
    assert "Traceback" not in result.stderr
