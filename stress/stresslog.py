"""Reading the console log of a "make stress" boot.

The sanitizer kernel runs fw_builtin_stress (kernel patch 0016), driven by
stress/init.c. What counts, and what this module finds in the log:

- Sanitizer and kernel reports, each counted once by the line that starts
  it (REPORTS below): KASAN, kmemleak, lockdep, debug objects, WARN and
  BUG, Oops and panics, hung tasks and stalls. A sanitizer that switches
  itself off counts too, since it then checks nothing. kmemleak's "Cannot
  allocate a scan area, scanning the full object", which fault injection
  causes, does not: kmemleak then scans more, never less.
- The stress test's summary, and any thread or request it found hung::

      # fw_builtin_stress: request ok=70000 failed=0
      # fw_builtin_stress: cycles=80000 ok=80000 failed=0 hung=0
      ok 1 fw_builtin_stress
      # fw_builtin_stress: hang: thread 3 made no progress for 600 s

- The init-only thread's summary: init-only entries requested, round
  after round, while the kernel frees them::

      # fw_builtin_stress: init: entries=3 rounds=310 served=627 gone=3 failed=0
      ok 1 fw_builtin_stress_init

- The fault injection test's summary::

      # fw_builtin_stress: fault: requests=2400 ok=1790 enomem=610 bad=0
      ok 1 fw_builtin_stress_fault

- The firmware cache cycle: the test registers every entry for the cache,
  and a test suspend caches each one and uncaches it after resume, which
  the loader's own debug lines show::

      # fw_builtin_stress: cache: names=8 failed=0
      firmware_class: cache_firmware: fwembed/seven.bin ret=0
      firmware_class: uncache_firmware: fwembed/seven.bin

- The init's steps (``fwembed-stress: PATH <- VALUE: ok``) and kmemleak's
  report, which the init copies between two marker lines; a report whose
  end marker is missing counts as missing.

Kernel messages may be interleaved with everything else; timestamps are
ignored.
"""

import dataclasses
import re

from fwharness.ktap import clean

SUITE = "fw_builtin_stress"
KIND_RE = re.compile(r"# " + SUITE + r": (request|into_buf|nowait|miss) ok=(\d+) failed=(\d+)\Z")
CYCLES_RE = re.compile(r"# " + SUITE + r": cycles=(\d+) ok=(\d+) failed=(\d+)"
                       r"(?: hung=(\d+))?\Z")
HANG_RE = re.compile(r"# " + SUITE + r": hang: (.*)\Z")
CACHE_RE = re.compile(r"# " + SUITE + r": cache: names=(\d+) failed=(\d+)\Z")
CACHED_RE = re.compile(r"(?<![a-z_])cache_firmware: (.*) ret=(-?\d+)\Z")
UNCACHED_RE = re.compile(r"(?<![a-z_])uncache_firmware: (.*)\Z")
TIME_RE = re.compile(r"# " + SUITE + r": threads=(\d+) entries=(\d+) time=(\d+) s\Z")
FAULT_RE = re.compile(r"# " + SUITE + r": fault: requests=(\d+) ok=(\d+) enomem=(\d+) bad=(\d+)\Z")
INIT_RE = re.compile(r"# " + SUITE + r": init: entries=(\d+) rounds=(\d+) served=(\d+) "
                     r"gone=(\d+) failed=(\d+)\Z")
RESULT_RE = re.compile(r"(not )?ok 1 (" + SUITE + r"(?:_fault|_init)?)(?: # (SKIP.*|hang))?\Z")
STEP_RE = re.compile(r"fwembed-stress: (/\S+) <- (\S+): (.*)\Z")
LEAKS_BEGIN = "fwembed-stress: kmemleak report begin"
LEAKS_END = "fwembed-stress: kmemleak report end"
DONE = "fwembed-stress: done"

