"""The output directory of fwembed gen: owned, and replaced all at once.

Ownership. Each run leaves a record of its own in the output directory,
``.fwembed-outputs``: every file the run wrote, with its inode, size,
modification time and SHA-256, and what it was made from (the content's
SHA-256; for a compressed copy, also the encoder's version and settings).
gen removes or replaces only files named in that record and still holding
what it wrote (same inode, size and mtime, or else the same SHA-256). It
refuses to write into a directory that holds anything else, or a recorded
file changed since, or files but no record (a directory it did not write,
or one written by a fwembed older than the record).

Transactions. A run builds the complete new set of outputs in a staging
directory beside the output directory (``.OUT.fwembed-XXXXXXXX``). A file
that is unchanged is hard-linked there from the old output directory, so
it keeps its timestamp and make rebuilds nothing. A copy of firmware data
is reused only if the record says what it was made from and the file's
inode, size and modification time are still those recorded, i.e. nobody
has written to it since. When every output is in place, the two
directories are exchanged with one renameat2(RENAME_EXCHANGE), and the old
outputs are removed. On any failure before that, Ctrl-C included, the
staging directory is removed and the old outputs are left byte-identical.
Ctrl-C, SIGTERM and SIGHUP are held off during the exchange. Where the
filesystem cannot exchange, the old directory is renamed aside first, and
put back if the second rename fails.
"""

import collections
import ctypes
import errno
import hashlib
import os
import pathlib
import shutil
import signal
import stat
import tempfile

from .errors import FwembedError, warn

RECORD = ".fwembed-outputs"
RECORD_HEADER = ("# fwembed gen record 2: the files it wrote here. "
                 "name, inode:size:mtime, sha256 of the file, made from\n")
FILE_MODE = 0o644
HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
AT_FDCWD = -100
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2


def within(path, folder):
    """True if ``path`` is ``folder`` or lies below it (both absolute, resolved)."""
    return path == folder or folder in path.parents


def umask_mode(mode):
    umask = os.umask(0)
    os.umask(umask)
    return mode & ~umask


