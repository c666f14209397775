"""The kernel's own firmware selftests in QEMU (make kselftest).

fw_run_tests.sh runs on the versatile board's kernel and on the same
configuration built without the series; the patched kernel must pass every
check the unpatched one passes, with the same skips. fw_builtin.sh, which
the series adds, requests every built-in entry through test_firmware and
checks it against the manifest. The parsers are tested first, on lines as
the scripts print them.
"""

import json
import subprocess

import pytest

from conftest import ROOT, build_group, run_command
from fwembedlib.manifest import read as read_manifest
from fwharness import kselftest

RESULTS = ROOT / "build" / "kselftest" / "versatile" / "results.json"
MANIFEST = ROOT / "build" / "versatile" / "fw" / "manifest.json"

FW_RUN_TESTS_LINES = """\
Running namespace test: 
Testing with firmware in parent namespace (assumed to be same file system as PID1)
OK
-----------------------------------------------------
Running kernel configuration test 1 -- rare
./fw_filesystem.sh: filesystem loading works
./fw_filesystem.sh: firmware loading: platform trigger not present, ignoring test

Testing with the file present...
Batched request_firmware() normal try #1: OK
Batched request_firmware() normal try #1: OK
usermode helper disabled so ignoring test
./fw_filesystem.sh: filesystem loading works
./fw_upload.sh: firmware upload for fw1 works
Running kernel configuration test 2 -- distro
./fw_filesystem.sh: filesystem loading works
""".splitlines()


def test_checks_are_named_by_configuration_and_part():
    assert kselftest.checks(FW_RUN_TESTS_LINES) == [
        ("namespace test", "pass"),
        ("config 1 / fw_filesystem.sh: filesystem loading works", "pass"),
        ("config 1 / fw_filesystem.sh: firmware loading: platform trigger not present, "
         "ignoring test", "skip"),
        ("config 1 / the file present / Batched request_firmware() normal try #1: OK", "pass"),
        ("config 1 / the file present / Batched request_firmware() normal try #1: OK (2)",
         "pass"),
        ("config 1 / the file present / usermode helper disabled so ignoring test", "skip"),
        ("config 1 / the file present / fw_filesystem.sh: filesystem loading works", "pass"),
        ("config 1 / fw_upload.sh: firmware upload for fw1 works", "pass"),
        ("config 2 / fw_filesystem.sh: filesystem loading works", "pass")]


def test_a_check_lost_or_skipped_only_when_patched_is_a_regression():
    unpatched = [("a", "pass"), ("b", "pass"), ("c", "skip")]
    patched = [("a", "pass"), ("c", "pass"), ("d", "skip")]
    assert kselftest.regressions(unpatched, patched) == [
        "b: passes unpatched, not reached patched",
        "c: skipped unpatched only",
        "d: skipped patched only"]
    assert kselftest.regressions(unpatched, unpatched + [("e", "pass")]) == []


def test_tap_lines_give_pass_skip_and_fail():
    lines = ["TAP version 13", "1..3", "ok 1 whole: a b", "ok 2 partial: x # SKIP too small",
             "# batched: y: request #0: SHA-256 differs", "not ok 3 batched: y"]
    assert kselftest.tap_results(lines) == [("whole: a b", "pass"), ("partial: x", "skip"),
                                            ("batched: y", "fail")]


def test_script_output_is_read_between_its_markers():
    console = ["Booting Linux", "fwembed-kselftest: begin fw_builtin.sh", "ok 1 a",
               "fwembed-kselftest: end fw_builtin.sh status=0",
               "fwembed-kselftest: begin fw_run_tests.sh", "OK"]
    runs = kselftest.script_runs(console)
    assert runs["fw_builtin.sh"].lines == ["ok 1 a"]
    assert runs["fw_builtin.sh"].status == 0
    assert runs["fw_run_tests.sh"].status is None


def test_a_script_that_did_not_end_with_status_0_is_a_problem():
    console = ["fwembed-kselftest: begin fw_run_tests.sh", "OK",
               "fwembed-kselftest: end fw_run_tests.sh status=143",
               "fwembed-kselftest: begin fw_builtin.sh", "ok 1 a",
               "fwembed-kselftest: end fw_builtin.sh status=0"]
    runs = kselftest.script_runs(console)
    assert kselftest.script_problem("patched", runs["fw_run_tests.sh"]) == \
        "patched: fw_run_tests.sh stopped after 600 s (exit status 143)"
    assert kselftest.script_problem("patched", kselftest.ScriptRun(["x"], 1)) == \
        "patched: fw_run_tests.sh: exit status 1"
    unended = kselftest.script_runs(console[:2])["fw_run_tests.sh"]
    assert kselftest.script_problem("unpatched", unended) == \
        "unpatched: fw_run_tests.sh did not finish"
    assert kselftest.script_problem("unpatched", None) == \
        "unpatched: fw_run_tests.sh did not finish"
    assert kselftest.script_problem("patched", runs["fw_builtin.sh"]) is None


