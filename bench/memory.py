#!/usr/bin/python3
"""Memory: table overhead per entry, and what deduplication saves.

Overhead. The firmware objects that bench/build.py assembled in its two
kernel build directories (1,000 entries, 256 MiB) are linked with the
cross linker, with the placement vmlinux.lds.h gives them (.rodata, the
images' .builtin_fw_data, then the .builtin_fw.* entry sections sorted by
name), and the sizes of the output sections are read from the ELF file;
".rodata" in the table counts the first two. What they hold beyond the data
(raw bytes) and the names (each with its NUL) is the overhead: the table
entry, alignment padding, and for fwembed the SHA-256 of each stored form.

Dedup. 64 names of 64 KiB each, once with 64 distinct contents and once
with only 8 (each content under 8 names), go through 'fwembed gen --dir';
every generated .S is assembled against <linux/builtin_fw.h> of the
patched tree and linked the same way. Linux 6.1's CONFIG_EXTRA_FIRMWARE
stores every name's data separately, as the distinct set does.

It prints one table and writes bench/results/memory.json.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import benchlib  # noqa: E402  pylint: disable=wrong-import-position
from benchlib import BUILD, CROSS, KERNEL, ROOT, SUFFIX, TREE, BenchError  # noqa: E402
import build  # noqa: E402  pylint: disable=wrong-import-position

sys.path.insert(0, str(ROOT / "tools"))
from fwembedlib import emit  # noqa: E402  pylint: disable=wrong-import-position
from fwembedlib.elf import read_sections  # noqa: E402  pylint: disable=wrong-import-position
from fwembedlib.manifest import read as read_manifest  # noqa: E402  pylint: disable=wrong-import-position

HERE = BUILD / ("bench-memory" + SUFFIX)
DEDUP_NAMES = 64
DEDUP_DISTINCT = 8
DEDUP_SIZE = 64 << 10
SEED = 11000
# The bounds symbols are vmlinux.lds.h's, which the table's locator names.
LINKER_SCRIPT = """SECTIONS {
  . = 0x10000;
  .rodata : { *(.rodata) *(.rodata.*) }
  .builtin_fw_data : {
    __start_builtin_fw_data = .; KEEP(*(.builtin_fw_data)) __end_builtin_fw_data = .;
  }
  .builtin_fw : ALIGN(8) {
    __start_builtin_fw = .; KEEP(*(SORT_BY_NAME(.builtin_fw.*))) __end_builtin_fw = .;
  }
  /DISCARD/ : { *(.ARM.attributes) }
}
"""


def link(objects, elf):
    """Link ``objects`` as vmlinux places them; return {section: size} of the result."""
    script = elf.with_suffix(".lds")
    script.write_text(LINKER_SCRIPT)
    listing = elf.with_suffix(".objects")
    listing.write_text("".join(f"{o}\n" for o in objects))
    benchlib.run([f"{CROSS}ld", "-T", script, "-o", elf, f"@{listing}"], "link")
    sizes = {s.name: s.size for s in read_sections(elf)}
    elf.unlink()
    # Read-only data: names, digests and the images, which the patched
    # kernel keeps in a section of their own.
    return {"rodata": sizes.get(".rodata", 0) + sizes.get(".builtin_fw_data", 0),
            "builtin_fw": sizes.get(".builtin_fw", 0)}


def overhead(sections, entries, data, names):
    """Bytes per entry beyond the data and the names (with their NULs)."""
    extra = sections["rodata"] + sections["builtin_fw"] - data - names
    return {"entries": entries, "data": data, "names": names, **sections,
            "table_per_entry": sections["builtin_fw"] / entries,
            "overhead_per_entry": round(extra / entries, 2)}


def route_objects(kout, pattern):
    objects = sorted((kout / build.BUILTIN).glob(pattern))
    if not objects:
        raise BenchError(kout / build.BUILTIN, f"no {pattern} objects; run bench/build.py first")
    return objects


def per_entry():
    names = [benchlib.fw_name(i) for i in range(build.COUNT)]
    data = sum(build.set_sizes())
    name_bytes = sum(len(n) + 1 for n in names)
    HERE.mkdir(parents=True, exist_ok=True)
    old = link(route_objects(build.HERE / "linux-6.1-route", "**/*.gen.o"), HERE / "61.elf")
    objects = emit.objects_in_mk((build.HERE / "fw" / "objects.mk").read_text())
    gen = build.HERE / "fwembed-route" / build.BUILTIN / "generated"
    new = link([gen / o for o in objects], HERE / "fwembed.elf")
    return {"linux_6_1": overhead(old, len(names), data, name_bytes),
            "fwembed": overhead(new, len(names), data, name_bytes)}


def assemble(outdir, objdir):
    """Assemble every .S of ``outdir`` into ``objdir``, in one shell command."""
    objdir.mkdir(parents=True, exist_ok=True)
    sources = sorted(outdir.glob("*.S"))
    objects = [objdir / (s.stem + ".o") for s in sources]
    benchlib.run(["sh", "-c", f'for s in "$0"/*.S; do {CROSS}gcc -D__ASSEMBLY__ -I {TREE}/include '
                  f'-Wa,-I"$0" -c "$s" -o "$1/$(basename "$s" .S).o" || exit 1; done',
                  outdir, objdir], "assemble")
    return objects


def dedup_case(label, repeat):
    folder = benchlib.write_set(HERE / f"set-{label}", [DEDUP_SIZE] * DEDUP_NAMES, SEED,
                                repeat=repeat)
    out = HERE / f"fw-{label}"
    benchlib.run(["rm", "-rf", out, HERE / f"obj-{label}"], "clean")
    benchlib.run(["/usr/bin/python3", ROOT / "tools" / "fwembed", "gen", "-q", "--dir", folder,
                  "--out", out], "gen")
    manifest = read_manifest(out / "manifest.json")
    sections = link(assemble(out, HERE / f"obj-{label}"), HERE / f"{label}.elf")
    return {"names": len(manifest), "distinct": len({e.blob for e in manifest}),
            "raw": sum(e.size for e in manifest),
            "image": sections["rodata"] + sections["builtin_fw"], **sections}


def dedup():
    distinct = dedup_case("distinct", None)
    shared = dedup_case("shared", DEDUP_DISTINCT)
    return {"distinct": distinct, "shared": shared,
            "saved": distinct["image"] - shared["image"],
            "saved_fraction": round(1 - shared["image"] / distinct["image"], 4)}


def measure():
    if not (TREE / "include" / "linux" / "builtin_fw.h").exists():
        raise BenchError(TREE, "no patched kernel tree; run 'make tree'")
    return {"overhead": per_entry(), "dedup": dedup()}


def table(r):
    rows = []
    for key, label in (("linux_6_1", f"{KERNEL} CONFIG_EXTRA_FIRMWARE"), ("fwembed", "fwembed")):
        o = r["overhead"][key]
        rows.append([label, o["entries"], o["data"], o["names"], o["rodata"], o["builtin_fw"],
                     f"{o['overhead_per_entry']:.2f}"])
    text = benchlib.format_table(["linked objects", "entries", "data", "names", ".rodata",
                                  ".builtin_fw", "overhead B/entry"], rows)
    d = r["dedup"]
    rows = [[label, d[k]["names"], d[k]["distinct"], d[k]["raw"], d[k]["image"]]
            for k, label in (("distinct", "all distinct"), ("shared", "8 contents"))]
    return text + "\n\n" + benchlib.format_table(
        ["dedup set", "names", "contents", "raw bytes", "image bytes"], rows) + \
        f"\nsaved: {d['saved']} bytes ({100 * d['saved_fraction']:.1f}%)"


def main():
    benchlib.parse_args(__doc__)
    results = measure()
    print(table(results))
    benchlib.write_json("memory", results)


if __name__ == "__main__":
    main()
