"""The kernel's own firmware selftests, run in QEMU on a board's kernel.

The guest's initramfs holds a Debian user space of the board's architecture
(busybox and bash, both static; GNU diff, gzip, mktemp and sleep, which
the scripts use with options busybox lacks; and the C library they need) and a zgrep of
our own (ZGREP, below), unpacked by
scripts/fetch-debs, and a kernel tree's tools/testing/selftests/firmware
with fw_namespace built for the guest: the files the guest's own tree
has, as the patched tree has them, so that both guests run the same
scripts. Its init runs fw_run_tests.sh, then
fw_builtin.sh when the tree has it, each into a file, and prints each
output between marker lines, so that kernel messages do not land inside
the scripts' lines.

Each script runs under busybox's timeout (SCRIPT_TIMEOUT).
fw_run_tests.sh stops at its first failure and prints no summary of its
own: its results are the lines of its output that end a check ("...: OK",
"...works") or skip one ("...ignoring test"), each named by the kernel
configuration it emulates and the "Testing with ..." part it is in.
"""

import dataclasses
import json
import pathlib
import re
import shlex
import signal
import subprocess
import sys
import threading

from fwembedlib import atomic, cpio
from fwembedlib.board import load_board
from fwembedlib.manifest import read as read_manifest

from .listing import HEADER as LISTING_HEADER
from .qemu import boot, qemu_command

SELFTESTS = "tools/testing/selftests/firmware"
# The files of the guest's user space, taken from Debian's packages
# (GUEST_PACKAGES in the Makefile): (path in the unpacked packages, path in
# the initramfs).
USERLAND = (("bin/busybox", "bin/busybox"),
            ("bin/bash-static", "bin/bash"),
            ("usr/bin/diff", "usr/bin/diff"),
            ("bin/mktemp", "usr/bin/mktemp"),
            ("bin/sleep", "usr/bin/sleep"),
            ("bin/gzip", "bin/gzip"),
            ("lib/arm-linux-gnueabi/ld-linux.so.3", "lib/ld-linux.so.3"),
            ("lib/arm-linux-gnueabi/libc.so.6", "lib/arm-linux-gnueabi/libc.so.6"))
# fw_builtin.sh first: it is quick, and fw_run_tests.sh may be stopped.
SCRIPTS = ("fw_builtin.sh", "fw_run_tests.sh")
# How long a script may run in the guest before busybox's timeout stops it
# (exit status 143): a guard against a script that hangs. fw_run_tests.sh
# takes about 210 s with four guests on two cores, and took over 300 s
# with two kernel builds beside them.
SCRIPT_TIMEOUT = 600
# The exit status of a script that busybox's timeout stopped (SIGTERM).
STOPPED_STATUS = 128 + signal.SIGTERM
LISTING = "kselftest/fw_builtin.listing"
MARK = "fwembed-kselftest:"
# fw_lib.sh reads the kernel's configuration with "zgrep -q CONFIG_X=y
# /proc/config.gz". gzip's zgrep fails such a call at random in the guest:
# grep -q exits at the first match, and zgrep reports gzip's SIGPIPE.
# The selftests then took a configured feature for a missing one (the
# user-mode helper, firmware upload), differently on each boot. This zgrep
# takes only what fw_lib.sh passes, and answers with grep's status alone.
ZGREP = """#!/bin/sh
# zgrep -q PATTERN FILE, for the firmware selftests (fwembed's guest)
[ $# -eq 3 ] && [ "$1" = -q ] || { echo "zgrep: only -q PATTERN FILE" >&2; exit 2; }
gzip -cdq -- "$3" | grep -q -- "$2"
"""

INIT = f"""#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/usr/bin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug
cd /kselftest/firmware
for script in {' '.join(SCRIPTS)}; do
	[ -x $script ] || continue
	start=$(cut -d' ' -f1 /proc/uptime)
	FW_BUILTIN_LISTING=/{LISTING} timeout {SCRIPT_TIMEOUT} ./$script >/tmp/$script.out 2>&1
	status=$?
	echo "{MARK} begin $script"
	cat /tmp/$script.out
	echo "{MARK} end $script status=$status"
	echo "{MARK} uptime $script $start $(cut -d' ' -f1 /proc/uptime)"
	# The requests the sysfs fallback still waited for when the script was
	# stopped: the one it was at, or one that never ends.
	[ $status -eq 0 ] || ls /sys/class/firmware | grep -vx timeout | \
		sed "s|^|{MARK} waiting $script |"
done
reboot -f
"""


