"""The built-in firmware listing that the test init copies from debugfs.

The init program prints the file between two marker lines. The listing is a
header line, then one line per entry with six tab-separated fields: name,
size, stored size, compression, sha256 ('-' when the kernel has none) and
lifetime: "kernel", "init" for an init-only entry before the kernel frees
its init memory, "freed" after. 'fwembed ls' prints the same lines, as
they are before the kernel has booted.
"""

import dataclasses
import re

from .verify import builtin_entries

BEGIN = "fwembed-init: listing begin"
END = "fwembed-init: listing end"
# 'fwembed-init: after boot: "NAME": served' or '...: error -2'
AFTER_BOOT = re.compile(r'fwembed-init: after boot: "(.*)": (served|error (-?\d+))$')
ENOENT = 2
HEADER = ["name", "size", "stored_size", "compression", "sha256", "lifetime"]


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
            elif len(fields) == len(HEADER):
                name, size, stored, compression, sha256, lifetime = fields
                listing.rows[name] = {"size": size, "stored_size": stored,
                                      "compression": compression, "sha256": sha256,
                                      "lifetime": lifetime}
    return listing


def mismatches(manifest_entries, listing, booted=True):
    """Why the listing disagrees with the manifest: a list of reasons.

    ``booted``: the listing was read after the kernel freed its init
    memory, as the test init reads it, so init-only entries must say
    "freed"; else, as 'fwembed ls' prints it, "init".
    """
    if not listing.found:
        return ["no debugfs listing on the console (is CONFIG_FW_LOADER_BUILTIN_DEBUGFS set?)"]
    problems = []
    if not listing.complete:
        problems.append("debugfs listing ends early")
    if not listing.header_ok:
        problems.append("debugfs listing has no header line")
    for entry in builtin_entries(manifest_entries):
        row = listing.rows.get(entry.name)
        lifetime = entry.lifetime
        if lifetime == "init" and booted:
            lifetime = "freed"
        want = {"size": str(entry.size), "stored_size": str(entry.stored_size),
                "compression": entry.compression, "sha256": entry.sha256,
                "lifetime": lifetime}
        if row is None:
            problems.append(f"{entry.name!r} missing from the debugfs listing")
        elif row != want:
            diff = ", ".join(f"{k} {row[k]} (manifest {v})" for k, v in want.items()
                             if row[k] != v)
            problems.append(f"{entry.name!r} listed with {diff}")
    return problems


def after_boot(lines):
    """{name: None if served, else the error}: what the kernel answered when
    the test init requested each freed entry again."""
    answers = {}
    for raw in lines:
        match = AFTER_BOOT.search(raw.rstrip("\r\n"))
        if match:
            answers[match.group(1)] = None if match.group(2) == "served" \
                else int(match.group(3))
    return answers


def gone_after_boot(manifest_entries, lines):
    """(name, why or "") for each init-only entry: requested again after
    boot, it must fail with -ENOENT, as the name is on no filesystem."""
    answers = after_boot(lines)
    results = []
    for entry in builtin_entries(manifest_entries):
        if entry.lifetime != "init":
            continue
        if entry.name not in answers:
            why = "not requested after boot (does the kernel have CONFIG_TEST_FIRMWARE?)"
        elif answers[entry.name] is None:
            why = "still served after boot"
        elif answers[entry.name] != -ENOENT:
            why = f"error {answers[entry.name]} after boot, expected -{ENOENT}"
        else:
            why = ""
        results.append((entry, why))
    return results
