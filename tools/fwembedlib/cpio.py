"""fwembed cpio: firmware files as /lib/firmware of a test initramfs.

The archive is in the "newc" format that the kernel unpacks, and it may be
appended to another initramfs archive (the kernel unpacks them in turn).
Every regular file below a folder becomes /lib/firmware/<its path>, and
/lib/firmware/fw_builtin_selftest.list names them all, one per line, so that
the kernel's boot self-test requests each of them too. Unlike the kernel's
gen_init_cpio list format, any valid firmware name works, spaces included.

The archive is deterministic: members in name order, owner root, mode 0644
for files and 0755 for folders, timestamps 0.
"""

import pathlib

from . import atomic
from .errors import FwembedError
from .names import name_problem

PREFIX = "lib/firmware"
SELFTEST_LIST = "fw_builtin_selftest.list"
TRAILER = "TRAILER!!!"


def pad4(data):
    return data + b"\0" * (-len(data) % 4)


def member(ino, path, mode, data=b""):
    """One newc header, name and data, each padded to four bytes."""
    name = path.encode() + b"\0"
    fields = (ino, mode, 0, 0, 2 if mode & 0o040000 else 1, 0, len(data),
              0, 0, 0, 0, len(name), 0)
    header = b"070701" + b"".join(b"%08X" % f for f in fields)
    return pad4(header + name) + pad4(data)


def tree(files, folders=()):
    """A newc archive of ``files`` ({path: (mode, bytes)}), after every folder
    they are in and the extra ``folders``, each folder mode 0755."""
    every_folder = set(folders)
    for path in files:
        parts = path.split("/")[:-1]
        every_folder.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    out = []
    ino = 0
    for folder in sorted(every_folder):
        ino += 1
        out.append(member(ino, folder, 0o040755))
    for path in sorted(files):
        ino += 1
        mode, data = files[path]
        out.append(member(ino, path, mode, data))
    out.append(member(0, TRAILER, 0))
    return b"".join(out)


def archive(files):
    """A newc archive of ``files`` ({relative name: bytes}) below /lib/firmware."""
    return tree({f"{PREFIX}/{name}": (0o100644, data) for name, data in files.items()})


def collect(folder):
    """Every regular file below ``folder``: {relative name: bytes}."""
    folder = pathlib.Path(folder)
    if not folder.is_dir():
        raise FwembedError(folder, "not a directory")
    files = {}
    for path in sorted(folder.rglob("*")):
        if path.is_dir() and not path.is_symlink():
            continue
        name = path.relative_to(folder).as_posix()
        if not path.is_file() or path.is_symlink():
            raise FwembedError(path, "not a regular file")
        problem = name_problem(name)
        if problem:
            raise FwembedError(path, problem)
        files[name] = path.read_bytes()
    return files


def write_archive(folder, out):
    """Pack ``folder`` with its self-test list into the file ``out``."""
    files = collect(folder)
    if SELFTEST_LIST in files:
        raise FwembedError(pathlib.Path(folder) / SELFTEST_LIST,
                           "name is reserved for the self-test list")
    files[SELFTEST_LIST] = "".join(f"{name}\n" for name in sorted(files)).encode()
    atomic.write_file(out, archive(files))
    return sorted(files)
