"""The built-in firmware listing that the test init copies from debugfs.

The init program prints the file between two marker lines. The listing is a
header line, then one line per entry with five tab-separated fields: name,
size, stored size, compression and sha256 ('-' when the kernel has none).
"""

import dataclasses

from .verify import builtin_entries

BEGIN = "fwembed-init: listing begin"
END = "fwembed-init: listing end"
HEADER = ["name", "size", "stored_size", "compression", "sha256"]


@dataclasses.dataclass
class Listing:
    found: bool = False
    complete: bool = False
    header_ok: bool = False
    rows: dict = dataclasses.field(default_factory=dict)


def parse(lines):
    """Return the Listing found in console lines (the last one, if several)."""
    listing = Listing()
    inside = False
    for raw in lines:
        line = raw.rstrip("\r\n")
        if line.strip() == BEGIN:
            listing = Listing(found=True)
            inside = True
        elif line.strip() == END and inside:
            listing.complete = True
            inside = False
        elif inside:
            fields = line.split("\t")
            if fields == HEADER:
                listing.header_ok = True
            elif len(fields) == 5:
                name, size, stored, compression, sha256 = fields
                listing.rows[name] = {"size": size, "stored_size": stored,
                                      "compression": compression, "sha256": sha256}
    return listing


def mismatches(manifest_entries, listing):
    """Why the listing disagrees with the manifest: a list of reasons."""
    if not listing.found:
        return ["no debugfs listing on the console (is CONFIG_FW_LOADER_BUILTIN_DEBUGFS set?)"]
    problems = []
    if not listing.complete:
        problems.append("debugfs listing ends early")
    if not listing.header_ok:
        problems.append("debugfs listing has no header line")
    for entry in builtin_entries(manifest_entries):
        row = listing.rows.get(entry.name)
        want = {"size": str(entry.size), "stored_size": str(entry.stored_size),
                "compression": entry.compression, "sha256": entry.sha256}
        if row is None:
            problems.append(f"{entry.name!r} missing from the debugfs listing")
        elif row != want:
            diff = ", ".join(f"{k} {row[k]} (manifest {v})" for k, v in want.items()
                             if row[k] != v)
            problems.append(f"{entry.name!r} listed with {diff}")
    return problems
