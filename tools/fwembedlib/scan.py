"""Directory mode: every regular file below a directory, named by its path.

--include and --exclude select files by their name (the path below the
directory) with shell globs, as fnmatch matches them: "*" also matches "/".
A file is taken if it matches some --include (or there is none) and no
--exclude; a file that is not taken is not checked or read. A symlink to a
folder is refused whatever the globs say.

A file whose name ends in .xz or .zst is compressed firmware, as Fedora,
Arch and Gentoo install it: it is embedded under its name without the
suffix, which is the name drivers request (fwlist.py says how it is stored).
Two files that give one name ("a.bin" and "a.bin.xz") are an error.

A symlink to a regular file inside the directory becomes an alias: its name
is the link's path and its data is the target's, stored once. A symlink that
leaves the directory, a dangling or looping symlink, a symlink to a directory
and any file that is not regular (fifo, socket, device) are errors.
"""

import fnmatch
import os
import pathlib

from .entry import Entry
from .errors import FwembedError
from .names import name_problem
from .source import SUFFIX_OF, encoding_of, kind_of


def resolve_link(root, link, where):
    """Return the target of a symlink as a path relative to ``root``."""
    try:
        target = pathlib.Path(os.path.realpath(link, strict=True))
    except OSError as err:
        raise FwembedError(where, f"symlink cannot be resolved: {err.strerror}") from None
    try:
        rel = target.relative_to(root)
    except ValueError:
        raise FwembedError(where, f"symlink points outside {root}: {target}") from None
    if not target.is_file():
        raise FwembedError(where, "symlink does not point to a regular file")
    return rel.as_posix()


def selected(name, include=(), exclude=()):
    """True if ``name`` matches an include glob (or there is none) and no exclude glob."""
    if include and not any(fnmatch.fnmatchcase(name, glob) for glob in include):
        return False
    return not any(fnmatch.fnmatchcase(name, glob) for glob in exclude)


def scan_dir(directory, walked=None, include=(), exclude=()):
    """Return the entries for every file below ``directory``, sorted by name.

    Every directory read is appended to ``walked``, if given, for the make
    dependency file: a file added or removed changes its directory.
    """
    directory = pathlib.Path(directory)
    if not directory.is_dir():
        what = "not a directory" if directory.exists() else "no such directory"
        raise FwembedError(directory, f"firmware directory: {what}")
    root = pathlib.Path(os.path.realpath(directory))
    entries = []
    names = {}
    errors = []

    def walk_error(err):
        errors.append(err)

    for dirpath, dirnames, filenames in os.walk(directory, onerror=walk_error):
        dirnames.sort()
        if walked is not None:
            walked.append(pathlib.Path(dirpath))
        for dirname in list(dirnames):
            full = pathlib.Path(dirpath, dirname)
            if full.is_symlink():
                raise FwembedError(full, "symlink to a directory is not supported; "
                                         "link the files instead")
        for filename in sorted(filenames):
            full = pathlib.Path(dirpath, filename)
            name = full.relative_to(directory).as_posix()
            if not selected(name, include, exclude):
                continue
            problem = name_problem(name)
            if problem:
                raise FwembedError(full, problem)
            if full.is_symlink():
                source = resolve_link(root, full, full)
            elif full.is_file():
                source = name
            else:
                raise FwembedError(full, f"not a regular file ({kind_of(full.lstat().st_mode)})")
            encoded = encoding_of(name)
            if encoded:
                name = name[:-len(SUFFIX_OF[encoded])]
                problem = name_problem(name)
                if problem:
                    raise FwembedError(full, problem)
            if name in names:
                raise FwembedError(full, f"gives the name {name!r}, as {names[name]} does")
            names[name] = full
            entries.append(Entry(name=name, source=source, path=root / source,
                                 where=str(full), nofollow=True, encoded=encoded))
    if errors:
        err = errors[0]
        raise FwembedError(err.filename or directory, f"cannot read directory: {err.strerror}")
    if not entries:
        if include or exclude:
            raise FwembedError(directory, "no file of the firmware directory is selected by "
                                          "--include/--exclude")
        raise FwembedError(directory, "firmware directory holds no files")
    return entries
