"""fwembed needs: the firmware a built kernel's drivers declare, found or not.

Drivers name the firmware they may request with MODULE_FIRMWARE(), which
becomes a "firmware=NAME" string in the module's .modinfo section. Kbuild
collects the strings of built-in drivers, prefixed with the module's name,
in modules.builtin.modinfo ("ath9k_htc.firmware=..."), and lists the
modules it built in modules.order, one .ko path per line (.o from Linux
6.2 on), relative to the build directory.

Each declared name is looked up in a firmware directory, as the kernel's
loader would look below /lib/firmware: NAME, then NAME.xz and NAME.zst.
Two kinds of declaration are reported and never resolved by guessing:

- a pattern, such as "brcm/brcmfmac*-sdio.*.txt": the driver builds the
  real name at run time; the files that match are counted, none is listed;
- versions: names of one module that differ only by a version at the end
  of the file name ("htc_9271.fw", "ath9k_htc/htc_9271-1.4.0.fw"). The
  driver requests one of them at run time. Every one that is present is
  listed, and the group is shown.

A firmware list (fwlist.py's format) of the names that are present can be
written with --write-list; an existing file is replaced only with --force.
Reading a module's .modinfo needs pyelftools, as 'fwembed report' does;
a kernel without modules needs nothing beyond the standard library.
"""

import dataclasses
import fnmatch
import os
import pathlib
import re

from .elf import section_data
from .errors import FwembedError
from .fwlist import format_list, representable
from .names import name_problem
from .outdir import write_output_file
from .source import SUFFIXES

BUILTIN_MODINFO = "modules.builtin.modinfo"
MODULES_ORDER = "modules.order"
PATTERN_CHARS = "*?["
# A version at the end of a file name's stem: "-1.4.0", "-v2", "-29". Not
# "_9271" or "8168g": those are chips.
VERSION_RE = re.compile(r"-v?\d+(\.\d+)*\Z")


@dataclasses.dataclass(frozen=True)
class Declared:
    """One firmware name declared by one driver."""
    module: str
    builtin: bool
    name: str


@dataclasses.dataclass
class Found:
    """A declared name and where the firmware directory has it."""
    name: str
    modules: list
    source: pathlib.Path = None    # the file that holds it, or None
    matches: int = 0               # files that match, for a pattern

    @property
    def pattern(self):
        return is_pattern(self.name)


def is_pattern(name):
    """Whether ``name`` is a glob that the driver fills in at run time."""
    return any(ch in name for ch in PATTERN_CHARS)


def modinfo_strings(data, where):
    """The NUL-terminated strings of a .modinfo section."""
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as err:
        raise FwembedError(where, f"non-ASCII byte at offset {err.start} in .modinfo "
                                  "data") from None
    return [s for s in text.split("\0") if s]


def builtin_declarations(build):
    """The firmware names in ``build``/modules.builtin.modinfo."""
    path = build / BUILTIN_MODINFO
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FwembedError(build, f"no {BUILTIN_MODINFO}: give the output directory of a "
                                  "built kernel (its O=, after 'make vmlinux')") from None
    except OSError as err:
        raise FwembedError(path, f"cannot read: {err.strerror}") from None
    found = []
    for text in modinfo_strings(data, path):
        key, _, value = text.partition("=")
        module, _, tag = key.rpartition(".")
        if tag == "firmware" and module:
            found.append(Declared(module, True, value))
    return found


def module_paths(build):
    """The .ko files that ``build``/modules.order names; [] without it."""
    order = build / MODULES_ORDER
    try:
        lines = order.read_text(encoding="ascii", errors="replace").splitlines()
    except FileNotFoundError:
        return []
    except OSError as err:
        raise FwembedError(order, f"cannot read: {err.strerror}") from None
    paths = []
    for lineno, line in enumerate(lines, start=1):
        line = line.strip()
        if not line:
            continue
        if line.endswith(".o"):
            line = line[:-2] + ".ko"
        path = build / line
        if not path.is_file():
            raise FwembedError(f"{order}:{lineno}", f"{path}: no such module; build the "
                                                    "modules first ('make modules')")
        paths.append(path)
    return paths


def module_declarations(path):
    """The firmware names in one module's .modinfo, under its name= tag."""
    name = path.name.removesuffix(".ko").replace("-", "_")
    firmware = []
    for text in modinfo_strings(section_data(path, ".modinfo"), path):
        key, _, value = text.partition("=")
        if key == "name":
            name = value
        elif key == "firmware":
            firmware.append(value)
    return [Declared(name, False, fw) for fw in firmware]


