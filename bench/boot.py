#!/usr/bin/python3
"""Boot time to all firmware delivered, built in against the initramfs; incremental builds.

A deterministic synthetic set of 64 files, 4 MiB in all (half random, half
compressible), is listed for the versatile board, in a board folder of its
own under build/bench-boot/: built in, and with every entry install=yes,
so that 'make run' packs them into the test initramfs's /lib/firmware
with the self-test's list. The kernels are built in one build directory
(OUT_NAME=bench-boot) with CONFIG_PRINTK_TIME (bench/boot.config) and
booted through 'make run', which verifies every entry; the built-in set
boots twice, with and without CONFIG_FW_LOADER_BUILTIN_VERIFY (which
hashes every built-in request; filesystem loads are never checked), the
initramfs set without it. QEMU runs with -icount shift=0,sleep=off: the
guest clock advances one nanosecond per guest instruction, so the
kernel's timestamps count instructions and are the same on any host.

From each console it reads, in the kernel's own timestamps:

requests   the sum over the set's entries of the time from the self-test's
           previous result line to the entry's "# size=" line: one
           request_firmware() and one SHA-256 of the data received, the
           same work on both sides
checks     the sum of the time from each entry's "# size=" line to its
           result line: for built-in entries the self-test's extra
           request_firmware_into_buf() check, which listed names do not get
delivered  kernel start (0) to the self-test's totals line, less checks:
           every entry delivered; on the initramfs side this includes
           unpacking the larger initramfs

VERIFY's cost depends on the CPU's SHA-256: the same built-in set boots
on virt64 (Cortex-A57, whose Armv8 SHA-256 instructions the crypto API's
sha2-ce driver uses) with and without VERIFY too, in build/bench-boot-virt64.

After the first boot, with the built-in list, it measures incremental
builds: 'make kernel' with nothing changed, then after one file of the set
changed (same size, new bytes), counting the objects re-assembled from the
generated directory and whether vmlinux was relinked. It prints one table
and writes bench/results/boot.json.
"""

import pathlib
import re
import shutil
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import benchlib  # noqa: E402  pylint: disable=wrong-import-position
from benchlib import BUILD, ROOT, SUFFIX, BenchError  # noqa: E402

OUT_NAME = "bench-boot" + SUFFIX
HERE = BUILD / OUT_NAME
SET = HERE / "set"
# The board that boots every variant, and the one that adds VERIFY's figures
# on a CPU with SHA-256 instructions.
MAIN_BOARD = "versatile"
VERIFY_BOARD = "virt64"
COUNT = 64
TOTAL = 4 << 20
SEED = 9000
FRAGMENT = ROOT / "bench" / "boot.config"
STAMP_RE = re.compile(r"^\[\s*(\d+)\.(\d+)\] ?(.*)$")
SIZE_RE = re.compile(r'# size=\d+ sha256=[0-9a-f]{64} name="(.*)"$')
RESULT_RE = re.compile(r"(not )?ok \d+ ")
PLAN_RE = re.compile(r"1\.\.\d+$")
GENERATED_AS_RE = re.compile(r"^  AS\s+drivers/base/firmware_loader/builtin/generated/(\S+)$",
                             re.M)


def stamped(lines):
    """[(microseconds, text)] of the console lines that carry a printk timestamp."""
    out = []
    for line in lines:
        m = STAMP_RE.match(line.rstrip("\r\n"))
        if m:
            out.append((int(m.group(1)) * 1000000 + int(m.group(2).ljust(6, "0")[:6]),
                        m.group(3)))
    return out