def build_fw_namespace(tree, out, cross_compile):
    """Build the selftests' fw_namespace helper, static, for the guest."""
    command = [f"{cross_compile}gcc", "-static", "-O2", "-Wall", "-o", str(out),
               str(pathlib.Path(tree) / SELFTESTS / "fw_namespace.c")]
    print(f"  CC      {shlex.join(command)}", flush=True)
    subprocess.run(command, check=True)


def listing_from_manifest(entries):
    """The listing fw_builtin.sh checks against: the manifest's built-in
    entries, init-only ones as the kernel lists them once it has booted."""
    lines = ["\t".join(LISTING_HEADER)]
    for e in sorted((e for e in entries if e.builtin), key=lambda e: e.name):
        lifetime = "freed" if e.lifetime == "init" else "kernel"
        lines.append(f"{e.name}\t{e.size}\t-\t-\t{e.sha256}\t{lifetime}")
    return "".join(line + "\n" for line in lines)


def userland_files(userland_root, pairs):
    """{path in the initramfs: (mode, bytes)} of the (source, dest) ``pairs``
    taken from the unpacked packages below ``userland_root``."""
    return {dest: (0o100755, (pathlib.Path(userland_root) / source).read_bytes())
            for source, dest in pairs}


def initramfs(userland_root, tree, scripts_tree, fw_namespace, listing=None):
    """The guest's initramfs (newc bytes): user space, the firmware
    selftests that ``tree`` has, as ``scripts_tree`` has them, fw_namespace,
    the init above, and the listing if any."""
    files = userland_files(userland_root, USERLAND)
    selftests = pathlib.Path(tree) / SELFTESTS
    scripts = pathlib.Path(scripts_tree) / SELFTESTS
    for path in sorted(selftests.iterdir()):
        if path.suffix == ".sh" or path.name in ("config", "settings"):
            mode = 0o100755 if path.suffix == ".sh" else 0o100644
            files[f"kselftest/firmware/{path.name}"] = (mode, (scripts / path.name).read_bytes())
    files["kselftest/firmware/fw_namespace"] = (0o100755, pathlib.Path(fw_namespace).read_bytes())
    files["init"] = (0o100755, INIT.encode())
    files["bin/zgrep"] = (0o100755, ZGREP.encode())
    if listing is not None:
        files[LISTING] = (0o100644, listing.encode())
    # fw_namespace mounts a tmpfs on /lib/firmware.
    return cpio.tree(files, folders=("dev", "proc", "sys", "tmp", "lib/firmware"))


@dataclasses.dataclass
class ScriptRun:
    """One script's output and exit status; status is None if it never ended."""

    lines: list
    status: int = None
    # The firmware requests the sysfs fallback still waited for when the
    # script ended non-zero, as /sys/class/firmware names them.
    waiting: list = dataclasses.field(default_factory=list)
    # How long it ran, by the guest's clock (/proc/uptime).
    seconds: float = None


def script_runs(console_lines, mark=MARK):
    """{script: ScriptRun} from the console of a boot whose init prints each
    script's output between "MARK begin NAME" and "MARK end NAME status=N"."""
    runs = {}
    current = None
    begin = re.compile(rf"^{mark} begin (\S+)$")
    end = re.compile(rf"^{mark} end (\S+) status=(\d+)$")
    waiting = re.compile(rf"^{mark} waiting (\S+) (.+)$")
    uptime = re.compile(rf"^{mark} uptime (\S+) (\d+\.\d+) (\d+\.\d+)$")
    for raw in console_lines:
        line = raw.rstrip("\r\n")
        if (m := waiting.match(line)) and m.group(1) in runs:
            runs[m.group(1)].waiting.append(m.group(2))
        elif (m := uptime.match(line)) and m.group(1) in runs:
            runs[m.group(1)].seconds = round(float(m.group(3)) - float(m.group(2)), 2)
        elif m := begin.match(line):
            current = runs.setdefault(m.group(1), ScriptRun([]))
        elif (m := end.match(line)) and current is not None:
            current.status = int(m.group(2))
            current = None
        elif current is not None:
            current.lines.append(line)
    return runs


