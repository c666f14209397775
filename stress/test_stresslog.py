"""Reading "make stress" console logs (stress/stresslog.py).

The logs under stress/data/ are cut down from a stress boot: stress-pass.log
is a passing run of 2 threads x 3 cycles, stress-reports.log the same with
a KASAN report, a lockdep warning and a kmemleak leak added, and
stress-short.log one whose requests failed and whose init never finished.
"""

import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "harness")]

import stresslog  # noqa: E402  pylint: disable=wrong-import-position

DATA = HERE / "data"


def parse(name):
    return stresslog.parse((DATA / name).read_text().splitlines(keepends=True))


def test_passing_run_has_no_problems():
    """A clean run of 2 x 3 cycles passes when 6 cycles are expected."""
    assert parse("stress-pass.log").problems(6) == []


def test_passing_run_figures():
    """The summary lines are read: cycles, each request kind, fault injection."""
    log = parse("stress-pass.log")
    assert log.cycles == (6, 6, 0)
    assert log.kinds["nowait"] == (48, 0)
    assert log.fault == (60, 41, 19, 0)
    assert (log.threads, log.entries, log.seconds) == (2, 8, 2)
    assert log.leaks == 0 and log.done


def test_fault_noise_is_not_a_report():
    """Allocation failure messages of the fault test are not counted as reports."""
    assert parse("stress-pass.log").reports == []


def test_wrong_cycle_count_fails():
    """A run that did fewer cycles than asked for fails, whatever it printed."""
    problems = parse("stress-pass.log").problems(80000)
    assert problems == ["6 of 80000 cycles ok (6 done, 0 failed)"]


def test_reports_are_counted_by_kind():
    """KASAN, lockdep and kmemleak reports are each counted once."""
    log = parse("stress-reports.log")
    assert [kind for kind, _ in log.reports] == ["KASAN", "lockdep", "kmemleak"]
    assert log.leaks == 1


def test_reports_fail_the_run():
    """Any report fails a run whose counts are right, and the first is named."""
    problems = parse("stress-reports.log").problems(6)
    assert problems == ["3 kernel report(s), the first: "
                        "BUG: KASAN: use-after-free in builtin_fw_decode+0x1c/0x1a0"]


def test_short_run_problems():
    """Failed requests, a bad fault result and a missing leak report all count."""
    assert parse("stress-short.log").problems(6) == [
        "5 of 6 cycles ok (6 done, 1 failed)",
        "fw_builtin_stress: not ok",
        "1 miss request(s) failed",
        "fault injection: 1 request(s) failed otherwise than cleanly with -ENOMEM",
        "no firmware cache cycle",
        "no kmemleak report",
        "the init did not finish",
    ]


def test_no_injected_failure_fails():
    """A fault test in which nothing failed tested nothing: the run fails."""
    lines = (DATA / "stress-pass.log").read_text().replace("ok=41 enomem=19", "ok=60 enomem=0")
    problems = stresslog.parse(lines.splitlines()).problems(6)
    assert problems == ["fault injection: no request failed, so nothing was tested"]


def test_empty_log():
    """A console with nothing on it names every missing part."""
    assert stresslog.parse([]).problems(6) == [
        "no '# fw_builtin_stress: cycles=' summary", "no fault injection summary",
        "no firmware cache cycle", "no kmemleak report", "the init did not finish"]


INIT_PASS = ["[  3.0] # fw_builtin_stress: init: entries=3 rounds=310 served=627 gone=3 failed=0",
             "[  3.1] ok 1 fw_builtin_stress_init"]


def with_init(lines):
    return (DATA / "stress-pass.log").read_text().splitlines() + lines


def test_init_only_race_is_read():
    """The init-only summary passes when every entry was served, then refused."""
    log = stresslog.parse(with_init(INIT_PASS))
    assert log.init == (3, 310, 627, 3, 0)
    assert log.problems(6, want_init=True) == []
    assert stresslog.summary(log, 2, 3)[2] == \
        "init-only entries:  3 entries, 310 rounds: 627 served, 3 refused once freed, 0 wrong"


def test_init_only_entry_served_after_it_was_refused_fails():
    """A request that went wrong, or an entry never refused, fails the run."""
    bad = [INIT_PASS[0].replace("gone=3 failed=0", "gone=2 failed=1"),
           "[  3.1] not ok 1 fw_builtin_stress_init"]
    assert stresslog.parse(with_init(bad)).problems(6) == [
        "init-only: 1 request(s) went wrong", "init-only: 2 of 3 entries refused after boot"]


def test_missing_init_only_summary_fails_when_wanted():
    """A list with init-only entries must show their summary."""
    log = stresslog.parse(with_init([]))
    assert log.problems(6) == []
    assert log.problems(6, want_init=True) == ["no init-only summary"]