def selftest_times(lines, names):
    """The boot figures, in microseconds, from a console with printk timestamps.

    Each of ``names`` is requested between the self-test's previous result
    (or plan) line and its "# size=" line, and checked between that line and
    its own result line. Raises ValueError if the self-test did not run to
    its end or did not pass.
    """
    lines = stamped(lines)
    start = next((t for t, text in lines if text == "KTAP version 1"), None)
    end = [(t, text) for t, text in lines if text.startswith("# fw_builtin_selftest: pass:")]
    if start is None or not end:
        raise ValueError("no complete self-test with timestamps in the console")
    end_t, totals = end[0]
    if " fail:0 " not in totals:
        raise ValueError(f"self-test failed: {totals}")
    wanted, seen = set(names), set()
    requests = checks = 0
    mark, pending = None, None
    for t, text in lines:
        if t < start:
            continue
        size = SIZE_RE.match(text)
        if size and size.group(1) in wanted and mark is not None:
            requests += t - mark
            seen.add(size.group(1))
            pending = t
        elif RESULT_RE.match(text) or PLAN_RE.match(text):
            if pending is not None:
                checks += t - pending
                pending = None
            mark = t
    if seen != wanted:
        raise ValueError(f"{len(wanted - seen)} entries without a size line")
    return {"selftest_end_us": end_t, "selftest_us": end_t - start, "requests_us": requests,
            "checks_us": checks, "delivered_us": end_t - checks}


def incremental_counts(stdout):
    """Objects re-assembled from the generated directory, and whether vmlinux was linked."""
    return {"assembled": len(GENERATED_AS_RE.findall(stdout)),
            "relinked": "  LD      vmlinux" in stdout.splitlines()}


def out_name(board):
    """The build directory's name (OUT_NAME) for a board's bench kernels."""
    return OUT_NAME if board == MAIN_BOARD else f"{OUT_NAME}-{board}"


def board_folder(board):
    return BUILD / out_name(board) / "board"


def write_board(names, install, verify=True, board=MAIN_BOARD):
    """``board`` with the set as its list, all built in or all install=yes.

    Without ``verify``, its fragment turns CONFIG_FW_LOADER_BUILTIN_VERIFY off.
    """
    folder = board_folder(board)
    folder.mkdir(parents=True, exist_ok=True)
    source = ROOT / "boards" / board
    cfg = (source / "board.cfg").read_text()
    # -icount runs slower than real time; the boot still ends by itself.
    cfg = re.sub(r"(?m)^timeout = .*$", "timeout = 900", cfg)
    fragment = (source / "kernel.config").read_text()
    if not verify:
        fragment = fragment.replace("CONFIG_FW_LOADER_BUILTIN_VERIFY=y",
                                    "# CONFIG_FW_LOADER_BUILTIN_VERIFY is not set")
    for name, text in (("board.cfg", cfg), ("kernel.config", fragment)):
        if not (folder / name).exists() or (folder / name).read_text() != text:
            (folder / name).write_text(text)
    option = " install=yes" if install else ""
    text = "# Written by bench/boot.py.\n" + \
        "".join(f"{name} {SET / name}{option}\n" for name in names)
    # Written only when it changes, so that a no-op build stays one.
    if not (folder / "firmware.list").exists() or \
            (folder / "firmware.list").read_text() != text:
        (folder / "firmware.list").write_text(text)


def make(target, where, board=MAIN_BOARD, **extra):
    return benchlib.make_target(benchlib.MAKE, target, where, OUT_NAME=out_name(board),
                                BOARD=board_folder(board), EXTRA_FRAGMENTS=FRAGMENT, **extra)


def boot(names, install, verify, label, board=MAIN_BOARD):
    write_board(names, install, verify, board)
    here = BUILD / out_name(board)
    # A console left by an earlier boot must not pass for this one's.
    (here / "console.log").unlink(missing_ok=True)
    make("run", f"make run ({board}, {label})", board, QEMU_EXTRA=benchlib.ICOUNT)
    log = here / f"console-{label}.log"
    shutil.copy(here / "console.log", log)
    lines = log.read_text(errors="replace").splitlines()
    header = f"# fw_builtin_selftest: {len(names)} names from" if install else \
        f"# fw_builtin_selftest: {len(names)} built-in entries"
    if not any(header in line for line in lines):
        raise BenchError(log, f"no line '{header}': not the kernel this boot built")
    try:
        return selftest_times(lines, names)
    except ValueError as err:
        raise BenchError(log, str(err)) from None


