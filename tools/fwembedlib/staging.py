"""The output directory of fwembed gen: owned, and replaced all at once.

Ownership. Each run leaves a record of its own in the output directory,
``.fwembed-outputs``: every file the run wrote, with its inode, size and
modification time and what it was made from (the SHA-256 of its content;
for a compressed copy, the content's SHA-256 and the encoder's version and
settings). gen removes or replaces only files named in that record. It
refuses to write into a directory that holds anything else, or that holds
files but no record (a directory it did not write, or one written by a
fwembed older than the record).

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

import ctypes
import errno
import os
import pathlib
import shutil
import signal
import tempfile

from .errors import FwembedError, warn

RECORD = ".fwembed-outputs"
RECORD_HEADER = "# fwembed gen: the files it wrote here. name, inode:size:mtime, made from\n"
FILE_MODE = 0o644
HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
AT_FDCWD = -100
RENAME_EXCHANGE = 2


def within(path, folder):
    """True if ``path`` is ``folder`` or lies below it (both absolute, resolved)."""
    return path == folder or folder in path.parents


def umask_mode(mode):
    umask = os.umask(0)
    os.umask(umask)
    return mode & ~umask


def exchange(one, other):
    """Swap two paths with renameat2(RENAME_EXCHANGE); False if not supported here."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    if renameat2(AT_FDCWD, os.fsencode(one), AT_FDCWD, os.fsencode(other),
                 RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(other))


def read_record(folder):
    """{name: (signature, made from)} of a record, or None if there is none."""
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
        if len(fields) != 3 or "/" in fields[0] or fields[0] in ("", ".", ".."):
            raise FwembedError(f"{folder / RECORD}:{lineno}", "malformed record line")
        record[fields[0]] = (fields[1], fields[2])
    return record


def signature(path):
    info = os.lstat(path)
    return f"{info.st_ino}:{info.st_size}:{info.st_mtime_ns}"


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
        names = sorted(p.name for p in self.path.iterdir())
        self.old = read_record(self.path)
        if self.old is None:
            if names:
                raise self.fail(f"holds {names[0]!r} but no record of fwembed's ({RECORD}); "
                                "fwembed writes only into an empty or new directory, or "
                                "one it wrote itself")
            self.old = {}
            return
        for name in names:
            if name != RECORD and name not in self.old:
                raise self.fail(f"holds {name!r}, which fwembed did not write; "
                                "move it away or choose another --out")

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
        recorded_signature, recorded_from = self.old[name]
        try:
            if recorded_from != made_from or signature(self.path / name) != recorded_signature:
                return False
            os.link(self.path / name, self.dir / name)
        except FileNotFoundError:
            return False
        except OSError as err:
            if err.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
                raise self.fail(f"cannot link {name}: {err.strerror}") from None
            shutil.copy2(self.path / name, self.dir / name)
        self.new[name] = made_from
        return True

    def file(self, name):
        """The path to write output ``name`` to; call added() when it is written."""
        return self.dir / name

    def added(self, name, made_from):
        """Output ``name`` has been written to file(name)."""
        os.chmod(self.dir / name, FILE_MODE)
        self.new[name] = made_from
        self.updated.append(name)

    def write_bytes(self, name, data, made_from):
        """Output ``name`` holds ``data``: linked from the old directory if it
        held the same bytes, else written."""
        old = self.path / name
        if self.old and name in self.old and self.old[name][1] == made_from:
            try:
                if old.read_bytes() == data and self.reuse(name, made_from):
                    return
            except OSError:
                pass
        try:
            with open(self.dir / name, "xb") as out:
                out.write(data)
        except OSError as err:
            raise self.fail(f"cannot write {name}: {err.strerror}") from None
        self.added(name, made_from)

    def stamp(self, name):
        """Output ``name`` is an empty file, new on every run (a target for make)."""
        (self.dir / name).touch(mode=FILE_MODE)
        self.new[name] = "stamp"
        self.unsigned.add(name)

    def old_decision(self, key):
        return (self.old or {}).get(f"auto:{key}", (None, None))[1]

    def decide(self, key, choice):
        self.decisions[f"auto:{key}"] = choice

    # --- putting it in place

    def record_text(self):
        lines = [RECORD_HEADER]
        for name in sorted(self.new):
            sig = "-" if name in self.unsigned else signature(self.dir / name)
            lines.append(f"{name}\t{sig}\t{self.new[name]}\n")
        for key in sorted(self.decisions):
            lines.append(f"{key}\t-\t{self.decisions[key]}\n")
        return "".join(lines)

    def commit(self):
        """Exchange the new directory with the old one, then remove the old outputs."""
        text = self.record_text()
        try:
            if self.old and (self.path / RECORD).read_text() == text:
                os.link(self.path / RECORD, self.dir / RECORD)
            else:
                raise FileNotFoundError
        except OSError:
            (self.dir / RECORD).write_text(text)
            os.chmod(self.dir / RECORD, FILE_MODE)
        held = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS)
        try:
            replaced = self.put_in_place()
            aside, self.dir = self.dir, None
            if replaced:
                self.remove_old(aside)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        for name in sorted(self.updated):
            self.report(self.path / name)
        for name in sorted(set(self.old or ()) - set(self.new)):
            if not name.startswith("auto:") and not name.startswith("."):
                self.report(self.path / name, "RM")

    def put_in_place(self):
        """Move the new directory to the output path; True if the old one is
        now at the staging path, to be removed."""
        try:
            if not self.path.exists():
                os.rename(self.dir, self.path)
                return False
            if exchange(self.dir, self.path):
                return True
            aside = self.dir.with_name(self.dir.name + ".old")
            os.rename(self.path, aside)
            try:
                os.rename(self.dir, self.path)
            except OSError:
                os.rename(aside, self.path)
                raise
            os.rename(aside, self.dir)
            return True
        except OSError as err:
            raise self.fail(f"cannot put the new outputs in place: {err.strerror}") from None

    def remove_old(self, folder):
        """Remove the old outputs, now in ``folder``: only the files the old record names."""
        for name in [*(self.old or {}), RECORD]:
            if not name.startswith("auto:"):
                try:
                    (folder / name).unlink()
                except FileNotFoundError:
                    pass
        try:
            folder.rmdir()
        except OSError as err:
            warn(folder, f"left in place: {err.strerror}")
