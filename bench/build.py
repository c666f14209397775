#!/usr/bin/python3
"""Build time and peak memory: fwembed against Linux 6.1's own routes.

A deterministic synthetic set of 1,000 files, 256 MiB in all (half random,
half compressible, sizes spread from bytes to 8 MiB), goes into the
versatile kernel's drivers/base/firmware_loader/builtin/ two ways, each in
a kernel build directory of its own under build/bench-build/, configured
alike (the versatile board's defconfig and fragment) and prepared
beforehand, so that only the firmware step is timed:

6.1      CONFIG_EXTRA_FIRMWARE="<1,000 names>" CONFIG_EXTRA_FIRMWARE_DIR=<set>:
         Kbuild writes one .gen.S per name and assembles it
fwembed  'fwembed gen --dir <set>', then the same Kbuild step with
         CONFIG_FW_LOADER_GENERATED_DIR=<its output>

The Kbuild step is 'make drivers/base/firmware_loader/builtin/' after its
directory in the build tree has been removed, so it also compiles the
loader's C files (the same ones on both routes, from ccache when present).
Then the set goes through the Makefile's firmware step with COMPRESS=xz
(make fw OUT_NAME=bench-build-xz), twice: the first run compresses every
file, the second has nothing to do and must not run gen. Then one 16 MiB file goes through 'xxd -i' and gcc -O2, against fwembed gen
and the assembly of its output. Each figure is one run: wall time, CPU time
(user + system of the command and all it waited for) and the peak resident
set of its largest process. It prints one table and writes
bench/results/build.json.
"""

import pathlib
import shlex
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tools"))

import benchlib  # noqa: E402  pylint: disable=wrong-import-position
from benchlib import BUILD, CROSS, KERNEL, ROOT, SUFFIX, TREE, BenchError  # noqa: E402
from fwembedlib.board import load_board  # noqa: E402  pylint: disable=wrong-import-position

HERE = BUILD / ("bench-build" + SUFFIX)
XZ_OUT_NAME = "bench-build-xz" + SUFFIX
SET = HERE / "set"
ONE = HERE / "one"
COUNT = 1000
TOTAL = 256 << 20
LARGEST = 8 << 20
ONE_SIZE = 16 << 20
SEED = 7000
BUILTIN = "drivers/base/firmware_loader/builtin"
FWEMBED = ["/usr/bin/python3", ROOT / "tools" / "fwembed"]
VERSATILE = load_board(ROOT / "boards" / "versatile")


def set_sizes():
    return benchlib.sizes_summing_to(SEED, COUNT, TOTAL, LARGEST)


def configure(kout, lines):
    """The versatile board's defconfig and fragment + ``lines``; prepared for building."""
    kout.mkdir(parents=True, exist_ok=True)
    stamp = kout / ".bench-config"
    board = (ROOT / "boards" / "versatile" / "kernel.config").read_text()
    wanted = board + "\n" + "\n".join(lines) + "\n"
    env = benchlib.kbuild_env()
    if not stamp.exists() or stamp.read_text() != wanted:
        benchlib.run(benchlib.kmake(kout, "-s", VERSATILE.settings["defconfig"]), "configure", env=env)
        with open(kout / ".config", "a", encoding="utf-8") as config:
            config.write(wanted)
        benchlib.run(benchlib.kmake(kout, "-s", "olddefconfig"), "configure", env=env)
        config = (kout / ".config").read_text().splitlines()
        for line in lines:
            if line not in config:
                raise BenchError(kout / ".config", f"{line.split('=')[0]} did not survive "
                                 "olddefconfig")
        stamp.write_text(wanted)
    benchlib.run(benchlib.kmake(kout, "prepare"), "prepare", env=env)


def kbuild_step(kout, log):
    """Remove the loader's built-in directory and time Kbuild making it again."""
    benchlib.run(["rm", "-rf", kout / BUILTIN], "clean")
    figures, out = benchlib.measured(benchlib.kmake(kout, f"{BUILTIN}/"), "kbuild",
                                     stdout_path=log)
    figures["assembled"] = sum(1 for line in out.splitlines() if line.startswith("  AS "))
    return figures


def route_61(names):
    kout = HERE / "linux-6.1-route"
    configure(kout, [f'CONFIG_EXTRA_FIRMWARE="{" ".join(names)}"',
                     f'CONFIG_EXTRA_FIRMWARE_DIR="{SET}"'])
    return {"kbuild": kbuild_step(kout, HERE / "kbuild-6.1.log")}


def route_fwembed():
    kout, gen_out = HERE / "fwembed-route", HERE / "fw"
    configure(kout, [f'CONFIG_FW_LOADER_GENERATED_DIR="{gen_out}"'])
    benchlib.run(["rm", "-rf", gen_out], "clean")
    gen, _ = benchlib.measured(FWEMBED + ["gen", "-q", "--dir", SET, "--out", gen_out], "gen")
    return {"gen": gen, "kbuild": kbuild_step(kout, HERE / "kbuild-fwembed.log")}


