"""fwembed install: copy firmware entries into a filesystem tree.

Every entry of a list marked install=yes (every entry, with --all) is
copied to DEST/NAME, where the kernel's firmware loader looks for it when
DEST is the root filesystem's /lib/firmware. Subdirectories of the name are
created with mode 0755, files get mode 0644.

Like gen, the run has two phases. The first checks everything and writes
nothing: the list or directory, every source (it is read and hashed), the
destination, and that no name needs to be both a file and a directory. The
second copies each file to a temporary file in its destination folder, checks
the copy's digest, and renames it into place, so a reader sees the old file
or the new one, never half of one. A file that already holds the same bytes
with mode 0644 is left alone.
"""

import hashlib
import os
import pathlib
import stat

from . import atomic
from .errors import FwembedError
from .gen import read_inputs
from .outdir import OutDir
from .source import CHUNK, Source, digest_entry

FILE_MODE = 0o644
DIR_MODE = 0o755


def select(entries, install_all):
    """The entries to install, in name order."""
    chosen = entries if install_all else [e for e in entries if e.install]
    return sorted(chosen, key=lambda e: e.name.encode())


def check_names(chosen):
    """Refuse a name that another name needs as a directory ('a' and 'a/b')."""
    by_name = {e.name: e for e in chosen}
    for entry in chosen:
        parts = entry.name.split("/")
        for i in range(1, len(parts)):
            other = by_name.get("/".join(parts[:i]))
            if other is not None:
                raise FwembedError(entry.where, f"cannot install {entry.name!r}: "
                                                f"{other.name!r} ({other.where}) is a file "
                                                "to install at the same place")


def check_target(dest, entry):
    """Fail if something already at DEST/NAME or on the way stops the install."""
    path = dest
    parts = entry.name.split("/")
    for part in parts[:-1]:
        path = path / part
        if os.path.lexists(path) and not path.is_dir():
            raise FwembedError(path, f"not a directory; cannot install {entry.name!r} "
                                     f"({entry.where})")
    path = path / parts[-1]
    if path.is_dir():
        raise FwembedError(path, f"is a directory; cannot install {entry.name!r} "
                                 f"({entry.where})")
    probe = path.parent
    while not probe.exists():
        probe = probe.parent
    if not os.access(probe, os.W_OK | os.X_OK):
        raise FwembedError(probe, f"not writable; cannot install {entry.name!r} "
                                  f"({entry.where})")


def is_current(path, sha256, size):
    """True if ``path`` is a regular file with this content and mode 0644."""
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size != size or \
                stat.S_IMODE(info.st_mode) != FILE_MODE:
            return False
        sha = hashlib.sha256()
        with open(path, "rb") as installed:
            while chunk := installed.read(CHUNK):
                sha.update(chunk)
    except OSError:
        return False
    return sha.hexdigest() == sha256


def make_dirs(folder):
    """Create ``folder`` and its missing parents with mode 0755."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        try:
            path.mkdir()
            os.chmod(path, DIR_MODE)
        except OSError as err:
            raise FwembedError(path, f"cannot create directory: {err.strerror}") from None


def install_one(entry, sha256, target):
    """Copy one entry to ``target`` through a temporary file and a rename."""
    with atomic.replacing(target, FILE_MODE, failure="cannot install") as tmp:
        with Source(entry) as src:
            src.copy_to(tmp, sha256)


def install(dest, list_path=None, directory=None, install_all=False, report=None):
    """Run both phases; return the number of entries selected."""
    dest = pathlib.Path(dest)
    entries, _ = read_inputs(list_path, directory)
    chosen = select(entries, install_all)
    check_names(chosen)
    digests = {}
    for entry in chosen:
        if entry.path not in digests:
            digests[entry.path] = digest_entry(entry)
    OutDir(dest).check_usable()
    for entry in chosen:
        check_target(dest, entry)

    for entry in chosen:
        sha256, size = digests[entry.path]
        target = dest / entry.name
        if is_current(target, sha256, size):
            continue
        make_dirs(target.parent)
        install_one(entry, sha256, target)
        if report:
            report(target)
    return len(chosen)
