"""The firmware list: which files a board embeds, under which names.

One entry per line::

    # comment
    NAME  SOURCE  [OPTION ...]

NAME is the name drivers request. SOURCE is the file that holds the data,
relative to the list's folder (or absolute). A field that contains spaces
or starts with '#' is written in double quotes: ``"my fw, v2.bin"``. Names
cannot contain '"', so no escapes are needed. A '#' that starts a field
begins a comment that runs to the end of the line.

OPTIONs are ``key=value`` (the value may be quoted). Known options:

    license=SPDX    the firmware's license, as an SPDX expression; it is
                    carried into manifest.json
    install=yes|no  yes: the file is installed to the filesystem by
                    'fwembed install' instead of being built in; it is
                    recorded in manifest.json with "builtin": false
                    (default no)
    compress=HOW    how the data is stored: none, xz, zstd or auto (the
                    smaller of xz and zstd, or none if that saves less
                    than one eighth; see compress.py)
    lifetime=WHEN   kernel: the entry stays for the kernel's whole life
                    (default); init: it is served only while the kernel
                    boots, to initcalls, and its memory is freed with
                    the kernel's init memory

A line ``%default OPTION ...`` sets options for the entries below it that
do not set them themselves, up to the next %default line, which starts
afresh: it replaces every earlier default, and an option it does not name
has no default below it. Entries that neither set compress= nor have a
%default for it take the generator's --compress (make's COMPRESS=), else
none.

The same SOURCE may be listed under several names; its data is stored once.

A SOURCE ending in .xz or .zst whose NAME does not end the same way is a
compressed file: the entry's data is the decoded file, as the kernel's own
loader gives "a.bin" from "a.bin.xz". It is stored as it is when Linux
6.1's decoder takes it, else decoded and encoded again (compress= on its
line chooses another encoding; --compress does not apply to it).
"""

import pathlib
import re
import stat

from .entry import Entry
from .compress import METHODS
from .errors import FwembedError
from .names import name_problem
from .source import SUFFIX_OF, encoding_of, kind_of

OPTION_RE = re.compile(r"([A-Za-z0-9_-]+)=(.*)\Z", re.S)
LICENSE_RE = re.compile(r"[A-Za-z0-9.+:() -]+\Z")


def split_fields(text, where):
    """Split one line into raw fields, keeping quotes; drop a comment."""
    fields = []
    i = 0
    while i < len(text):
        if text[i] in " \t":
            i += 1
            continue
        if text[i] == "#":
            break
        start = i
        while i < len(text) and text[i] not in " \t":
            if text[i] == '"':
                end = text.find('"', i + 1)
                if end < 0:
                    raise FwembedError(where, "unterminated quote")
                i = end + 1
            else:
                i += 1
        fields.append(text[start:i])
    return fields


def unquote(field, where, what):
    """Return a field's value: the inside of "...", or the field itself."""
    if len(field) >= 2 and field[0] == '"' and field[-1] == '"' and '"' not in field[1:-1]:
        return field[1:-1]
    if '"' in field:
        raise FwembedError(where, f"{what} {field}: a quoted field must be quoted as a whole")
    return field


def parse_options(fields, where):
    """Turn OPTION fields into a dict, rejecting unknown keys and bad values."""
    options = {}
    for field in fields:
        match = OPTION_RE.match(field)
        if not match:
            raise FwembedError(where, f"unknown option {field!r}: expected key=value")
        key, value = match.group(1), unquote(match.group(2), where, f"option {match.group(1)}")
        if key in options:
            raise FwembedError(where, f"option {key!r} given twice")
        if key == "license":
            if not LICENSE_RE.match(value):
                raise FwembedError(where, f"license={value!r} is not an SPDX license expression")
        elif key == "install":
            if value not in ("yes", "no"):
                raise FwembedError(where, f"install={value!r}: expected yes or no")
        elif key == "lifetime":
            if value not in LIFETIMES:
                raise FwembedError(where, f"lifetime={value!r}: expected kernel or init")
        elif key == "compress":
            if value not in METHODS:
                raise FwembedError(where, f"compress={value!r}: expected one of "
                                          f"{', '.join(METHODS)}")
        else:
            raise FwembedError(where, f"unknown option {key!r}")
        options[key] = value
    return options


DIRECTIVE = "%default"
LIFETIMES = ("kernel", "init")


def spelling(source):
    """A source path without "." parts and doubled slashes. ".." stays: after a
    symlinked folder, "link/../b.bin" is not "b.bin". The file itself is
    known by device and inode when it is opened (source.py)."""
    return str(pathlib.PurePosixPath(source))