def one_file():
    """One 16 MiB file: xxd -i and gcc, against fwembed gen and the assembler."""
    work = HERE / "one-work"
    benchlib.run(["rm", "-rf", work], "clean")
    work.mkdir(parents=True)
    data = ONE / "fw.bin"
    xxd, _ = benchlib.measured(["xxd", "-i", data], "xxd", stdout_path=work / "fw.c")
    gcc, _ = benchlib.measured([f"{CROSS}gcc", "-O2", "-c", work / "fw.c", "-o", work / "fw.o"],
                               "gcc")
    gen_out = work / "fw"
    gen, _ = benchlib.measured(FWEMBED + ["gen", "-q", "--dir", ONE, "--out", gen_out], "gen")
    assemble = " && ".join(
        f"{CROSS}gcc -D__ASSEMBLY__ -I {TREE}/include -Wa,-I{gen_out} -c {s} "
        f"-o {s.with_suffix('.o')}" for s in sorted(gen_out.glob("*.S")))
    as_, _ = benchlib.measured(["sh", "-c", assemble], "assemble")
    return {"xxd": xxd, "gcc": gcc, "gen": gen, "as": as_}


def route_xz():
    """COMPRESS=xz through the Makefile's firmware step (make fw), in a build
    directory of its own. The first run compresses every file; its peak is
    that of gen or of one xz process, whichever is larger. The second, with
    nothing changed, must not run gen at all (make reads gen's depfile)."""
    benchlib.run(["rm", "-rf", BUILD / XZ_OUT_NAME], "clean")
    cmd = shlex.split(benchlib.MAKE) + ["-C", ROOT, "fw", f"KERNEL={KERNEL}",
                                        f"OUT_NAME={XZ_OUT_NAME}",
                                        f"FIRMWARE_DIR={SET}", "COMPRESS=xz"]
    first, _ = benchlib.measured(cmd, "make fw COMPRESS=xz")
    again, text = benchlib.measured(cmd, "make fw COMPRESS=xz (no-op)")
    again["ran_gen"] = "  GEN " in text
    return {"first": first, "no_op": again}


def total(*parts):
    """Steps run one after the other: times add up, the peak is the largest."""
    return {"wall_s": round(sum(p["wall_s"] for p in parts), 3),
            "cpu_s": round(sum(p["cpu_s"] for p in parts), 3),
            "peak_rss_kib": max(p["peak_rss_kib"] for p in parts)}


def measure():
    sizes = set_sizes()
    benchlib.write_set(SET, sizes, SEED)
    one = ONE / "fw.bin"
    if not one.exists() or one.stat().st_size != ONE_SIZE:
        ONE.mkdir(parents=True, exist_ok=True)
        one.write_bytes(benchlib.synthetic(SEED * 2, ONE_SIZE))
    names = [benchlib.fw_name(i) for i in range(COUNT)]
    old = route_61(names)
    new = route_fwembed()
    old["total"] = total(old["kbuild"])
    new["total"] = total(new["gen"], new["kbuild"])
    xz = route_xz()
    single = one_file()
    single["xxd_gcc"] = total(single["xxd"], single["gcc"])
    single["fwembed"] = total(single["gen"], single["as"])
    return {"files": COUNT, "bytes": TOTAL, "largest": max(sizes), "jobs": benchlib.cpu_jobs(),
            "linux_6_1": old, "fwembed": new, "xz": xz, "one_file": {"bytes": ONE_SIZE, **single}}


def ratio(a, b):
    return round(a / b, 2) if b else None


def table(r):
    def row(label, f):
        return [label, f"{f['wall_s']:.1f}", f"{f['cpu_s']:.1f}",
                f"{f['peak_rss_kib'] / 1024:.0f}"]
    old, new, one = r["linux_6_1"], r["fwembed"], r["one_file"]
    rows = [row(f"{KERNEL} CONFIG_EXTRA_FIRMWARE: Kbuild", old["kbuild"]),
            row("fwembed gen", new["gen"]),
            row("fwembed: Kbuild", new["kbuild"]),
            row("fwembed: gen + Kbuild", new["total"]),
            row("make fw COMPRESS=xz", r["xz"]["first"]),
            row("make fw COMPRESS=xz, no-op" +
                (" (ran gen!)" if r["xz"]["no_op"]["ran_gen"] else ""), r["xz"]["no_op"]),
            row("16 MiB: xxd -i", one["xxd"]),
            row("16 MiB: gcc -O2 -c", one["gcc"]),
            row("16 MiB: fwembed gen", one["gen"]),
            row("16 MiB: assemble", one["as"])]
    return benchlib.format_table(["step", "wall s", "CPU s", "peak MiB"], rows)


def main():
    benchlib.MAKE = benchlib.parse_args(__doc__).make
    results = measure()
    print(table(results))
    benchlib.write_json("build", results)


if __name__ == "__main__":
    main()