def checks(lines):
    """The results of fw_run_tests.sh: a list of (name, result), in order,
    result "pass" or "skip". A check's name is its line, prefixed by the
    configuration it emulates and the part it is in, and numbered when a
    part repeats it. A part ("Testing with ...") belongs to the script
    that last printed a line of its own ("./fw_filesystem.sh: ..."), and
    ends at the next script's line. The namespace test prints "OK" on a
    line of its own."""
    config = part = ""
    script = part_script = None
    pending = None
    seen = {}
    results = []
    for line in lines:
        if m := re.match(r"\./(\S+\.sh): ", line):
            script = m.group(1)
            if script != part_script:
                part = ""
        if m := re.match(r"Running kernel configuration test (\d+)", line):
            config, part, script = f"config {m.group(1)}", "", None
        elif line.startswith("Running basic kernel configuration"):
            config, part, script = "basic", "", None
        elif line.startswith("Running namespace test"):
            pending = "namespace test"
        elif line.startswith("Testing with ") and line.endswith("..."):
            part, part_script = line[len("Testing with "):-3], script
        else:
            result = None
            if line == "OK" and pending:
                line, result, pending = pending, "pass", None
            elif line.endswith(": OK") or line.endswith(" works"):
                result = "pass"
            elif line.endswith("ignoring test"):
                result = "skip"
            if result:
                label = re.sub(r"^\./|^\S+/", "", line)
                key = " / ".join(p for p in (config, part, label) if p)
                seen[key] = seen.get(key, 0) + 1
                if seen[key] > 1:
                    key = f"{key} ({seen[key]})"
                results.append((key, result))
    return results


def side_by_side(unpatched, patched):
    """Both kernels' results, one check a line, for the console."""
    names = list(dict.fromkeys([n for n, _ in unpatched] + [n for n, _ in patched]))
    u, p = dict(unpatched), dict(patched)
    width = max((len(n) for n in names), default=5)
    out = [f"{'check':<{width}}  unpatched  patched", f"{'-' * width}  ---------  -------"]
    for name in names:
        out.append(f"{name:<{width}}  {u.get(name, '-'):<9}  {p.get(name, '-')}")
    return "\n".join(out)


def script_problem(guest, script_run, script="fw_run_tests.sh"):
    """What is wrong with the guest's run of the script, or None: it never
    ran or ended, or it exited non-zero (STOPPED_STATUS: stopped by
    SCRIPT_TIMEOUT). A run stopped by the timeout in both guests at the
    same check shows no regression, so its status must be read."""
    if script_run is None or script_run.status is None:
        return f"{guest}: {script} did not finish"
    if script_run.status == STOPPED_STATUS:
        problem = f"{guest}: {script} stopped after {SCRIPT_TIMEOUT} s " \
                  f"(exit status {STOPPED_STATUS})"
    elif script_run.status != 0:
        problem = f"{guest}: {script}: exit status {script_run.status}"
    else:
        return None
    if script_run.waiting:
        problem += "; still waiting for the sysfs fallback: " + ", ".join(script_run.waiting)
    return problem


def regressions(unpatched, patched):
    """Why the patched kernel does worse: checks that pass unpatched and do
    not pass patched, and skips that differ."""
    p = dict(patched)
    problems = [f"{n}: passes unpatched, {p.get(n, 'not reached')} patched"
                for n, r in unpatched if r == "pass" and p.get(n) != "pass"]
    skips_u = {n for n, r in unpatched if r == "skip"}
    skips_p = {n for n, r in patched if r == "skip"}
    problems += [f"{n}: skipped unpatched only" for n in sorted(skips_u - skips_p)]
    problems += [f"{n}: skipped patched only" for n in sorted(skips_p - skips_u)]
    return problems


TAP_LINE = re.compile(r"^(not ok|ok) (\d+) (.*?)(?: # (SKIP)\b.*)?$")


