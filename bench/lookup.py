#!/usr/bin/python3
"""Built-in firmware lookup benchmark: the sorted lookup against 6.1's linear scan.

For each table size it writes a directory of small synthetic firmware files,
builds the versatile kernel with them built in and the boot-time benchmark
enabled (CONFIG_FW_LOADER_BUILTIN_BENCH), boots it in QEMU through 'make run'
(which also verifies every entry), and reads the kernel's figures from the
console. It prints one table and writes bench/results/lookup.json.

QEMU runs with -icount shift=0: the guest's clock advances by one nanosecond
per instruction executed, so every figure is an instruction count per lookup
on the emulated ARM926 (cache and memory effects of real hardware are not
modelled). It is the same on any host and under any host load.
"""

import pathlib
import re
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import benchlib  # noqa: E402  pylint: disable=wrong-import-position
from benchlib import BUILD, ICOUNT, ROOT, SUFFIX, BenchError  # noqa: E402

SIZES = (1, 4, 16, 64, 1024)
OUT_NAME = "bench" + SUFFIX
LINE_RE = re.compile(r"# fw_builtin_bench: lookup=(\w+) entries=(\d+) hit_ns=(\d+) miss_ns=(\d+)")
FOUND_RE = re.compile(r"# fw_builtin_bench: lookup=(\w+) hits_found=(\d+) misses_found=(\d+)")


def write_firmware(folder, count):
    """``count`` files with names like real trees: vendor/chip/fw-0042.bin."""
    if folder.exists():
        subprocess.run(["rm", "-rf", str(folder)], check=True)
    for i in range(count):
        path = folder / benchlib.fw_name(i)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(i.to_bytes(4, "little") * 4)


def measure(make, out, count):
    fwdir = out / f"fw-{count}"
    write_firmware(fwdir, count)
    # A console left by an earlier boot must not pass for this one's.
    (BUILD / OUT_NAME / "console.log").unlink(missing_ok=True)
    benchlib.make_target(make, "run", f"make run ({count} entries)", OUT_NAME=OUT_NAME,
                         FIRMWARE_DIR=fwdir, EXTRA_FRAGMENTS=ROOT / "bench" / "bench.config",
                         QEMU_EXTRA=ICOUNT)
    log = BUILD / OUT_NAME / "console.log"
    console = log.read_text(errors="replace")
    rows = {m.group(1): {"hit_ns": int(m.group(3)), "miss_ns": int(m.group(4))}
            for m in LINE_RE.finditer(console) if int(m.group(2)) == count}
    for m in FOUND_RE.finditer(console):
        rows[m.group(1)].update(hits_found=int(m.group(2)), misses_found=int(m.group(3)))
    if set(rows) != {"lookup", "linear"}:
        raise BenchError(log, f"no benchmark lines for {count} entries")
    for name, row in rows.items():
        if row["hits_found"] == 0 or row["misses_found"] != 0:
            raise BenchError(log, f"{name} lookup found {row['hits_found']} hits and "
                             f"{row['misses_found']} misses; the figures are void")
    return rows


def table(results):
    lines = ["entries  method   hit instr/lookup  miss instr/lookup",
             "-------  -------  ----------------  -----------------"]
    for count, rows in results.items():
        for name in ("linear", "lookup"):
            lines.append(f"{count:>7}  {name:<7}  {rows[name]['hit_ns']:>16}  "
                         f"{rows[name]['miss_ns']:>17}")
    lines += ["", "entries  linear/lookup hits  linear/lookup misses",
              "-------  ------------------  --------------------"]
    for count, rows in results.items():
        lin, bs = rows["linear"], rows["lookup"]
        lines.append(f"{count:>7}  {lin['hit_ns'] / max(bs['hit_ns'], 1):>17.1f}x  "
                     f"{lin['miss_ns'] / max(bs['miss_ns'], 1):>19.1f}x")
    return "\n".join(lines)


def main():
    args = benchlib.parse_args(__doc__, lambda parser: parser.add_argument(
        "--out", default=str(BUILD / OUT_NAME), help="where the firmware sets go"))
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {count: measure(args.make, out, count) for count in SIZES}
    print(table(results))
    benchlib.write_json("lookup", {"unit": "guest instructions per lookup (QEMU versatilepb, "
                                           "-icount shift=0)",
                                   "results": {str(k): v for k, v in results.items()}})


if __name__ == "__main__":
    main()
