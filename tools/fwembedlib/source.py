"""Reading a firmware source: one open file, known by device and inode.

A source is opened once, with O_NONBLOCK (so that a FIFO cannot block the
run) and, where a symlink is not allowed, O_NOFOLLOW. Its type is checked
on the open descriptor with fstat(), so a file swapped for something else
after it was listed is caught where it is read. Everything the generator
embeds of it (its digest, its copy, its compressed form) is read from that
one descriptor, and it is identified by (device, inode), not by how its
path is spelled: ``b.bin`` and ``link/../b.bin`` are one file only if they
are the same inode.
"""

import errno
import hashlib
import os
import stat

from .errors import FwembedError

CHUNK = 1 << 20

KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
         (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
         (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symlink"))


def kind_of(mode):
    """What a file that is not regular is, in words."""
    for test, what in KINDS:
        if test(mode):
            return what
    return "not a regular file"


class Source:
    """One open source file of one entry. Use as a context manager."""

    def __init__(self, entry):
        self.entry = entry
        self.fd = None
        self.size = None
        self.identity = None

    def fail(self, message):
        return FwembedError(self.entry.where, f"source {self.entry.source!r}: {message}")

    def __enter__(self):
        if self.fd is not None:  # already open: a task took over the descriptor
            return self
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
        if self.entry.nofollow:
            flags |= os.O_NOFOLLOW
        try:
            self.fd = os.open(self.entry.path, flags)
        except FileNotFoundError:
            raise self.fail("no such file") from None
        except OSError as err:
            if err.errno == errno.ELOOP and self.entry.nofollow:
                raise self.fail("is a symlink, where a regular file was found") from None
            if err.errno == errno.ENXIO:  # open() of a socket
                raise self.fail("not a regular file (a socket)") from None
            raise self.fail(err.strerror) from None
        info = os.fstat(self.fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(self.fd)
            self.fd = None
            raise self.fail(f"not a regular file ({kind_of(info.st_mode)})")
        self.size = info.st_size
        self.identity = (info.st_dev, info.st_ino)
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def chunks(self):
        """The file's bytes from its start, CHUNK at a time."""
        offset = 0
        while True:
            try:
                chunk = os.pread(self.fd, CHUNK, offset)
            except OSError as err:
                raise self.fail(err.strerror) from None
            if not chunk:
                return
            offset += len(chunk)
            yield chunk

    def digest(self):
        """(sha256 hex, size) of the bytes read now."""
        sha = hashlib.sha256()
        size = 0
        for chunk in self.chunks():
            sha.update(chunk)
            size += len(chunk)
        return sha.hexdigest(), size

    def checked_chunks(self, sha256):
        """The bytes again, failing at the end if they no longer have ``sha256``."""
        sha = hashlib.sha256()
        for chunk in self.chunks():
            sha.update(chunk)
            yield chunk
        if sha.hexdigest() != sha256:
            raise self.fail("changed while it was read")

    def copy_to(self, dest, sha256):
        """Write the file's bytes to ``dest``; they must have ``sha256``."""
        try:
            with open(dest, "wb") as out:
                for chunk in self.checked_chunks(sha256):
                    out.write(chunk)
        except OSError as err:
            raise FwembedError(dest, f"cannot write: {err.strerror}") from None


def digest_entry(entry):
    """(sha256 hex, size) of an entry's source."""
    with Source(entry) as src:
        return src.digest()