def renameat2(one, other, flags):
    """renameat2(2) with ``flags``; False if the C library or filesystem lacks it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        call = libc.renameat2
    except (OSError, AttributeError):
        return False
    if call(AT_FDCWD, os.fsencode(one), AT_FDCWD, os.fsencode(other), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(other))


class Recorded(collections.namedtuple("Recorded", "signature file_sha256 made_from")):
    """One line of the record: a file fwembed wrote (signature "-" for the
    stamp, file_sha256 "-" for a decision of auto's, whose made_from is
    the choice)."""


def read_record(folder):
    """{name: Recorded} of a record, or None if there is none."""
    try:
        text = (folder / RECORD).read_text()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as err:
        raise FwembedError(folder / RECORD, f"cannot read fwembed's record: {err}") from None
    record = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if lineno == 1 and line + "\n" != RECORD_HEADER:
            raise FwembedError(folder / RECORD, "not a record this fwembed knows")
        if lineno == 1 or not line:
            continue
        fields = line.split("\t")
        if len(fields) != 4 or "/" in fields[0] or fields[0] in ("", ".", ".."):
            raise FwembedError(f"{folder / RECORD}:{lineno}", "malformed record line")
        record[fields[0]] = Recorded(*fields[1:])
    return record


def file_sha256(path, dir_fd=None):
    sha = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    try:
        while chunk := os.read(fd, 1 << 20):
            sha.update(chunk)
    finally:
        os.close(fd)
    return sha.hexdigest()


def signature(path, dir_fd=None):
    info = os.lstat(path, dir_fd=dir_fd)
    return f"{info.st_ino}:{info.st_size}:{info.st_mtime_ns}"


def unchanged(name, recorded, dir_fd=None):
    """True if ``name`` is still a regular file holding what fwembed wrote: the
    same inode, size and mtime as recorded, or else (a tree copied with
    cp -a, say) the same SHA-256. The stamp only needs to be a file."""
    try:
        info = os.lstat(name, dir_fd=dir_fd)
        if not stat.S_ISREG(info.st_mode):
            return False
        if recorded.signature in ("-", f"{info.st_ino}:{info.st_size}:{info.st_mtime_ns}"):
            return True
        return recorded.file_sha256 == file_sha256(name, dir_fd)
    except OSError:
        return False


class Staging:
    """One run's new output directory, built beside the old one.

    Use as a context manager: leaving it by an exception removes the
    staging directory; commit() puts the new outputs in place.
    """

    def __init__(self, out, report=None):
        if str(out) == "":
            raise FwembedError("--out", "empty output directory name")
        self.given = pathlib.Path(out)
        self.path = pathlib.Path(os.path.realpath(out))
        self.report = report or (lambda _path, _tag="UPD": None)
        self.old = None          # the old record, or None if there is no old directory
        self.new = {}            # name: made from
        self.updated = []        # names written, not linked from the old directory
        self.decisions = {}      # choices made for auto, kept in the record
        self.dir = None
        self.created = []        # parent folders this run made
        self.unsigned = set()    # outputs new on every run (the stamp)
        self.identity = None     # (st_dev, st_ino) of the old directory

    # --- before anything is written

    def check(self, input_dirs=(), input_files=()):
        """Refuse an output directory that overlaps the inputs or holds
        files that fwembed did not write."""
        for folder in input_dirs:
            real = pathlib.Path(os.path.realpath(folder))
            if self.path == real:
                raise self.fail(f"is the input directory {folder}")
            if within(self.path, real):
                raise self.fail(f"lies inside the input directory {folder}")
            if within(real, self.path):
                raise self.fail(f"contains the input directory {folder}")
        for path in input_files:
            for spelled in {pathlib.Path(os.path.abspath(path)),
                            pathlib.Path(os.path.realpath(path))}:
                if within(spelled, self.path):
                    raise self.fail(f"holds the input file {path}")
        probe = self.path
        while not probe.exists() and probe.parent != probe:
            probe = probe.parent
        if not probe.is_dir():
            raise self.fail(f"{probe} is not a directory")
        if probe == self.path:
            self.check_owned()

    def fail(self, message):
        return FwembedError(self.given, f"output directory: {message}")

    def check_owned(self):
        try:
            info = os.lstat(self.path)
            names = sorted(os.listdir(self.path))
        except OSError as err:
            raise self.fail(f"cannot read it: {err.strerror}") from None
        self.identity = (info.st_dev, info.st_ino)
        self.old = read_record(self.path)
        if self.old is None:
            if names:
                raise self.fail(f"holds {names[0]!r} but no record of fwembed's ({RECORD}); "
                                "fwembed writes only into an empty or new directory, or "
                                "one it wrote itself")
            self.old = {}
            return
        self.check_contents(names, self.path)

    def check_contents(self, names, folder, dir_fd=None):
        """Refuse a name the record lacks, or a recorded file changed since it was written."""
        for name in names:
            if name != RECORD and name not in self.old:
                raise self.fail(f"holds {name!r}, which fwembed did not write; "
                                "move it away or choose another --out")
            if name != RECORD and not name.startswith("auto:") and \
                    not unchanged(name if dir_fd is not None else folder / name,
                                  self.old[name], dir_fd):
                raise self.fail(f"{name!r} was changed after fwembed wrote it, so it is no "
                                "longer fwembed's to replace; move it away or restore it")

    # --- building the new directory

    def __enter__(self):
        missing = []
        probe = self.path.parent
        while not probe.exists():
            missing.append(probe)
            probe = probe.parent
        try:
            for folder in reversed(missing):
                folder.mkdir()
                self.created.append(folder)
            self.dir = pathlib.Path(tempfile.mkdtemp(prefix=f".{self.path.name}.fwembed-",
                                                     dir=self.path.parent))
            mode = self.path.stat().st_mode & 0o7777 if self.old is not None and \
                self.path.exists() else umask_mode(0o777)
            os.chmod(self.dir, mode)
        except OSError as err:
            self.abort()
            raise self.fail(f"cannot create a staging folder in {self.path.parent}: "
                            f"{err.strerror}") from None
        return self

    def __exit__(self, exc_type, *_):
        if exc_type is not None:
            self.abort()

    def abort(self):
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        for folder in reversed(self.created):
            try:
                folder.rmdir()
            except OSError:
                pass
        self.created = []

    def has(self, name):
        return name in self.new

    def reuse(self, name, made_from):
        """Link the old output ``name`` into the new directory if it is known to
        hold what ``made_from`` says; True if it was."""
        if not self.old or name not in self.old:
            return False
        recorded = self.old[name]
        try:
            if recorded.made_from != made_from or not unchanged(self.path / name, recorded):
                return False
            os.link(self.path / name, self.dir / name)
        except FileNotFoundError:
            return False
        except OSError as err:
            if err.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
                raise self.fail(f"cannot link {name}: {err.strerror}") from None
            try:
                shutil.copy2(self.path / name, self.dir / name)
            except OSError as copy_err:
                raise self.fail(f"cannot copy {name}: {copy_err.strerror}") from None
        self.new[name] = (made_from, recorded.file_sha256)
        return True

    def file(self, name):
        """The path to write output ``name`` to; call added() when it is written."""
        return self.dir / name

    def added(self, name, made_from, sha256=None):
        """Output ``name``, whose bytes have ``sha256`` (None: hash them now),
        has been written to file(name)."""
        try:
            os.chmod(self.dir / name, FILE_MODE)
            sha256 = sha256 or file_sha256(self.dir / name)
        except OSError as err:
            raise self.fail(f"cannot write {name}: {err.strerror}") from None
        self.new[name] = (made_from, sha256)
        self.updated.append(name)

    def write_bytes(self, name, data, made_from):
        """Output ``name`` holds ``data``: linked from the old directory if it
        held the same bytes, else written."""
        if self.reuse(name, made_from):
            return
        try:
            with open(self.dir / name, "xb") as out:
                out.write(data)
        except OSError as err:
            raise self.fail(f"cannot write {name}: {err.strerror}") from None
        self.added(name, made_from, hashlib.sha256(data).hexdigest())

    def stamp(self, name):
        """Output ``name`` is an empty file, new on every run (a target for make)."""
        try:
            (self.dir / name).touch(mode=FILE_MODE)
        except OSError as err:
            raise self.fail(f"cannot write {name}: {err.strerror}") from None
        self.new[name] = ("stamp", "-")
        self.unsigned.add(name)

    def old_decision(self, key):
        recorded = (self.old or {}).get(f"auto:{key}")
        return recorded.made_from if recorded else None

    def decide(self, key, choice):
        self.decisions[f"auto:{key}"] = choice

    # --- putting it in place

    def record_text(self):
        lines = [RECORD_HEADER]
        for name in sorted(self.new):
            made_from, sha256 = self.new[name]
            sig = "-" if name in self.unsigned else signature(self.dir / name)
            lines.append(f"{name}\t{sig}\t{sha256}\t{made_from}\n")
        for key in sorted(self.decisions):
            lines.append(f"{key}\t-\t-\t{self.decisions[key]}\n")
        return "".join(lines)

    def commit(self):
        """Exchange the new directory with the old one, then remove the old outputs.

        Signals are held meanwhile. If the old directory is not the one
        checked at the start (a symlink swapped in), or holds anything the
        record does not vouch for (a file added or changed during the run),
        the exchange is undone and the run fails: nothing of the user's is
        moved or removed.
        """
        text = self.record_text()
        try:
            if self.old and (self.path / RECORD).read_text() == text:
                os.link(self.path / RECORD, self.dir / RECORD)
            else:
                raise FileNotFoundError
        except OSError:
            try:
                (self.dir / RECORD).write_text(text)
                os.chmod(self.dir / RECORD, FILE_MODE)
            except OSError as err:
                raise self.fail(f"cannot write {RECORD}: {err.strerror}") from None
        held = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS)
        try:
            if self.identity is None:
                self.put_new_in_place()
                self.dir = None
            else:
                self.exchange_with_old()
                aside, self.dir = self.dir, None
                self.remove_old(aside)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        for name in sorted(self.updated):
            self.report(self.path / name)
        for name in sorted(set(self.old or ()) - set(self.new)):
            if not name.startswith("auto:") and not name.startswith("."):
                self.report(self.path / name, "RM")

    def put_new_in_place(self):
        """There was no output directory: rename the new one there, unless
        something appeared there meanwhile."""
        try:
            if renameat2(self.dir, self.path, RENAME_NOREPLACE):
                return
            if os.path.lexists(self.path):
                raise FileExistsError(errno.EEXIST, "File exists")
            os.rename(self.dir, self.path)
        except OSError as err:
            if err.errno in (errno.EEXIST, errno.ENOTEMPTY):
                raise self.fail("appeared while fwembed was running; nothing was "
                                "written to it") from None
            raise self.fail(f"cannot put the new outputs in place: {err.strerror}") from None

    def exchange_with_old(self):
        """Swap the new directory and the old one; the old one is then at self.dir."""
        def same_directory(path):
            try:
                info = os.lstat(path)
            except OSError:
                return False
            return stat.S_ISDIR(info.st_mode) and (info.st_dev, info.st_ino) == self.identity

        if not same_directory(self.path):
            raise self.fail("was replaced while fwembed was running; nothing was written")
        try:
            if not renameat2(self.dir, self.path, RENAME_EXCHANGE):
                aside = self.dir.with_name(self.dir.name + ".old")
                os.rename(self.path, aside)
                try:
                    os.rename(self.dir, self.path)
                except OSError:
                    os.rename(aside, self.path)
                    raise
                os.rename(aside, self.dir)
        except OSError as err:
            raise self.fail(f"cannot put the new outputs in place: {err.strerror}") from None
        problem = None
        if not same_directory(self.dir):
            problem = self.fail("was replaced while fwembed was running")
        else:
            try:
                self.check_contents(sorted(os.listdir(self.dir)), self.dir)
            except FwembedError as err:
                problem = err
            except OSError as err:
                problem = self.fail(f"cannot read it: {err.strerror}")
        if problem is not None:
            # Put the old directory back as it was; the new one is removed by abort().
            if not renameat2(self.dir, self.path, RENAME_EXCHANGE):
                warn(self.dir, "the old outputs are here; the new ones are at "
                               f"{self.path}")
            raise problem

    def remove_old(self, folder):
        """Remove the old outputs, now in ``folder``: the files the old record
        names, each only if it is still the file recorded."""
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError as err:
            warn(folder, f"old outputs left in place: {err.strerror}")
            return
        try:
            for name, recorded in [*(self.old or {}).items(),
                                   (RECORD, Recorded("-", "-", "record"))]:
                if not name.startswith("auto:") and unchanged(name, recorded, fd):
                    try:
                        os.unlink(name, dir_fd=fd)
                    except FileNotFoundError:
                        pass
        finally:
            os.close(fd)
        try:
            folder.rmdir()
        except OSError as err:
            warn(folder, f"left in place: {err.strerror}")
