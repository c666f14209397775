"""Parsing the built-in firmware self-test's KTAP output from a console log.

The kernel prints, for every built-in entry, a diagnostic line followed by a
result line::

    # size=256 sha256=40af...c9 name="fwembed/ramp-256.bin"
    ok 3 request

or, when the request failed, ``# error=-2 name="..."`` and ``not ok``. When
the boot's filesystem holds fw_builtin_selftest.list, the names it lists are
requested next and reported the same way. Two more results check error
paths. Names come last on the diagnostic line, in
double quotes; they cannot contain a double quote themselves. Other kernel
messages may be interleaved and are ignored.
"""

import dataclasses
import re

SUITE = "fw_builtin_selftest"
TIMESTAMP_RE = re.compile(r"^\[\s*\d+\.\d+\]\s?")
HEADER_RE = re.compile(r"# " + SUITE + r": (\d+) built-in entries\Z")
LISTED_RE = re.compile(r"# " + SUITE + r": (\d+) names from fw_builtin_selftest\.list\Z")
PLAN_RE = re.compile(r"1\.\.(\d+)\Z")
RESULT_RE = re.compile(r"(not )?ok (\d+) (\S+)(?: # (SKIP.*))?\Z")
DIAG_OK_RE = re.compile(r'# size=(\d+) sha256=([0-9a-f]{64}) name="(.*)"\Z')
DIAG_ERR_RE = re.compile(r'# error=(-?\d+) name="(.*)"\Z')
TOTALS_RE = re.compile(r"# " + SUITE + r": pass:(\d+) fail:(\d+) skip:(\d+) total:(\d+)\Z")


@dataclasses.dataclass
class EntryResult:
    number: int
    ok: bool
    name: str = None
    size: int = None
    sha256: str = None
    error: int = None


@dataclasses.dataclass
class CheckResult:
    number: int
    ok: bool
    description: str
    directive: str = None


@dataclasses.dataclass
class SelftestLog:
    """What the self-test printed; ``complete`` once its totals line is seen."""

    entry_count: int = None
    listed_count: int = 0
    plan: int = None
    entries: list = dataclasses.field(default_factory=list)
    checks: list = dataclasses.field(default_factory=list)
    diagnostics: list = dataclasses.field(default_factory=list)
    totals: tuple = None

    @property
    def found(self):
        return self.entry_count is not None

    @property
    def complete(self):
        return self.totals is not None

    def problems(self):
        """Why the log cannot be trusted as a whole, if it cannot."""
        if not self.found:
            return ["no self-test output found (is CONFIG_FW_LOADER_BUILTIN_SELFTEST set?)"]
        found = []
        if not self.complete:
            found.append("self-test output ends early (kernel crash or timeout?)")
        results = len(self.entries) + len(self.checks)
        if self.plan is not None and results != self.plan:
            found.append(f"plan announced {self.plan} results, log has {results}")
        announced = self.entry_count + self.listed_count
        if len(self.entries) != announced:
            found.append(f"{announced} entries announced, {len(self.entries)} reported")
        return found


def clean(line):
    return TIMESTAMP_RE.sub("", line.rstrip("\r\n")).strip()


def parse(lines):
    """Parse console lines into a SelftestLog."""
    log = SelftestLog()
    pending = None
    started = False
    for raw in lines:
        line = clean(raw)
        if line == "KTAP version 1":
            started = True
            continue
        if not started:
            continue
        match = HEADER_RE.match(line)
        if match and not log.found:
            log.entry_count = int(match.group(1))
            continue
        if not log.found or log.complete:
            continue
        if (match := PLAN_RE.match(line)) and log.plan is None:
            log.plan = int(match.group(1))
        elif (match := LISTED_RE.match(line)) and log.plan is None:
            log.listed_count = int(match.group(1))
        elif match := DIAG_OK_RE.match(line):
            pending = EntryResult(0, True, name=match.group(3), size=int(match.group(1)),
                                  sha256=match.group(2))
        elif match := DIAG_ERR_RE.match(line):
            pending = EntryResult(0, False, name=match.group(2), error=int(match.group(1)))
        elif match := RESULT_RE.match(line):
            ok, number, desc, directive = (match.group(1) is None, int(match.group(2)),
                                           match.group(3), match.group(4))
            if desc == "request":
                result = pending or EntryResult(number, ok)
                result.number, result.ok = number, ok and result.ok
                log.entries.append(result)
            else:
                log.checks.append(CheckResult(number, ok, desc, directive))
            pending = None
        elif match := TOTALS_RE.match(line):
            log.totals = tuple(int(g) for g in match.groups())
        elif line.startswith("# "):
            log.diagnostics.append(line[2:])
    return log
