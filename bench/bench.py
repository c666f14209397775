#!/usr/bin/python3
"""make bench: run every measurement, print one table, write JSON and a chart.

The parts run one after the other, each as its own script that prints its
progress and its detailed table and writes bench/results/<part>.json:

lookup   bench/lookup.py   built-in lookup against 6.1's scan (guest instructions)
size     bench/size.py     resident size of firmware-linux-free, raw and compressed
build    bench/build.py    build time and peak memory against 6.1's routes
memory   bench/memory.py   table overhead per entry; what dedup saves
boot     bench/boot.py     boot to all firmware delivered, built in against the
                           initramfs; incremental builds
scale    bench/scale.py    20,000 files on the x86_64 board: generation,
                           assembly, link, boot with every entry verified

Then the figures of all parts are gathered into one table, printed last,
and written to bench/results/bench.json, with their ratios drawn in
bench/results/bench.png and bench.svg (chart.py, matplotlib). --parts
runs only some parts; --report-only runs none and redraws the table and
the chart from the JSON files already there.

--kernel picks the kernel, as make's KERNEL= does: the parts build it in
build directories of their own and write bench/results/<part>-<kernel>.json
(<part>.json for 6.1). When more than one kernel has lookup, memory or boot
results, a second table sets those rows side by side, each kernel's
figures against its own upstream route.
"""

import os
import pathlib
import platform
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import benchlib  # noqa: E402  pylint: disable=wrong-import-position
import chart  # noqa: E402  pylint: disable=wrong-import-position
import summary  # noqa: E402  pylint: disable=wrong-import-position

PARTS = ("lookup", "size", "build", "memory", "boot", "scale")
# The kernels with a series, oldest first.
KERNELS = sorted((p.parent.name for p in (benchlib.ROOT / "kernel-patch").glob("*/series")),
                 key=lambda v: tuple(map(int, v.split("."))))


def machine():
    """The host the absolute figures belong to."""
    model = "unknown CPU"
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{model}, {benchlib.cpu_jobs()} build jobs, "
            f"{platform.machine()} Linux {platform.release()}")


def main():
    def options(parser):
        parser.add_argument("--parts", default=",".join(PARTS),
                            help=f"comma-separated parts to run (default: {','.join(PARTS)})")
        parser.add_argument("--report-only", action="store_true",
                            help="run nothing; print the table from bench/results/*.json")
        parser.add_argument("--kernel", default=benchlib.DEFAULT_KERNEL,
                            help=f"the kernel to measure (default: {benchlib.DEFAULT_KERNEL})")
    args = benchlib.parse_args(__doc__, options)
    if args.kernel not in KERNELS:
        raise benchlib.BenchError("--kernel", f"no series for {args.kernel!r}; "
                                  f"choose from {', '.join(KERNELS)}")
    benchlib.KERNEL = args.kernel
    parts = [p for p in args.parts.split(",") if p]
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        raise benchlib.BenchError("--parts", f"unknown part {unknown[0]!r}; "
                                  f"choose from {', '.join(PARTS)}")
    if not args.report_only:
        for part in parts:
            script = benchlib.ROOT / "bench" / f"{part}.py"
            benchlib.say("BENCH", f"{part}: bench/{part}.py --make '{args.make}'")
            status = subprocess.run(["/usr/bin/python3", str(script), "--make", args.make],
                                    env=dict(os.environ, FWEMBED_BENCH_KERNEL=args.kernel),
                                    check=False).returncode
            if status != 0:
                raise benchlib.BenchError(part, f"bench/{part}.py exited with status {status}")
    by_kernel = {kernel: {part: benchlib.read_json(part, kernel) for part in PARTS}
                 for kernel in KERNELS}
    results = by_kernel[args.kernel]
    rows = summary.rows(results)
    if not rows:
        raise benchlib.BenchError("bench/results", "no results to report")
    measured = [k for k in KERNELS if any(by_kernel[k][p] for p, _ in summary.KERNEL_PARTS)]
    kernel_rows = summary.kernel_rows({k: by_kernel[k] for k in measured})
    host = machine()
    benchlib.write_json("bench", {"machine": host, "rows": rows,
                                  "missing": [p for p in PARTS if results[p] is None],
                                  "kernels": kernel_rows})
    for dest in chart.write(rows, f"fwembed make bench: ratios (host: {host}, kernel {args.kernel})",
                            benchlib.results_path("bench").with_suffix("")):
        benchlib.say("WROTE", benchlib.rel(dest))
    print()
    print(f"machine: {host}, kernel {args.kernel}")
    print(summary.table(rows))
    for part in PARTS:
        if results[part] is None:
            print(f"(no {part} figures: {benchlib.rel(benchlib.results_path(part))} is missing)")
    if len(measured) > 1:
        print()
        print(f"kernels side by side: {', '.join(measured)}")
        print(summary.kernel_table(kernel_rows, measured))


if __name__ == "__main__":
    main()