# (kind, pattern): the first pattern that matches a line names its kind.
# Searched anywhere in the line, since a report may start mid-line.
REPORTS = [
    ("KASAN", re.compile(r"BUG: KASAN:|kasan: .*disabl")),
    ("kmemleak", re.compile(r"unreferenced object 0x|kmemleak: \d+ new suspected memory leaks"
                            r"|kmemleak: .*disabled|kmemleak: Cannot allocate a kmemleak_object"
                            r"|kmemleak: Out of memory")),
    ("lockdep", re.compile(r"WARNING: (possible|inconsistent|suspicious|bad unlock|lock held"
                           r"|held lock)|turning off the locking correctness validator"
                           r"|DEBUG_LOCKS_WARN_ON|BUG: (Invalid wait context|MAX_LOCK)|INFO: (possible|trying to register"
                           r"|lockdep is turned off)")),
    ("debugobjects", re.compile(r"ODEBUG:")),
    ("Oops/panic", re.compile(r"Internal error: Oops|\bOops\b|Kernel panic")),
    ("WARN/BUG", re.compile(r"WARNING:|BUG:|------------\[ cut here \]------------")),
    ("hang/stall", re.compile(r"INFO: task .* blocked for more than|soft lockup|hard LOCKUP"
                              r"|rcu: INFO: rcu_\w+ (self-)?detected stall")),
]


@dataclasses.dataclass
class StressLog:
    """What a stress boot's console showed."""

    reports: list = dataclasses.field(default_factory=list)  # (kind, line)
    kinds: dict = dataclasses.field(default_factory=dict)     # name -> (ok, failed)
    cycles: tuple = None          # (done, ok, failed)
    threads: int = None
    entries: int = None
    seconds: int = None
    fault: tuple = None           # (requests, ok, enomem, bad)
    init: tuple = None            # (entries, rounds, served, gone, failed)
    hangs: list = dataclasses.field(default_factory=list)    # what the test found hung
    cache: tuple = None           # (names registered, failed)
    cached: dict = dataclasses.field(default_factory=dict)   # name -> cache_firmware() result
    uncached: set = dataclasses.field(default_factory=set)
    results: dict = dataclasses.field(default_factory=dict)  # suite -> "ok"/"not ok"/"SKIP ..."
    failed_steps: list = dataclasses.field(default_factory=list)
    leak_report: list = None      # lines between the kmemleak markers
    done: bool = False

    def count(self, kind):
        return sum(1 for k, _ in self.reports if k == kind)

    @property
    def leaks(self):
        """Objects in kmemleak's report, or None if the report is missing."""
        if self.leak_report is None:
            return None
        return sum(1 for line in self.leak_report if line.startswith("unreferenced object"))

    def problems(self, want_cycles, want_fault=True, want_init=False):
        """Why the run fails, as messages; empty if it passed."""
        found = [f"{len(self.reports)} kernel report(s), the first: {self.reports[0][1]}"] \
            if self.reports else []
        if self.cycles is None:
            found.append(f"no '# {SUITE}: cycles=' summary")
        elif self.cycles != (want_cycles, want_cycles, 0):
            done, good, bad = self.cycles
            found.append(f"{good} of {want_cycles} cycles ok ({done} done, {bad} failed)")
        if self.results.get(SUITE) not in (None, "ok"):
            found.append(f"{SUITE}: {self.results[SUITE]}")
        for kind, (_, bad) in sorted(self.kinds.items()):
            if bad:
                found.append(f"{bad} {kind} request(s) failed")
        found += [f"hang: {hang}" for hang in self.hangs]
        if want_fault:
            found += self._fault_problems()
        if want_init or self.init is not None or SUITE + "_init" in self.results:
            found += self._init_problems()
        found += self._cache_problems()
        if self.leak_report is None:
            found.append("no kmemleak report")
        for path, value, outcome in self.failed_steps:
            found.append(f"init could not write {value} to {path}: {outcome}")
        if not self.done:
            found.append("the init did not finish")
        return found

    def _cache_problems(self):
        """The cache cycle must cache every registered name and uncache it."""
        if self.cache is None:
            return ["no firmware cache cycle"]
        names, failed = self.cache
        found = [f"firmware cache: {failed} name(s) could not be registered"] if failed else []
        good = {name for name, ret in self.cached.items() if ret == 0}
        if len(good) != names:
            found.append(f"firmware cache: {len(good)} of {names} names cached")
        if good - self.uncached:
            found.append(f"firmware cache: {len(good - self.uncached)} cached name(s) never "
                         f"uncached, such as {sorted(good - self.uncached)[0]}")
        return found

    def _init_problems(self):
        """Every init-only entry served, then refused with -ENOENT, nothing else."""
        result = self.results.get(SUITE + "_init")
        if self.init is None or result is None:
            return ["no init-only summary"]
        entries, _, served, gone, failed = self.init
        found = []
        if failed:
            found.append(f"init-only: {failed} request(s) went wrong")
        if gone != entries:
            found.append(f"init-only: {gone} of {entries} entries refused after boot")
        if not served:
            found.append("init-only: no entry served while the kernel booted")
        if result != "ok" and not found:
            found.append(f"{SUITE}_init: {result}")
        return found

    def _fault_problems(self):
        result = self.results.get(SUITE + "_fault")
        if self.fault is None or result is None:
            return ["no fault injection summary"]
        requests, _, enomem, bad = self.fault
        found = []
        if bad:
            found.append(f"fault injection: {bad} request(s) failed otherwise than cleanly "
                         "with -ENOMEM")
        if not enomem:
            found.append("fault injection: no request failed, so nothing was tested")
        if not requests:
            found.append("fault injection: no requests")
        if result != "ok" and not found:
            found.append(f"{SUITE}_fault: {result}")
        return found