def declarations(build):
    """Every firmware name that ``build``'s drivers declare."""
    build = pathlib.Path(build)
    if not build.is_dir():
        raise FwembedError(build, "no such directory" if not build.exists()
                           else "not a directory")
    found = builtin_declarations(build)
    for path in module_paths(build):
        found += module_declarations(path)
    return found


def locate(declared, firmware_dir):
    """One Found per distinct name, sorted by name, looked up in firmware_dir."""
    firmware_dir = pathlib.Path(firmware_dir)
    if not firmware_dir.is_dir():
        raise FwembedError(firmware_dir, "no such directory" if not firmware_dir.exists()
                           else "not a directory")
    by_name = {}
    for decl in declared:
        item = by_name.setdefault(decl.name, Found(decl.name, []))
        label = decl.module if decl.builtin else f"{decl.module} (module)"
        if label not in item.modules:
            item.modules.append(label)
    files = None
    for item in by_name.values():
        if item.pattern:
            if files is None:
                files = sorted(str(p.relative_to(firmware_dir))
                               for p in firmware_dir.rglob("*") if p.is_file())
            item.matches = len(fnmatch.filter(files, item.name))
        elif name_problem(item.name) is None:
            for suffix in ("", *SUFFIXES):
                candidate = firmware_dir / (item.name + suffix)
                if candidate.is_file():
                    item.source = candidate
                    break
    return [by_name[name] for name in sorted(by_name)]


def version_key(name):
    """``name``'s file name without a "-NUMBER" or "-vN.N.N" version before its
    extension: "htc_9271" for both "htc_9271.fw" and "x/htc_9271-1.4.0.fw"."""
    base = name.rpartition("/")[2]
    stem, dot, ext = base.rpartition(".")
    if not dot or ext.isdigit():
        stem, dot, ext = base, "", ""
    return VERSION_RE.sub("", stem) + dot + ext


def version_groups(declared):
    """[(module, [names])] of names of one module that differ only in a
    version at the end of the file name."""
    groups = {}
    for decl in declared:
        if is_pattern(decl.name):
            continue
        names = groups.setdefault((decl.module, version_key(decl.name)), [])
        if decl.name not in names:
            names.append(decl.name)
    return sorted((module, sorted(names)) for (module, _), names in groups.items()
                  if len(names) > 1)


def status(item):
    problem = name_problem(item.name)
    if problem:
        return f"not loadable: {problem}"
    if item.pattern:
        return f"pattern: {item.matches} files match, none listed"
    if item.source is None:
        return "missing"
    return "present" if item.source.name == pathlib.PurePosixPath(item.name).name \
        else f"present as {item.source.name}"


def table(found, firmware_dir):
    """The report's lines: one row per name, with a header."""
    rows = [("FIRMWARE", "DECLARED BY", f"IN {firmware_dir}")]
    rows += [(item.name, ", ".join(item.modules), status(item)) for item in found]
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    return [f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]}".rstrip() for row in rows]


def plural(count, noun):
    return f"{count} {noun}" + ("" if count == 1 else "s")


def summary(found, groups):
    present = sum(1 for item in found if item.source)
    patterns = sum(1 for item in found if item.pattern)
    missing = len(found) - present - patterns
    lines = [f"{plural(len(found), 'name')} declared: {present} present, {missing} missing, "
             f"{plural(patterns, 'pattern')}"]
    for module, names in groups:
        lines.append(f"versions: {module} declares {', '.join(names)}: one image in "
                     "several versions (or chip revisions); the driver chooses at run "
                     "time, so fwembed chooses none and lists every one present")
    return lines


def write_list(out, found, build, firmware_dir, force):
    entries = [(item.name, os.path.abspath(item.source)) for item in found if item.source]
    for _, path in entries:
        if not representable(path):
            raise FwembedError(path, "a firmware list can only hold paths of printable ASCII "
                                     "without '\"'; no list written")
    if not entries:
        raise FwembedError(firmware_dir, "has none of the declared firmware; no list written")
    text = format_list([f"Firmware that the drivers of {build} declare (MODULE_FIRMWARE),",
                        f"found in {firmware_dir} by 'fwembed needs'. Patterns and missing",
                        "names are left out. Add license=SPDX to each entry for 'make report'."],
                       entries)
    write_output_file(out, text, force)
    return len(entries)


def needs(build, firmware_dir, out=None, force=False):
    """Return the report's lines; write the list to ``out`` if given."""
    declared = declarations(build)
    if not declared:
        return [f"{build}: its drivers declare no firmware (no MODULE_FIRMWARE tags)"]
    found = locate(declared, firmware_dir)
    lines = table(found, firmware_dir) + summary(found, version_groups(declared))
    if out is not None:
        count = write_list(out, found, build, firmware_dir, force)
        lines.append(f"wrote {out}: {count} entries")
    return lines
