"""fwembed report: what a firmware set holds and what it costs the kernel.

One row per manifest entry: name, size, stored size, ratio (stored size
over size), compression, the first 12 hex digits of its SHA-256, license,
whether it is built in or installed to the filesystem, and for how long a
built-in entry stays: "kernel" for the kernel's whole life, "init" for an
entry freed with the init memory after boot. Then totals, where the data
of init-only entries is counted apart, as freed after boot.
Given the vmlinux built with the firmware and one built from the same
configuration without it, the growth of the kernel, read from the two ELF
files: the size of every allocated section that changed, and of all
allocated sections together. The same data can be written as JSON.
"""

import json
import pathlib

from .elf import read_sections
from .manifest import read as read_manifest
from .outdir import OutDir


def entry_rows(manifest_entries):
    """The report's view of each manifest entry."""
    rows = []
    for entry in manifest_entries:
        size, stored = entry.size, entry.stored_size
        rows.append({
            "name": entry.name,
            "size": size,
            "stored_size": stored,
            "ratio": round(stored / size, 4) if size else None,
            "compression": entry.compression,
            "sha256": entry.sha256,
            "license": entry.license,
            "builtin": entry.builtin,
            "lifetime": entry.lifetime if entry.builtin else None,
            "blob": entry.blob,
        })
    return rows


def totals(rows):
    """Counts and byte totals; aliases share one stored object."""
    builtin = [r for r in rows if r["builtin"]]
    installed = [r for r in rows if not r["builtin"]]
    distinct = {r["blob"] or r["sha256"]: r["stored_size"] for r in builtin}
    # Data stays if any name stored on it stays.
    resident = {r["blob"] or r["sha256"] for r in builtin if r["lifetime"] != "init"}
    freed = {blob: size for blob, size in distinct.items() if blob not in resident}
    return {
        "entries": len(rows),
        "builtin_entries": len(builtin),
        "builtin_size": sum(r["size"] for r in builtin),
        "builtin_stored_size": sum(r["stored_size"] for r in builtin),
        "builtin_objects": len(distinct),
        "builtin_objects_size": sum(distinct.values()),
        "init_entries": sum(1 for r in builtin if r["lifetime"] == "init"),
        "init_objects": len(freed),
        "init_objects_size": sum(freed.values()),
        "install_entries": len(installed),
        "install_size": sum(r["size"] for r in installed),
    }


def allocated_sizes(path):
    """{section name: size} of the sections that are part of the loaded image."""
    sizes = {}
    for section in read_sections(path):
        if section.allocated:
            sizes[section.name] = sizes.get(section.name, 0) + section.size
    return sizes


def growth(vmlinux, base_vmlinux):
    """How vmlinux grew over base_vmlinux: per changed section, and in all."""
    with_fw, without = allocated_sizes(vmlinux), allocated_sizes(base_vmlinux)
    names = list(with_fw) + [n for n in without if n not in with_fw]
    sections = [{"name": n, "without": without.get(n, 0), "with": with_fw.get(n, 0),
                 "growth": with_fw.get(n, 0) - without.get(n, 0)} for n in names]
    return {
        "vmlinux": str(vmlinux),
        "base_vmlinux": str(base_vmlinux),
        "sections": [s for s in sections if s["growth"]],
        "allocated": {"without": sum(without.values()), "with": sum(with_fw.values()),
                      "growth": sum(with_fw.values()) - sum(without.values())},
    }


def build_report(manifest, vmlinux=None, base_vmlinux=None):
    rows = entry_rows(read_manifest(manifest))
    return {
        "fwembed_report": 1,
        "manifest": str(manifest),
        "entries": rows,
        "totals": totals(rows),
        "vmlinux": growth(vmlinux, base_vmlinux) if vmlinux else None,
    }


def table(header, rows, right):
    """Text table: columns as wide as their widest cell."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    lines = []
    for row in [header, ["-" * w for w in widths]] + rows:
        cells = [str(c).rjust(w) if i in right else str(c).ljust(w)
                 for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
    return lines


def format_report(report):
    """The report as the lines that 'fwembed report' prints."""
    header = ["name", "size", "stored", "ratio", "compression", "sha256", "license", "where",
              "lifetime"]
    rows = [[r["name"], r["size"], r["stored_size"],
             f"{r['ratio']:.1%}" if r["ratio"] is not None else "-",
             r["compression"], r["sha256"][:12], r["license"] or "-",
             "built-in" if r["builtin"] else "install", r["lifetime"] or "-"]
            for r in report["entries"]]
    lines = table(header, rows, right={1, 2, 3})
    t = report["totals"]
    lines += ["",
              f"{t['entries']} entries: {t['builtin_entries']} built in, "
              f"{t['install_entries']} to install",
              f"built in: {t['builtin_size']} bytes, stored as {t['builtin_stored_size']} bytes; "
              f"{t['builtin_objects']} distinct data objects hold "
              f"{t['builtin_objects_size']} bytes",
              f"freed after boot: {t['init_objects_size']} bytes, the data of "
              f"{t['init_objects']} objects that only the {t['init_entries']} init-only "
              "entries use",
              f"to install: {t['install_size']} bytes"]
    vml = report["vmlinux"]
    if vml:
        grown = [[s["name"], s["without"], s["with"], f"{s['growth']:+d}"]
                 for s in vml["sections"]]
        alloc = vml["allocated"]
        grown.append(["all allocated", alloc["without"], alloc["with"],
                      f"{alloc['growth']:+d}"])
        lines += ["",
                  f"vmlinux growth: {alloc['growth']:+d} bytes of allocated sections",
                  f"  with firmware:    {vml['vmlinux']}",
                  f"  without firmware: {vml['base_vmlinux']}",
                  ""]
        lines += table(["section", "without", "with", "growth"], grown, right={1, 2, 3})
    return lines


def report(manifest, vmlinux=None, base_vmlinux=None, json_path=None):
    """Build the report, write the JSON if asked; return the printed lines."""
    data = build_report(manifest, vmlinux, base_vmlinux)
    if json_path:
        json_path = pathlib.Path(json_path)
        out = OutDir(json_path.parent)
        out.check_usable()
        out.create()
        out.write_text(json_path.name, json.dumps(data, indent=2) + "\n")
    return format_report(data)