def test_a_script_run_takes_its_time_from_the_guest_uptime():
    console = ["fwembed-kselftest: begin fw_run_tests.sh", "OK",
               "fwembed-kselftest: end fw_run_tests.sh status=0",
               "fwembed-kselftest: uptime fw_run_tests.sh 14.54 223.80"]
    assert kselftest.script_runs(console)["fw_run_tests.sh"].seconds == 209.26
    assert kselftest.script_runs(console[:3])["fw_run_tests.sh"].seconds is None


def test_a_stopped_script_names_the_requests_still_waiting():
    console = ["fwembed-kselftest: begin fw_run_tests.sh", "OK",
               "fwembed-kselftest: end fw_run_tests.sh status=143",
               "fwembed-kselftest: waiting fw_run_tests.sh test-firmware-a.bin",
               "fwembed-kselftest: waiting fw_run_tests.sh dir!b.bin"]
    run = kselftest.script_runs(console)["fw_run_tests.sh"]
    assert run.lines == ["OK"]
    assert kselftest.script_problem("unpatched", run) == \
        "unpatched: fw_run_tests.sh stopped after 600 s (exit status 143); " \
        "still waiting for the sysfs fallback: test-firmware-a.bin, dir!b.bin"


def test_both_guests_get_the_patched_trees_scripts(tmp_path):
    """The unpatched guest's initramfs holds the scripts its own tree has,
    with the patched tree's content, and not the scripts the series adds."""
    userland = tmp_path / "userland"
    for source, _ in kselftest.USERLAND:
        (userland / source).parent.mkdir(parents=True, exist_ok=True)
        (userland / source).write_bytes(b"ELF")
    trees = {}
    for name, scripts in (("unpatched", {"fw_filesystem.sh": "racy\n"}),
                          ("patched", {"fw_filesystem.sh": "fixed\n", "fw_builtin.sh": "new\n"})):
        selftests = tmp_path / name / kselftest.SELFTESTS
        selftests.mkdir(parents=True)
        for script, text in scripts.items():
            (selftests / script).write_text(text)
        trees[name] = tmp_path / name
    (tmp_path / "fw_namespace").write_bytes(b"ELF")
    image = tmp_path / "initramfs.cpio"
    image.write_bytes(kselftest.initramfs(userland, trees["unpatched"], trees["patched"],
                                          tmp_path / "fw_namespace"))
    listed = subprocess.run(["cpio", "-it", "--quiet"], stdin=image.open("rb"),
                            capture_output=True, text=True, check=True).stdout.split()
    assert "kselftest/firmware/fw_filesystem.sh" in listed
    assert "kselftest/firmware/fw_builtin.sh" not in listed
    script = subprocess.run(["cpio", "-i", "--to-stdout", "--quiet",
                             "kselftest/firmware/fw_filesystem.sh"], stdin=image.open("rb"),
                            capture_output=True, text=True, check=True).stdout
    assert script == "fixed\n"


@pytest.fixture(scope="module")
def results():
    run = run_command("make kselftest")
    assert RESULTS.is_file(), run.stdout[-4000:] + run.stderr[-4000:]
    return run, json.loads(RESULTS.read_text())


@pytest.mark.kernel
@build_group("versatile")
def test_make_kselftest_passes(results):
    run, data = results
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert data["problems"] == []


@pytest.mark.kernel
@build_group("versatile")
def test_the_unpatched_kernel_passes_the_selftests(results):
    _, data = results
    unpatched = data["unpatched"]["fw_run_tests"]
    assert unpatched["status"] == 0
    assert sum(r == "pass" for _, r in unpatched["checks"]) >= 100


@pytest.mark.kernel
@build_group("versatile")
def test_the_patched_kernel_passes_what_the_unpatched_one_passes(results):
    _, data = results
    unpatched = [tuple(c) for c in data["unpatched"]["fw_run_tests"]["checks"]]
    patched = [tuple(c) for c in data["patched"]["fw_run_tests"]["checks"]]
    assert kselftest.regressions(unpatched, patched) == []
    assert data["patched"]["fw_run_tests"]["status"] == 0


@pytest.mark.kernel
@build_group("versatile")
def test_fw_builtin_checks_every_built_in_entry(results):
    _, data = results
    builtin = data["patched"]["fw_builtin"]
    assert builtin["status"] == 0
    outcome = {d: r for d, r in builtin["results"]}
    entries = [e for e in read_manifest(MANIFEST) if e.builtin]
    for e in entries:
        if e.lifetime == "init":
            assert outcome[f"freed: {e.name}"] == "pass"
        else:
            assert outcome[f"whole: {e.name}"] == "pass"
            assert outcome[f"partial: {e.name}"] == ("skip" if e.size < 2 else "pass")
    assert "fail" not in outcome.values()