def incremental(names, sizes):
    """No-op and one-file-change rebuilds of the built-in kernel."""
    write_board(names, install=False)
    noop = incremental_counts(make("kernel", "make kernel (no-op)"))
    changed = SET / names[0]
    original = changed.read_bytes()
    changed.write_bytes(benchlib.synthetic(SEED + 1000, sizes[0]))
    try:
        one = incremental_counts(make("kernel", "make kernel (one file changed)"))
    finally:
        changed.write_bytes(original)
    return {"no_op": noop, "one_file": one, "changed": names[0]}


def measure():
    sizes = benchlib.sizes_summing_to(SEED, COUNT, TOTAL, TOTAL // 8)
    benchlib.write_set(SET, sizes, SEED)
    names = [benchlib.fw_name(i) for i in range(COUNT)]
    verified = boot(names, install=False, verify=True, label="builtin-verify")
    incr = incremental(names, sizes)
    builtin = boot(names, install=False, verify=False, label="builtin")
    filesystem = boot(names, install=True, verify=False, label="initramfs")
    other = {"builtin_verify": boot(names, install=False, verify=True, label="builtin-verify",
                                    board=VERIFY_BOARD),
             "builtin": boot(names, install=False, verify=False, label="builtin",
                             board=VERIFY_BOARD)}
    return {"files": COUNT, "bytes": TOTAL, "qemu_extra": benchlib.ICOUNT,
            "unit": "microseconds of guest time (-icount shift=0: 1 ns per guest instruction)",
            "board": MAIN_BOARD, "builtin_verify": verified, "builtin": builtin,
            "initramfs": filesystem, "verify_board": {"board": VERIFY_BOARD, **other},
            "incremental": incr}


def table(r):
    rows = []
    # The checks differ in kind between the sides (built-in entries get one
    # more request), so they get no ratio.
    for key, label, compare in (("delivered_us", "kernel start to all delivered", True),
                                ("requests_us", "request + SHA-256, summed", True),
                                ("checks_us", "self-test's other checks", False),
                                ("selftest_end_us", "kernel start to self-test end", False)):
        v, b, f = r["builtin_verify"][key], r["builtin"][key], r["initramfs"][key]
        rows.append([label, v, b, f, f"{f / b:.2f}x" if b and compare else "-"])
    boot_table = benchlib.format_table([f"boot on {r['board']} (us guest time)",
                                        "built-in, VERIFY", "built-in", "initramfs",
                                        "initramfs/built-in"], rows)
    other = r["verify_board"]
    verify_rows = []
    for key, label in (("delivered_us", "kernel start to all delivered"),
                       ("requests_us", "request + SHA-256, summed"),
                       ("checks_us", "self-test's other checks")):
        for board, res in ((r["board"], r), (other["board"], other)):
            v, b = res["builtin_verify"][key], res["builtin"][key]
            verify_rows.append([f"{board}: {label}", v, b, f"{v / b:.2f}x" if b else "-"])
    verify_table = benchlib.format_table(["VERIFY (us guest time)", "VERIFY", "no VERIFY",
                                          "VERIFY/no VERIFY"], verify_rows)
    inc = r["incremental"]
    inc_rows = [[label, inc[key]["assembled"], "yes" if inc[key]["relinked"] else "no"]
                for key, label in (("no_op", "no-op"), ("one_file", "one file changed"))]
    return boot_table + "\n\n" + verify_table + "\n\n" + benchlib.format_table(
        ["make kernel", "objects assembled", "vmlinux relinked"], inc_rows)


def main():
    args = benchlib.parse_args(__doc__)
    benchlib.MAKE = args.make
    results = measure()
    print(table(results))
    benchlib.write_json("boot", results)


if __name__ == "__main__":
    main()