def classify(line):
    """The kind of kernel report that ``line`` starts, or None."""
    for kind, pattern in REPORTS:
        if pattern.search(line):
            return kind
    return None


def parse(lines):
    """Parse console lines into a StressLog."""
    log = StressLog()
    leaks = None
    for raw in lines:
        line = clean(raw)
        if leaks is not None:
            if line == LEAKS_END:
                log.leak_report, leaks = leaks, None
            else:
                leaks.append(line)
        elif line == LEAKS_BEGIN:
            leaks = []
        _parse_line(log, line)
    return log


def _parse_line(log, line):
    kind = classify(line)
    if kind:
        log.reports.append((kind, line))
        return
    if match := KIND_RE.match(line):
        log.kinds[match[1]] = (int(match[2]), int(match[3]))
    elif match := CYCLES_RE.match(line):
        log.cycles = tuple(int(n) for n in match.groups()[:3])
    elif match := HANG_RE.match(line):
        log.hangs.append(match[1])
    elif match := CACHE_RE.match(line):
        log.cache = (int(match[1]), int(match[2]))
    elif match := CACHED_RE.search(line):
        log.cached[match[1]] = int(match[2])
    elif match := UNCACHED_RE.search(line):
        log.uncached.add(match[1])
    elif match := TIME_RE.match(line):
        log.threads, log.entries, log.seconds = (int(n) for n in match.groups())
    elif match := FAULT_RE.match(line):
        log.fault = tuple(int(n) for n in match.groups())
    elif match := INIT_RE.match(line):
        log.init = tuple(int(n) for n in match.groups())
    elif match := RESULT_RE.match(line):
        log.results[match[2]] = match[3] or ("not ok" if match[1] else "ok")
    elif match := STEP_RE.match(line):
        if match[3] != "ok":
            log.failed_steps.append(match.groups())
    elif line == DONE:
        log.done = True


def summary(log, want_threads, want_cycles):
    """The lines the harness prints about a run."""
    want = want_threads * want_cycles
    cycles = "missing" if log.cycles is None else \
        f"{log.cycles[1]} of {want} ok, {log.cycles[2]} failed " \
        f"({want_threads} threads x {want_cycles}, {log.entries} entries, {log.seconds} s)"
    kinds = ", ".join(f"{kind} {ok}/{ok + bad}" for kind, (ok, bad) in log.kinds.items())
    fault = "missing" if log.fault is None else \
        "{} requests, {} ok, {} -ENOMEM, {} bad".format(*log.fault)
    leaks = "missing" if log.leaks is None else f"{log.leaks} unreferenced objects"
    cache = "missing" if log.cache is None else \
        f"{sum(ret == 0 for ret in log.cached.values())} of {log.cache[0]} names cached, " \
        f"{len(log.uncached & set(log.cached))} uncached"
    init = "missing" if log.init is None else \
        "{} entries, {} rounds: {} served, {} refused once freed, {} wrong".format(*log.init)
    counts = ", ".join(f"{kind} {log.count(kind)}" for kind, _ in REPORTS)
    return [
        f"stress cycles:      {cycles}",
        f"requests ok:        {kinds or 'missing'}",
        f"init-only entries:  {init}",
        f"fault injection:    {fault}",
        f"firmware cache:     {cache}",
        f"kmemleak report:    {leaks}",
        f"kernel reports:     {counts}",
    ]
