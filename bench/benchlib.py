"""What the bench scripts share: paths, commands, measured runs, data, output.

Every command a bench runs is printed first (`  BENCH   <command>`), so it
can be pasted and run again. Errors read `bench: <what>: <message>`.
"""

import json
import os
import pathlib
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
BUILD = ROOT / "build"
# The kernel measured: make's KERNEL=, which bench.py --kernel hands every
# part in FWEMBED_BENCH_KERNEL. Its tree is make's; its build directories
# and results files carry SUFFIX, as make's build directories do.
DEFAULT_KERNEL = "6.1"
KERNEL = os.environ.get("FWEMBED_BENCH_KERNEL") or DEFAULT_KERNEL
SUFFIX = "" if KERNEL == DEFAULT_KERNEL else f"-{KERNEL}"
TREE = BUILD / f"linux-{KERNEL}"
CROSS = "arm-linux-gnueabi-"
# Virtual time advances by 2**0 ns per guest instruction: figures read from
# the guest clock count instructions, the same on any host and under any load.
ICOUNT = "-icount shift=0,sleep=off"
# Debian package "time": measures a command's CPU time and peak memory.
GNU_TIME = "/usr/bin/time"
# The make command the bench scripts run the Makefile with (--make).
MAKE = "make"


class BenchError(SystemExit):
    """A failed measurement: `bench: <where>: <message>` on stderr, exit 1."""

    def __init__(self, where, message):
        super().__init__(f"bench: {where}: {message}")


def say(tag, text):
    """A Kbuild-style progress line."""
    print(f"  {tag:<7} {text}", flush=True)


def run(cmd, where, cwd=None, env=None):
    """Run ``cmd`` (printed first); return its stdout; stop with its tail on failure."""
    cmd = [str(c) for c in cmd]
    say("BENCH", shlex.join(cmd))
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                            errors="replace", check=False)
    if result.returncode != 0:
        sys.stderr.write(result.stdout[-3000:] + result.stderr[-3000:])
        raise BenchError(where, f"{cmd[0]} exited with status {result.returncode}")
    return result.stdout


def measured(cmd, where, cwd=None, stdout_path=None):
    """Run ``cmd`` alone and measure it: wall seconds, CPU seconds, peak RSS.

    GNU time runs the command and reports what wait4() says of it: CPU
    time is user plus system time of the command and every descendant it
    waited for, and the peak is the largest resident set of any single one
    of those processes (not their sum), in KiB. GNU time, not this Python
    process, forks the command: a child forked from a large process would
    count that process's resident set as its own until it calls exec.
    Returns (figures, stdout text).
    """
    cmd = [str(c) for c in cmd]
    say("BENCH", shlex.join(cmd) + (f" > {rel(stdout_path)}" if stdout_path else ""))
    with tempfile.NamedTemporaryFile("r") as usage, tempfile.TemporaryFile() as err, \
            (open(stdout_path, "w+b") if stdout_path else tempfile.TemporaryFile()) as out:
        start = time.monotonic()
        status = subprocess.run([GNU_TIME, "-f", "%U %S %M", "-o", usage.name, *cmd], cwd=cwd,
                                env=kbuild_env(), stdout=out, stderr=err,
                                check=False).returncode
        wall = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        text, errors = out.read().decode(errors="replace"), err.read().decode(errors="replace")
        fields = usage.read().split()
    if status != 0:
        sys.stderr.write(text[-3000:] + errors[-3000:])
        raise BenchError(where, f"{cmd[0]} exited with status {status}")
    try:
        user, system, peak = float(fields[-3]), float(fields[-2]), int(fields[-1])
    except (IndexError, ValueError):
        raise BenchError(where, f"{GNU_TIME} printed no usage") from None
    figures = {"wall_s": round(wall, 3), "cpu_s": round(user + system, 3), "peak_rss_kib": peak}
    return figures, text


def kmake(out, *targets, jobs=None):
    """The kernel make command of the Makefile (kmake) for build directory ``out``."""
    cmd = ["make", "--no-print-directory", "-C", TREE, f"O={out}", "ARCH=arm",
           f"CROSS_COMPILE={CROSS}"]
    if shutil.which("ccache"):
        prefix = os.path.relpath(TREE, out)
        cmd += [f"CC=ccache {CROSS}gcc", "HOSTCC=ccache gcc", f"KCPPFLAGS=-fmacro-prefix-map={prefix}/="]
    if shutil.which(f"{CROSS}gcc-nm"):
        cmd.append(f"NM={CROSS}gcc-nm")
    return cmd + [f"-j{jobs or cpu_jobs()}", *targets]


def cpu_jobs():
    """Parallel kernel build jobs: JOBS from the environment, as in the Makefile, or nproc."""
    return int(os.environ.get("JOBS") or os.cpu_count() or 2)


