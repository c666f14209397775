"""What make check installs and runs: packages up front, no installs from tests."""

import re
import subprocess

from conftest import ROOT, make


def install_lines(*goals):
    """The install-deps commands that 'make -n GOALS' would run."""
    result = make("-n", *goals)
    assert result.returncode == 0, result.stderr
    return [line for line in result.stdout.splitlines() if "scripts/install-deps" in line]


def test_check_mode_names_missing_packages_and_installs_nothing():
    """install-deps --check fails on a missing package, names it, and runs no apt-get."""
    result = subprocess.run([ROOT / "scripts" / "install-deps", "--check", "make",
                             "fwembed-no-such-package"], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 1
    assert "missing Debian packages: fwembed-no-such-package\n" in result.stderr
    assert "  RUN     apt-get" not in result.stdout


def test_tests_run_make_in_check_mode():
    """The tests' make passes INSTALL_DEPS=no, which turns every install into a check."""
    assert all(line.split()[1] == "--check" for line in install_lines("fw"))


def test_make_fw_needs_only_python_and_the_compressors():
    """make fw installs no toolchain and no linux-source just to generate a table."""
    packages = " ".join(install_lines("fw")).split()[2:]
    assert sorted(packages) == ["python3", "xz-utils", "zstd"]


def test_test_quick_pulls_in_no_kernel_source_and_no_qemu():
    """make test-quick installs what the unit tests need, not linux-source or QEMU."""
    packages = " ".join(install_lines("test-quick")).split()
    assert "python3-pytest" in packages and "python3-pyelftools" in packages
    assert not [p for p in packages if p.startswith(("linux-source", "qemu"))]


def test_no_test_runs_apt_get():
    """No test or fuzzer runs apt-get or scripts/install-deps, except this file's check."""
    sources = [p for p in sorted((ROOT / "tests").glob("*.py")) + sorted(
        (ROOT / "stress").glob("*.py")) if p.name != "test_deps.py"]
    command = re.compile(r"""["']apt-get["']|["']apt["']|install-deps["'/]""")
    offenders = [p.name for p in sources if command.search(p.read_text())]
    assert offenders == []


def test_make_check_fuzzes_the_generator_briefly():
    """make check collects stress/ too, and runs its fuzzer with 50 examples per test."""
    result = make("-n", "check")
    assert result.returncode == 0, result.stderr
    assert "FWEMBED_FUZZ_EXAMPLES=50 /usr/bin/python3 -m pytest" in result.stdout
    testpaths = re.search(r"^testpaths = (.*)$", (ROOT / "pytest.ini").read_text(), re.M)
    assert testpaths.group(1).split() == ["tests", "stress"]


def test_make_check_runs_the_tests_side_by_side():
    """make check runs pytest on CHECK_WORKERS xdist workers (2 unless set),
    each build folder's tests on one worker (their xdist_group)."""
    for args, workers in (((), "2"), (("CHECK_WORKERS=3",), "3")):
        result = make("-n", "check", *args)
        assert result.returncode == 0, result.stderr
        assert f" -n {workers} --dist loadgroup" in result.stdout


def test_make_check_installs_every_boards_packages():
    """make check installs the packages each board folder names, as fwembed reads them."""
    result = make("-n", "check")
    line = [line for line in result.stdout.splitlines() if "$(for b in boards/*/" in line]
    assert len(line) == 1
    listed = subprocess.run(["bash", "-c", "echo " + line[0].split("--check", 1)[1]],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    assert {"u-boot-qemu", "gcc-aarch64-linux-gnu", "mtools", "fdisk"} <= set(listed)
