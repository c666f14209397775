"""The patch series' KUnit suite, run by the kernel's own kunit.py in QEMU."""

import re

import pytest

from conftest import ROOT, make

pytestmark = pytest.mark.kernel
SUITE_SOURCE = ROOT / "build" / "linux-6.1" / "drivers/base/firmware_loader/builtin/builtin_kunit.c"


def test_kunit_suite_passes():
    """make kunit builds the KUnit kernel, and every case of the suite passes."""
    result = make("kunit")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    cases = re.findall(r"^\s*KUNIT_CASE\((\w+)\)", SUITE_SOURCE.read_text(), re.M)
    assert len(cases) >= 10
    for case in cases:
        assert re.search(rf"\[PASSED\] {case}\b", output), f"{case} did not pass"
    summary = re.search(r"Testing complete\. Ran (\d+) tests: passed: (\d+)", output)
    assert summary and summary.group(1) == summary.group(2) == str(len(cases)), output[-2000:]