def kbuild_env():
    """The environment the Makefile exports for reproducible kernel builds."""
    env = dict(os.environ)
    env.update(KBUILD_BUILD_TIMESTAMP="1970-01-01 00:00:00 UTC", KBUILD_BUILD_USER="fwembed",
               KBUILD_BUILD_HOST="fwembed", KBUILD_BUILD_VERSION="1", CCACHE_BASEDIR=str(ROOT))
    return env


def synthetic(seed, size):
    """``size`` deterministic bytes, like firmware: random or compressible.

    Even seeds give random bytes (code, crypto tables); odd seeds give
    register-table-like data: runs of one repeated 16-byte record,
    interrupted by seeded random words, which xz and zstd shrink a lot but
    never to nothing. Different seeds give different bytes.
    """
    rng = random.Random(seed)
    if seed % 2 == 0:
        return rng.randbytes(size)
    parts, total = [], 0
    while total < size:
        record = rng.randbytes(16) * rng.randint(4, 256)
        parts += [record, rng.randbytes(8)]
        total += len(record) + 8
    return b"".join(parts)[:size]


def sizes_summing_to(seed, count, total, largest):
    """``count`` deterministic file sizes, at most ``largest`` each, adding up to ``total``."""
    rng = random.Random(seed)
    weights = [rng.lognormvariate(0, 1.2) for _ in range(count)]
    scale = total / sum(weights)
    sizes = [max(1, min(largest, int(w * scale))) for w in weights]
    i = 0
    while sum(sizes) != total:
        step = 1 if sum(sizes) < total else -1
        room = largest - sizes[i] if step > 0 else sizes[i] - 1
        sizes[i] += step * min(room, abs(total - sum(sizes)))
        i = (i + 1) % count
    return sizes


def fw_name(i):
    """Names like real trees: vendor2/chip07/fw-0042.bin."""
    return f"vendor{i % 4}/chip{i % 16:02d}/fw-{i:04d}.bin"


def write_set(folder, sizes, seed, repeat=None):
    """Write files fw_name(i) of the given sizes below ``folder``; skip if already there.

    With ``repeat``, file i holds the contents of file i % repeat (cut to
    its size), so the set has only ``repeat`` distinct contents when the
    sizes repeat too. A stamp file records what was written.
    """
    folder = pathlib.Path(folder)
    stamp = folder.parent / (folder.name + ".stamp")
    key = json.dumps({"sizes": sizes, "seed": seed, "repeat": repeat})
    if stamp.exists() and stamp.read_text() == key and folder.is_dir():
        return folder
    if folder.exists():
        subprocess.run(["rm", "-rf", str(folder)], check=True)
    say("GEN", f"{rel(folder)} ({len(sizes)} files, {sum(sizes)} bytes)")
    for i, size in enumerate(sizes):
        path = folder / fw_name(i)
        path.parent.mkdir(parents=True, exist_ok=True)
        source = i % repeat if repeat else i
        path.write_bytes(synthetic(seed + source, size))
    stamp.write_text(key)
    return folder


def rel(path):
    """``path`` relative to the repository when inside it, for messages."""
    path = pathlib.Path(path)
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def results_path(name, kernel=None):
    """bench/results/<name>.json for the default kernel, <name>-<kernel>.json
    for another (default: the kernel measured)."""
    kernel = kernel or KERNEL
    return RESULTS / (f"{name}.json" if kernel == DEFAULT_KERNEL else f"{name}-{kernel}.json")


def write_json(name, data):
    """Write the results file of ``name`` for the kernel measured, with the
    kernel's version in it; return the path."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    dest = results_path(name)
    dest.write_text(json.dumps({"kernel": KERNEL, **data}, indent=2) + "\n")
    say("WROTE", rel(dest))
    return dest


def read_json(name, kernel=None):
    path = results_path(name, kernel)
    if not path.exists():
        return None
    return json.loads(path.read_text())


def format_table(header, rows, left=1):
    """Plain text table: the first ``left`` columns left-aligned, the rest right-aligned."""
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]

    def line(row):
        return "  ".join(c.ljust(w) if i < left else c.rjust(w)
                         for i, (c, w) in enumerate(zip(row, widths))).rstrip()

    return "\n".join([line(cells[0]), line(["-" * w for w in widths])] +
                     [line(row) for row in cells[1:]])


def parse_args(doc, extra=None):
    """The arguments every bench script takes: --make, plus ``extra(parser)``."""
    import argparse  # pylint: disable=import-outside-toplevel
    parser = argparse.ArgumentParser(description=doc, allow_abbrev=False,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--make", default="make", help="the make command (default: make)")
    if extra:
        extra(parser)
    return parser.parse_args()


def make_target(make, target, where, **variables):
    """Run the repository's Makefile: ``make -C ROOT target KERNEL=... VAR=value ...``;
    return stdout."""
    cmd = shlex.split(make) + ["-C", str(ROOT), target, f"KERNEL={KERNEL}"] + \
        [f"{k}={v}" for k, v in variables.items()]
    return run(cmd, where)