def parse_line(text, list_path, lineno, defaults):
    """Return the Entry on one line of a list, or None for a blank line.

    A %default line replaces the contents of ``defaults`` and returns None.
    """
    where = f"{list_path}:{lineno}"
    for ch in text:
        if ch != "\t" and not " " <= ch <= "~":
            raise FwembedError(where, f"control or non-ASCII character {ch!r}")
    fields = split_fields(text, where)
    if not fields:
        return None
    if fields[0].startswith("%"):
        if fields[0] != DIRECTIVE:
            raise FwembedError(where, f"unknown directive {fields[0]!r}: expected {DIRECTIVE}")
        if len(fields) < 2:
            raise FwembedError(where, f"{DIRECTIVE} needs at least one OPTION")
        options = parse_options(fields[1:], where)
        defaults.clear()
        defaults.update(options)
        defaults["%line"] = lineno
        return None
    if len(fields) < 2:
        raise FwembedError(where, "expected NAME SOURCE [OPTION ...]")
    name = unquote(fields[0], where, "name")
    problem = name_problem(name)
    if problem:
        raise FwembedError(where, problem)
    source = unquote(fields[1], where, "source")
    if source == "":
        raise FwembedError(where, "empty source path")
    own = parse_options(fields[2:], where)
    options = {**defaults, **own}
    compress_from = "its line" if "compress" in own else \
        f"%default at line {defaults['%line']}" if "compress" in defaults else None
    if options.get("install") == "yes" and "compress" in own:
        raise FwembedError(where, "compress= does not apply to an install=yes entry, "
                                  "which is not stored in the kernel image")
    if options.get("install") == "yes" and "lifetime" in own:
        raise FwembedError(where, "lifetime= does not apply to an install=yes entry, "
                                  "which is not stored in the kernel image")
    path = pathlib.Path(list_path).parent / source
    # "a.bin  a.bin.xz": the entry's data is the decoded file, as the kernel's
    # loader gives a.bin from a.bin.xz; "a.bin.xz  a.bin.xz" is the file itself.
    encoded = encoding_of(source)
    if encoded and name.endswith(SUFFIX_OF[encoded]):
        encoded = None
    return Entry(name=name, source=spelling(source), path=path, where=where, encoded=encoded,
                 license=options.get("license"), compress=options.get("compress"),
                 compress_from=compress_from, lifetime=options.get("lifetime", "kernel"),
                 install=options.get("install") == "yes")


def read_list(list_path):
    """Parse a firmware list file into entries, checking every source file."""
    list_path = pathlib.Path(list_path)
    try:
        raw = list_path.read_bytes()
    except OSError as err:
        raise FwembedError(list_path, f"cannot read firmware list: {err.strerror}") from None
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError as err:
        line = raw[:err.start].count(b"\n") + 1
        raise FwembedError(f"{list_path}:{line}", "non-ASCII byte in firmware list") from None
    entries = []
    seen = {}
    defaults = {}
    for lineno, line in enumerate(text.split("\n"), start=1):
        entry = parse_line(line.rstrip("\r"), list_path, lineno, defaults)
        if entry is None:
            continue
        if entry.name in seen:
            raise FwembedError(entry.where, f"duplicate firmware name {entry.name!r} "
                                            f"(first listed at line {seen[entry.name]})")
        seen[entry.name] = lineno
        check_source(entry)
        entries.append(entry)
    if not entries:
        raise FwembedError(list_path, "firmware list has no entries")
    return entries


def field(text):
    """``text`` as a list field: quoted when it holds a space or a tab, or
    starts with '#'."""
    return f'"{text}"' if " " in text or "\t" in text or text.startswith("#") else text


def representable(text):
    """Whether ``text`` can be a field of a list: printable ASCII without '"'."""
    return all(" " <= ch <= "~" and ch != '"' for ch in text)


def format_list(comments, entries):
    """The text of a list: ``comments`` as '# ' lines, then one aligned
    "NAME  SOURCE" line per (name, source) of ``entries``."""
    lines = [f"# {line}".rstrip() for line in comments]
    width = max((len(field(name)) for name, _ in entries), default=0)
    lines += [f"{field(name):<{width}}  {field(source)}" for name, source in entries]
    return "\n".join(lines) + "\n"


def check_source(entry):
    """Fail unless the entry's source is a regular file.

    Whether it can be read shows when it is hashed, with the same location.
    """
    try:
        mode = entry.path.stat().st_mode
    except FileNotFoundError:
        raise FwembedError(entry.where, f"source {entry.source!r}: no such file") from None
    except OSError as err:
        raise FwembedError(entry.where, f"source {entry.source!r}: {err.strerror}") from None
    if stat.S_ISDIR(mode):
        raise FwembedError(entry.where, f"source {entry.source!r}: a directory")
    if not stat.S_ISREG(mode):
        raise FwembedError(entry.where, f"source {entry.source!r}: not a regular file "
                                        f"({kind_of(mode)})")
