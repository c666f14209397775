"""Reading a firmware source: one open file, known by device and inode.

A source is opened once, with O_NONBLOCK (so that a FIFO cannot block the
run) and, where a symlink is not allowed, O_NOFOLLOW. Its type is checked
on the open descriptor with fstat(), so a file swapped for something else
after it was listed is caught where it is read. Everything the generator
embeds of it (its digest, its copy, its compressed form) is read from that
one descriptor, and it is identified by (device, inode), not by how its
path is spelled: ``b.bin`` and ``link/../b.bin`` are one file only if they
are the same inode.

A source that is a .xz or .zst file (Entry.encoded) holds the entry's data
encoded: its data is what ``xz -d`` or ``zstd -d`` makes of the file, with
the decoder reading the same descriptor. Its digest is that of the decoded
data, as drivers receive it; file_sha256 is that of the file itself.
"""

import errno
import hashlib
import os
import stat
import subprocess

from .errors import FwembedError

SUFFIXES = {".xz": "xz", ".zst": "zstd"}
SUFFIX_OF = {encoding: suffix for suffix, encoding in SUFFIXES.items()}


def encoding_of(path):
    """"xz" or "zstd" if ``path`` ends in .xz or .zst, else None."""
    for suffix, encoding in SUFFIXES.items():
        if str(path).endswith(suffix):
            return encoding
    return None

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
        self.file_sha256 = None
        self.cancel = None  # a threading.Event that stops reading when set

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
        # Device and inode name the file; size and times make sure that a
        # file deleted during the run and its inode reused is not taken for it.
        self.identity = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns,
                         info.st_ctime_ns)
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def chunks(self):
        """The file's bytes from its start, CHUNK at a time."""
        offset = 0
        while True:
            if self.cancel is not None and self.cancel.is_set():
                raise self.fail("cancelled")
            try:
                chunk = os.pread(self.fd, CHUNK, offset)
            except OSError as err:
                raise self.fail(err.strerror) from None
            if not chunk:
                return
            offset += len(chunk)
            yield chunk

    def decoded_chunks(self):
        """The entry's data decoded from the file, by the decoder reading the descriptor."""
        encoding = self.entry.encoded
        cmd = [encoding, "-d", "-c", "-q"]
        os.lseek(self.fd, 0, os.SEEK_SET)
        try:
            proc = subprocess.Popen(cmd, stdin=self.fd, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE)
        except OSError as err:
            raise self.fail(f"cannot run {encoding} to decode it ({err.strerror})") from None
        read_all = False
        try:
            while chunk := proc.stdout.read(CHUNK):
                yield chunk
            read_all = True
        finally:
            proc.stdout.close()
            if not read_all:  # the reader stopped early: stop the decoder
                proc.kill()
            errors = proc.stderr.read().decode(errors="replace").strip()
            proc.stderr.close()
            status = proc.wait()
        if status != 0:
            raise self.fail(f"not a valid {SUFFIX_OF[encoding]} file: {errors}")

    def data_chunks(self):
        """The entry's data: the file's bytes, or decoded from them."""
        return self.decoded_chunks() if self.entry.encoded else self.chunks()

    def digest(self):
        """(sha256 hex, size) of the entry's data read now (and, for an
        encoded file, file_sha256 of the file itself)."""
        if self.entry.encoded:
            self.file_sha256 = sha256_of(self.chunks())[0]
        return sha256_of(self.data_chunks())

    def checked(self, chunks, sha256):
        """``chunks`` again, failing at the end if they no longer have ``sha256``."""
        sha = hashlib.sha256()
        for chunk in chunks:
            sha.update(chunk)
            yield chunk
        if sha.hexdigest() != sha256:
            raise self.fail("changed while it was read")

    def checked_chunks(self, sha256):
        """The entry's data again, failing at the end if it no longer has ``sha256``."""
        return self.checked(self.data_chunks(), sha256)

    def copy_to(self, dest, sha256):
        """Write the entry's data to ``dest``; it must have ``sha256``."""
        self.write(dest, self.checked_chunks(sha256))

    def copy_file_to(self, dest):
        """Write the file's own bytes (an encoded file as it is) to ``dest``."""
        self.write(dest, self.checked(self.chunks(), self.file_sha256))

    @staticmethod
    def write(dest, chunks):
        try:
            with open(dest, "wb") as out:
                for chunk in chunks:
                    out.write(chunk)
        except OSError as err:
            raise FwembedError(dest, f"cannot write: {err.strerror}") from None


def sha256_of(chunks):
    sha = hashlib.sha256()
    size = 0
    for chunk in chunks:
        sha.update(chunk)
        size += len(chunk)
    return sha.hexdigest(), size


def digest_entry(entry):
    """(sha256 hex, size) of an entry's source."""
    with Source(entry) as src:
        return src.digest()
