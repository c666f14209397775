"""Writing the output directory: atomically, and only what changed.

Files are written to a temporary name and renamed into place, so a reader
never sees half a file. A file whose content is unchanged is not touched,
so make and Kbuild see nothing to rebuild.
"""

import os
import pathlib
import tempfile

from .errors import FwembedError


class OutDir:
    """The output directory of one generator run."""

    def __init__(self, path, report=None):
        self.path = pathlib.Path(path)
        self.report = report or (lambda _path, _tag="UPD": None)

    def check_usable(self):
        """Fail early, before anything is written, if the directory is unusable."""
        probe = self.path
        while not probe.exists():
            if probe.parent == probe:
                break
            probe = probe.parent
        if not probe.is_dir():
            raise FwembedError(self.path, f"output directory: {probe} is not a directory")
        if not os.access(probe, os.W_OK | os.X_OK):
            raise FwembedError(self.path, f"output directory: {probe} is not writable")

    def create(self):
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise FwembedError(self.path, f"output directory: {err.strerror}") from None

    def temp_path(self, name):
        """A fresh temporary file next to ``name``; the caller renames it."""
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=self.path)
        os.close(fd)
        return pathlib.Path(tmp)

    def write_text(self, name, text):
        """Write ``name`` unless it already holds ``text``. True if written."""
        return self.write_bytes(name, text.encode())

    def write_bytes(self, name, data):
        """Write ``name`` unless it already holds ``data``. True if written."""
        dest = self.path / name
        try:
            if dest.read_bytes() == data:
                return False
        except OSError:
            pass
        tmp = self.temp_path(name)
        try:
            tmp.write_bytes(data)
            os.chmod(tmp, 0o644)
            os.replace(tmp, dest)
        except OSError as err:
            tmp.unlink(missing_ok=True)
            raise FwembedError(dest, f"cannot write: {err.strerror}") from None
        self.report(dest)
        return True

    def write_with(self, name, fill):
        """Create ``name`` by calling fill(temp_path), then rename it in place."""
        dest = self.path / name
        tmp = self.temp_path(name)
        try:
            fill(tmp)
            os.chmod(tmp, 0o644)
            os.replace(tmp, dest)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        self.report(dest)

    def remove_stale(self, pattern, keep):
        """Delete files matching ``pattern`` whose names are not in ``keep``."""
        for stale in sorted(self.path.glob(pattern)):
            if stale.name not in keep:
                stale.unlink()
                self.report(stale, "RM")

    def touch(self, name):
        """Create ``name`` or update its timestamp (for make)."""
        (self.path / name).touch()
