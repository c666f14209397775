"""fwembed import-config: a firmware list from a kernel's CONFIG_EXTRA_FIRMWARE.

CONFIG_EXTRA_FIRMWARE="a.bin dir/b.fw" names files below
CONFIG_EXTRA_FIRMWARE_DIR, which is absolute or relative to the kernel
source tree. When a config does not set the directory, Linux 6.1 takes the
files from the build host's /lib/firmware without a word. import-config
refuses to guess: the directory must be set, a relative one needs
--srctree, and every named file must exist.

The list has one entry per name, in the config's order, whose source is
the file's absolute path, under a header that says where it came from. It
is printed, or written to --out through a temporary file and a rename; an
existing file is replaced only with --force.
"""

import os
import pathlib

from .errors import FwembedError
from .fwlist import format_list, representable
from .kconfig import parse_config
from .names import name_problem
from .outdir import write_output_file


def kconfig_string(raw, where, symbol):
    """The value of a .config string: "..." with \\" and \\\\ escapes."""
    if len(raw) < 2 or raw[0] != '"' or raw[-1] != '"':
        raise FwembedError(where, f"{symbol}={raw}: expected a quoted string")
    out = []
    chars = iter(raw[1:-1])
    for ch in chars:
        out.append(next(chars, "\\") if ch == "\\" else ch)
    return "".join(out)


def read_setting(config, values, symbol):
    """(value, where) of a string symbol; value None if it is not set."""
    if symbol not in values:
        return None, str(config)
    raw, line = values[symbol]
    where = f"{config}:{line}"
    return (None if raw == "n" else kconfig_string(raw, where, symbol)), where


def firmware_dir(config, values, fw_where, srctree):
    """The directory CONFIG_EXTRA_FIRMWARE_DIR names, checked."""
    value, where = read_setting(config, values, "CONFIG_EXTRA_FIRMWARE_DIR")
    if value is None:
        raise FwembedError(fw_where, "CONFIG_EXTRA_FIRMWARE_DIR is not set; Linux 6.1 would "
                                     "take the files from the build host's /lib/firmware. "
                                     "Set it to the folder that holds them (even if that is "
                                     "/lib/firmware)")
    if value == "":
        raise FwembedError(where, "CONFIG_EXTRA_FIRMWARE_DIR is empty; Linux 6.1 would look "
                                  "for the files at the root of the build host (/NAME) "
                                  "rather than its /lib/firmware. Set it to the folder that "
                                  "holds them")
    folder = pathlib.Path(value)
    if not folder.is_absolute():
        if srctree is None:
            raise FwembedError(where, f"CONFIG_EXTRA_FIRMWARE_DIR={value!r} is relative to "
                                      "the kernel source tree: give --srctree")
        folder = pathlib.Path(srctree) / folder
    folder = pathlib.Path(os.path.abspath(folder))
    if not folder.is_dir():
        what = "not a directory" if folder.exists() else "no such directory"
        raise FwembedError(where, f"CONFIG_EXTRA_FIRMWARE_DIR: {folder}: {what}")
    return folder


def import_entries(config, srctree=None):
    """Return [(name, absolute source path)] and the two settings as written."""
    values = parse_config(config)
    names_value, fw_where = read_setting(config, values, "CONFIG_EXTRA_FIRMWARE")
    names = (names_value or "").split()
    if not names:
        raise FwembedError(fw_where, "CONFIG_EXTRA_FIRMWARE is empty or not set: "
                                     "no firmware to import")
    folder = firmware_dir(config, values, fw_where, srctree)
    entries = []
    for name in names:
        problem = name_problem(name)
        if problem:
            raise FwembedError(fw_where, f"CONFIG_EXTRA_FIRMWARE: {problem}")
        if name in dict(entries):
            raise FwembedError(fw_where, f"CONFIG_EXTRA_FIRMWARE names {name!r} twice")
        path = folder / name
        if not path.is_file():
            what = "not a regular file" if path.exists() else "no such file"
            raise FwembedError(fw_where, f"CONFIG_EXTRA_FIRMWARE names {name!r}, but "
                                         f"{path}: {what}")
        if not representable(str(path)):
            raise FwembedError(fw_where, f"{str(path)!r}: a firmware list can only hold "
                                         "paths of printable ASCII without '\"'")
        entries.append((name, str(path)))
    return entries, names_value, str(folder)


def list_text(config, entries, names_value, folder):
    shown = os.fsencode(config).decode("ascii", "backslashreplace")
    return format_list([f"Firmware list imported by 'fwembed import-config' from {shown}:",
                        f'  CONFIG_EXTRA_FIRMWARE="{names_value}"',
                        f"  CONFIG_EXTRA_FIRMWARE_DIR (resolved): {folder}",
                        "Sources are absolute paths. Add license=SPDX to each entry for "
                        "'make report'."], entries)


def import_config(config, srctree=None, out=None, force=False):
    """Return the list text; write it to ``out`` if given."""
    entries, names_value, folder = import_entries(config, srctree)
    text = list_text(config, entries, names_value, folder)
    if out is not None:
        write_output_file(out, text, force)
    return text
