#!/usr/bin/python3
"""Resident size of built-in firmware: raw against xz, zstd and auto.

For each compression setting it builds the versatile kernel with every file
of a firmware directory built in (default /lib/firmware, which Debian's
firmware-linux-free fills), boots it through 'make run' (which verifies
every entry in QEMU), and measures what the firmware costs the kernel for
as long as it runs, from the ELF objects that were linked into vmlinux:

data     the stored bytes (the .builtin_fw_data of every data-*.o),
         which must add up to the stored sizes the manifest records
table    the struct builtin_fw entries (the .builtin_fw.* sections)
names    the name strings (the mergeable .rodata.str1.1 of table.o)
digests  one SHA-256 per stored form, for CONFIG_FW_LOADER_BUILTIN_VERIFY
         (the .rodata of every data-*.o)

"resident" is data + table + names; the padding that aligns each raw blob
to 16 bytes is not in it ('make report' measures it, as part of the whole
growth of vmlinux). The kernel's own view is the rodata
figure of its boot "Memory:" line, in KiB. It prints one table and writes
bench/results/size.json.
"""

import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import benchlib  # noqa: E402  pylint: disable=wrong-import-position
from benchlib import ROOT, SUFFIX, BenchError  # noqa: E402

sys.path.insert(0, str(ROOT / "tools"))

from fwembedlib import emit  # noqa: E402  pylint: disable=wrong-import-position
from fwembedlib.elf import read_sections  # noqa: E402  pylint: disable=wrong-import-position
from fwembedlib.manifest import read as read_manifest  # noqa: E402  pylint: disable=wrong-import-position

SETTINGS = ("none", "xz", "zstd", "auto")
OUT_NAME = "bench-size" + SUFFIX
DIGEST = 32
MEMORY_RE = re.compile(r"Memory: .*?(\d+)K rodata")


def section_sizes(path, predicate):
    return sum(s.size for s in read_sections(path) if predicate(s.name))


def linked_blobs(objects_mk, generated):
    """The blob objects that objects.mk links in; older ones may linger."""
    names = emit.objects_in_mk(objects_mk.read_text())
    return [generated / name for name in sorted(set(names)) if name.startswith("data-")]


def measure_objects(objects_mk, generated):
    """Sizes in bytes from the generated objects the kernel linked."""
    blobs = linked_blobs(objects_mk, generated)
    if not blobs:
        raise BenchError(objects_mk, "no blob objects")
    table_o = generated / "table.o"
    return {
        "data": sum(section_sizes(b, lambda n: n == ".builtin_fw_data") for b in blobs),
        "digests": sum(section_sizes(b, lambda n: n == ".rodata") for b in blobs),
        "table": section_sizes(table_o, lambda n: n.startswith(".builtin_fw.")),
        "names": section_sizes(table_o, lambda n: n.startswith(".rodata.str")),
        "blobs": len(blobs),
    }


def measure(make, fwdir, setting):
    # A console left by an earlier boot must not pass for this one's.
    (ROOT / "build" / OUT_NAME / "console.log").unlink(missing_ok=True)
    benchlib.make_target(make, "run", f"make run (COMPRESS={setting})", OUT_NAME=OUT_NAME,
                         FIRMWARE_DIR=fwdir, COMPRESS=setting)
    out = ROOT / "build" / OUT_NAME
    manifest = [e for e in read_manifest(out / "fw" / "manifest.json") if e.builtin]
    row = measure_objects(out / "fw" / "objects.mk",
                          out / "linux" / "drivers/base/firmware_loader/builtin/generated")
    row["entries"] = len(manifest)
    row["raw"] = sum(e.size for e in manifest)
    # Stored bytes in the image: once per stored form, however many names.
    row["stored"] = sum({e.blob: e.stored_size for e in manifest}.values())
    if row["data"] != row["stored"] or row["digests"] != DIGEST * row["blobs"]:
        raise BenchError(out / "fw", f"objects hold {row['data']} data and {row['digests']} "
                         f"digest bytes; the manifest says {row['stored']} stored bytes in "
                         f"{row['blobs']} blobs")
    row["resident"] = row["data"] + row["table"] + row["names"]
    memory = MEMORY_RE.search((out / "console.log").read_text(errors="replace"))
    if not memory:
        raise BenchError(out / "console.log", "no Memory: line")
    row["rodata_kib"] = int(memory.group(1))
    return row


def table(rows):
    lines = ["compress  entries  raw bytes  stored    data  table  names  resident"
             "  % of raw  digests  boot rodata",
             "--------  -------  ---------  ------  ------  -----  -----  --------"
             "  --------  -------  -----------"]
    for setting, r in rows.items():
        lines.append(f"{setting:<8}  {r['entries']:>7}  {r['raw']:>9}  {r['stored']:>6}  "
                     f"{r['data']:>6}  {r['table']:>5}  {r['names']:>5}  {r['resident']:>8}  "
                     f"{100 * r['resident'] / r['raw']:>7.1f}%  {r['digests']:>7}  "
                     f"{r['rodata_kib']:>9} K")
    return "\n".join(lines)


def main():
    args = benchlib.parse_args(__doc__, lambda parser: parser.add_argument(
        "--firmware-dir", default="/lib/firmware", help="the firmware to build in"))
    rows = {setting: measure(args.make, args.firmware_dir, setting) for setting in SETTINGS}
    print(table(rows))
    benchlib.write_json("size", {"firmware_dir": args.firmware_dir, "unit": "bytes",
                                 "results": rows})


if __name__ == "__main__":
    main()