def test_failed_init_step_fails():
    """An init step that did not work, such as setting up fault injection, fails the run."""
    lines = (DATA / "stress-pass.log").read_text().replace("task-filter <- Y: ok",
                                                          "task-filter <- Y: No such file")
    assert stresslog.parse(lines.splitlines()).problems(6) == [
        "init could not write Y to /debug/failslab/task-filter: No such file"]


@pytest.mark.parametrize("line, kind", [
    ("[  1.0] BUG: KASAN: slab-out-of-bounds in memcpy+0x1/0x2", "KASAN"),
    ("[  1.0] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)",
     "kmemleak"),
    ("[  1.0] kmemleak: Kernel memory leak detector disabled", "kmemleak"),
    ("[  1.0] kmemleak: Cannot allocate a kmemleak_object structure", "kmemleak"),
    ("[  1.0] kmemleak: Cannot allocate a scan area, scanning the full object", None),
    ("[  1.0] BUG: Invalid wait context", "lockdep"),
    ("[  1.0] WARNING: possible recursive locking detected", "lockdep"),
    ("[  1.0] WARNING: inconsistent lock state", "lockdep"),
    ("[  1.0] ODEBUG: free active (active state 0) object type: work_struct", "debugobjects"),
    ("[  1.0] WARNING: CPU: 0 PID: 1 at mm/vmalloc.c:330 vfree+0x2c/0x60", "WARN/BUG"),
    ("[  1.0] BUG: sleeping function called from invalid context at mm/slab.h:723",
     "WARN/BUG"),
    ("[  1.0] Internal error: Oops: 5 [#1] SMP ARM", "Oops/panic"),
    ("[  1.0] Kernel panic - not syncing: Fatal exception", "Oops/panic"),
    ("[  1.0] INFO: task init:1 blocked for more than 120 seconds.", "hang/stall"),
    ("[  1.0] firmware_loader: built-in firmware a.bin: cannot decompress: -12", None),
    ("[  1.0]  warn_alloc from __vmalloc_node_range+0x5c4/0x6e8", None),
])
def test_classify(line, kind):
    """Each kind of report is recognised by its first line; ordinary lines are not."""
    assert stresslog.classify(line) == kind


def test_summary_lines():
    """The harness's summary names the counts it judged."""
    lines = stresslog.summary(parse("stress-pass.log"), 2, 3)
    assert lines[0] == "stress cycles:      6 of 6 ok, 0 failed (2 threads x 3, 8 entries, 2 s)"
    assert lines[2] == "init-only entries:  missing"
    assert lines[3] == "fault injection:    60 requests, 41 ok, 19 -ENOMEM, 0 bad"
    assert lines[4] == "firmware cache:     2 of 2 names cached, 2 uncached"
    assert lines[6].startswith("kernel reports:     KASAN 0, kmemleak 0, lockdep 0,")


def test_firmware_cache_cycle_is_read():
    """Registered names, and each one's cache and uncache lines, are read."""
    log = parse("stress-pass.log")
    assert log.cache == (2, 0)
    assert log.cached == {"fwembed/seven.bin": 0, "fwembed/ramp-256.bin": 0}
    assert log.uncached == {"fwembed/seven.bin", "fwembed/ramp-256.bin"}


def test_name_cached_but_never_uncached_fails():
    """A cached entry that is not dropped after resume fails the run."""
    lines = (DATA / "stress-pass.log").read_text().replace(
        "uncache_firmware: fwembed/ramp-256.bin", "uncache_firmware: something-else")
    assert stresslog.parse(lines.splitlines()).problems(6) == [
        "firmware cache: 1 cached name(s) never uncached, such as fwembed/ramp-256.bin"]


def test_name_that_failed_to_cache_fails():
    """A name whose caching failed (ret != 0) counts as not cached."""
    lines = (DATA / "stress-pass.log").read_text().replace(
        "cache_firmware: fwembed/seven.bin ret=0", "cache_firmware: fwembed/seven.bin ret=-12")
    assert stresslog.parse(lines.splitlines()).problems(6) == [
        "firmware cache: 1 of 2 names cached"]


def test_hang_fails_the_run():
    """A thread or request the test found hung fails the run, and is named."""
    lines = (DATA / "stress-pass.log").read_text().replace(
        "cycles=6 ok=6 failed=0 hung=0",
        "cycles=6 ok=6 failed=0 hung=1\n# fw_builtin_stress: hang: thread 1 made no "
        "progress for 600 s")
    assert stresslog.parse(lines.splitlines()).problems(6) == [
        "hang: thread 1 made no progress for 600 s"]
