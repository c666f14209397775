"""The self-test KTAP parser and the verdicts, on recorded console logs."""

from conftest import ROOT
from fwembedlib.manifest import ManifestEntry, read
from fwharness import ktap
from fwharness.verify import format_verdict, verdicts

DATA = ROOT / "tests" / "data"
MANIFEST = read(DATA / "versatile-manifest.json")


def parse(name):
    return ktap.parse((DATA / name).read_text().splitlines(True))


def test_passing_boot():
    """A good boot: every entry reported, with size and digest, and totals."""
    log = parse("boot-pass.log")
    assert log.problems() == []
    assert log.entry_count == 7 and log.plan == 9 and log.totals == (9, 0, 0, 9)
    ramp = [e for e in log.entries if e.name == "fwembed/ramp-256.bin"][0]
    assert (ramp.ok, ramp.size, ramp.sha256[:12]) == (True, 256, "40aff2e9d2d8")
    assert [c.description for c in log.checks] == ["missing_name_is_enoent",
                                                   "into_buf_too_small_fails"]


def test_name_with_hash_and_comma_is_parsed_whole():
    """Names come last in quotes, so '#', ',' and spaces survive."""
    names = [e.name for e in parse("boot-pass.log").entries]
    assert "fwembed/hello, world+v2@rev=3 #1.txt" in names


def test_timestamps_are_ignored():
    """printk timestamps do not change the result."""
    assert parse("boot-timestamps.log").entries == parse("boot-pass.log").entries


def test_crash_is_detected():
    """A log that stops mid-test is flagged, not taken as a pass."""
    log = parse("boot-crash.log")
    assert len(log.entries) == 3
    problems = log.problems()
    assert any("ends early" in p for p in problems)
    assert any("7 entries announced, 3 reported" in p for p in problems)


def test_missing_selftest_is_reported():
    """A kernel without the self-test gives a clear problem, not an empty pass."""
    log = parse("boot-no-selftest.log")
    assert not log.found
    assert "CONFIG_FW_LOADER_BUILTIN_SELFTEST" in log.problems()[0]


def test_all_verdicts_pass_on_a_good_boot():
    """Every manifest entry and both checks pass."""
    results = verdicts(MANIFEST, parse("boot-pass.log"))
    assert len(results) == 9 and all(v.passed for v in results)


def test_failed_request_and_wrong_digest_fail():
    """A failed request and a digest mismatch are each a FAIL with a reason."""
    results = {v.name: v for v in verdicts(MANIFEST, parse("boot-fail.log"))}
    assert results["fwembed/ramp-256.bin"].why == "request failed with error -2"
    assert results["fwembed/random-4k.bin"].why.startswith("sha256 000000000000, manifest says")
    assert sum(not v.passed for v in results.values()) == 2


def test_unreported_entries_fail():
    """An entry the kernel never reported fails."""
    results = verdicts(MANIFEST, parse("boot-crash.log"))
    missing = [v for v in results if v.why == "not reported by the kernel"]
    assert len(missing) == 4


def test_extra_builtin_entries_are_listed():
    """Entries built in by other means (EXTRA_FIRMWARE) appear as extra verdicts."""
    results = verdicts(MANIFEST[:-1], parse("boot-pass.log"),
                       extra_firmware={"fwembed/seven.bin"})
    assert results[6].name == "fwembed/seven.bin" and results[6].passed


def test_entry_unknown_to_the_manifest_fails():
    """A kernel entry that neither the manifest nor --extra-firmware names fails."""
    results = verdicts(MANIFEST[:-1], parse("boot-pass.log"))
    assert results[6].name == "fwembed/seven.bin" and not results[6].passed
    assert results[6].why == "not in the manifest: a stale or foreign table entry"


def test_install_only_entries_are_not_expected_at_boot():
    """A manifest entry with "builtin": false gets no verdict: it is not built in."""
    installed = ManifestEntry(name="fs/only.bin", size=1, sha256="00" * 32, stored_size=1,
                              builtin=False)
    results = verdicts(MANIFEST + [installed], parse("boot-pass.log"))
    assert len(results) == 9 and all(v.passed for v in results)


def test_verdict_line_format():
    """One line per entry: status, size, short digest, name."""
    line = format_verdict(verdicts(MANIFEST, parse("boot-pass.log"))[4])
    assert line == "  PASS        256 B  40aff2e9d2d8  fwembed/ramp-256.bin"
