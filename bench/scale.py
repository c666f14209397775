#!/usr/bin/python3
"""Scale: 20,000 distinct small files in 40 folders, built in and booted.

A deterministic synthetic set (build/bench-scale/set: vendorNN/fw-NNNNN.bin,
16 to 511 bytes each, no two alike) is embedded with FIRMWARE_DIR= in the
x86_64 board's kernel, in a build directory of its own (OUT_NAME=
bench-scale), and booted with 'make run', which requests every entry in
QEMU and checks it against the manifest. After one untimed 'make kernel',
each step is timed through the Makefile, so the figures are what a vendor's
build sees:

generation  make fw after its output directory is removed: fwembed gen of
            the 20,000 files
assembly    make kernel after the firmware objects are removed, less the
            link figure: assembling the 64 data objects and the table
link        make kernel after only table.o is touched, less the no-op
            figure: linking vmlinux (three kallsyms passes) and bzImage
no-op       make kernel with nothing changed: make and Kbuild walking
            the tree
boot        the harness's "boot took" figure of make run, and its verdicts

It prints one table and writes bench/results/scale.json.
"""

import pathlib
import random
import re
import shlex
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import benchlib  # noqa: E402  pylint: disable=wrong-import-position
from benchlib import BUILD, KERNEL, SUFFIX, BenchError  # noqa: E402

OUT_NAME = "bench-scale" + SUFFIX
HERE = BUILD / OUT_NAME
SET = BUILD / "bench-scale-set"
COUNT = 20000
FOLDERS = 40
SEED = 20000
BOARD = "x86_64"
GENERATED = "drivers/base/firmware_loader/builtin/generated"
SUMMARY_RE = re.compile(r"^x86_64: (\d+) firmware entries.*, boot took ([0-9.]+) s; "
                        r"(\d+) checks passed, (\d+) failed", re.M)


def write_set():
    """The 20,000 files; each starts with its own number, so no two are alike."""
    if SET.is_dir() and sum(1 for _ in SET.rglob("*.bin")) == COUNT:
        return
    benchlib.run(["rm", "-rf", SET], "clean")
    rng = random.Random(SEED)
    for i in range(COUNT):
        folder = SET / f"vendor{i % FOLDERS:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"fw-{i:05d}.bin").write_bytes(i.to_bytes(4, "little") +
                                                 rng.randbytes(rng.randrange(12, 508)))
    benchlib.say("GEN", f"{benchlib.rel(SET)} ({COUNT} files in {FOLDERS} folders)")


def make_cmd(target):
    return shlex.split(benchlib.MAKE) + [
        "-C", str(benchlib.ROOT), target, f"KERNEL={KERNEL}", f"BOARD={BOARD}", f"OUT_NAME={OUT_NAME}",
        f"FIRMWARE_DIR={SET}"]


def timed(target, where):
    figures, text = benchlib.measured(make_cmd(target), where)
    return figures["wall_s"], text


def measure():
    write_set()
    benchlib.run(make_cmd("kernel"), "make kernel (untimed)")
    benchlib.run(["rm", "-rf", HERE / "fw"], "clean")
    generation, _ = timed("fw", "make fw")
    benchlib.run(["sh", "-c", 'rm -f "$0"/*.o', HERE / "linux" / GENERATED], "clean")
    assembly_link, text = timed("kernel", "make kernel (firmware objects removed)")
    assembled = len(re.findall(rf"^  AS      {GENERATED}/", text, re.M))
    (HERE / "linux" / GENERATED / "table.o").touch()
    link, _ = timed("kernel", "make kernel (table.o touched)")
    noop, _ = timed("kernel", "make kernel (no-op)")
    text = benchlib.run(make_cmd("run"), "make run")
    found = SUMMARY_RE.search(text)
    if not found:
        raise BenchError("make run", "no summary line from the harness")
    entries, boot_s, passed, failed = found.groups()
    if int(entries) != COUNT or int(failed) != 0:
        raise BenchError("make run", found.group(0))
    return {"files": COUNT, "folders": FOLDERS, "board": BOARD,
            "generation_s": generation, "assembly_s": round(assembly_link - link, 3),
            "link_s": round(link - noop, 3), "noop_s": noop, "objects_assembled": assembled,
            "boot_s": float(boot_s), "checks_passed": int(passed), "checks_failed": int(failed)}


def table(r):
    rows = [["generation (make fw)", f"{r['generation_s']:.1f}"],
            [f"assembly ({r['objects_assembled']} objects)", f"{r['assembly_s']:.1f}"],
            ["link (vmlinux, bzImage)", f"{r['link_s']:.1f}"],
            ["no-op make kernel", f"{r['noop_s']:.1f}"],
            [f"boot, {r['checks_passed']} checks passed, {r['checks_failed']} failed",
             f"{r['boot_s']:.1f}"]]
    return benchlib.format_table([f"{r['files']} files on {r['board']}", "wall s"], rows)


def main():
    args = benchlib.parse_args(__doc__)
    benchlib.MAKE = args.make
    results = measure()
    print(table(results))
    benchlib.write_json("scale", results)


if __name__ == "__main__":
    main()