def tap_results(lines):
    """fw_builtin.sh's TAP lines: a list of (description, "pass"|"fail"|"skip")."""
    results = []
    for line in lines:
        if m := TAP_LINE.match(line):
            result = "skip" if m.group(4) else ("pass" if m.group(1) == "ok" else "fail")
            results.append((m.group(3), result))
    return results


def run(args):
    board = load_board(args.board)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    listing = listing_from_manifest(read_manifest(args.manifest))
    kernels = {"unpatched": (args.unpatched_kernel, args.unpatched_dtb, args.unpatched_tree),
               "patched": (args.patched_kernel, args.patched_dtb, args.patched_tree)}
    # Both kernels run the same programs: the patched tree's scripts, which
    # carry the series' fixes to them, and one fw_namespace. The unpatched
    # guest gets the scripts its own tree has, so not fw_builtin.sh, which
    # the series adds.
    fw_namespace = out / "fw_namespace"
    build_fw_namespace(args.patched_tree, fw_namespace, board.settings["cross_compile"])
    boots = {}
    for name, (kernel, dtb, tree) in kernels.items():
        image = out / f"initramfs-{name}.cpio"
        print(f"  CPIO    {image}", flush=True)
        atomic.write_file(image, initramfs(args.userland, tree, args.patched_tree,
                                           fw_namespace, listing))
        boots[name] = qemu_command(board, kernel, dtb or "", initrd=image)
    runs = {}

    def one(name):
        runs[name] = boot(boots[name], out / f"console-{name}.log", args.timeout)

    # The scripts mostly wait: both guests run side by side.
    threads = [threading.Thread(target=one, args=(name,)) for name in boots]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    problems = []
    result = {}
    for name, qemu_run in runs.items():
        problems += [f"{name}: {p}" for p in qemu_run.problems]
        scripts = script_runs(qemu_run.lines)
        fw_run = scripts.get("fw_run_tests.sh")
        builtin = scripts.get("fw_builtin.sh")
        found = [script_problem(name, fw_run)]
        if name == "patched":
            # fw_builtin.sh comes with the series: only the patched guest has it.
            found.append(script_problem(name, builtin, "fw_builtin.sh"))
        problems += [p for p in found if p]
        fw_run = fw_run or ScriptRun([])
        result[name] = {"fw_run_tests": {"status": fw_run.status, "seconds": fw_run.seconds,
                                         "checks": checks(fw_run.lines)},
                        "fw_builtin": builtin and {"status": builtin.status,
                                                   "tap": builtin.lines,
                                                   "results": tap_results(builtin.lines)},
                        "elapsed_s": round(qemu_run.elapsed, 1)}
    unpatched = result["unpatched"]["fw_run_tests"]["checks"]
    patched = result["patched"]["fw_run_tests"]["checks"]
    print(side_by_side(unpatched, patched))
    problems += regressions(unpatched, patched)
    if not any(r == "pass" for _, r in unpatched):
        problems.append("unpatched: no check passed")
    builtin = result["patched"]["fw_builtin"]
    if builtin is not None:
        print("\n".join(builtin["tap"]))
        problems += [f"fw_builtin.sh: not ok: {d}" for d, r in builtin["results"] if r == "fail"]
    result["problems"] = problems
    atomic.write_file(out / "results.json", (json.dumps(result, indent=1) + "\n").encode())
    for problem in problems:
        print(f"{out / 'results.json'}: error: {problem}", file=sys.stderr)
    u_pass = sum(r == "pass" for _, r in unpatched)
    p_pass = sum(r == "pass" for _, r in patched)
    skips = sum(r == "skip" for _, r in patched)
    tap = [r for _, r in builtin["results"]] if builtin else []
    took = [result[g]["fw_run_tests"]["seconds"] for g in ("unpatched", "patched")]
    print(f"fw_run_tests.sh took {took[0]} s unpatched, {took[1]} s patched "
          f"(stopped, if still running, at {SCRIPT_TIMEOUT} s)")
    print(f"{board.name}: fw_run_tests.sh: {u_pass} checks pass unpatched, {p_pass} patched, "
          f"{skips} skipped; fw_builtin.sh: {tap.count('pass')} passed, "
          f"{tap.count('skip')} skipped, {tap.count('fail')} failed; "
          f"{len(problems)} problems; results: {out / 'results.json'}")
    return 1 if problems else 0
