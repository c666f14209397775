"""Writing one file of a command's output (report --json, import-config
--out, needs --write-list, extract --out): atomically, and only if it
changed.

The file is replaced all at once (atomic.py), so a reader never sees half
of it. A file whose content is unchanged is not touched, so make sees
nothing to rebuild. fwembed gen, which owns a whole directory, has
staging.py instead.
"""

import os
import pathlib

from . import atomic
from .errors import FwembedError

FILE_MODE = 0o644


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

    def write_text(self, name, text):
        """Write ``name`` unless it already holds ``text``. True if written."""
        return self.write_bytes(name, text.encode())

    def write_bytes(self, name, data):
        """Write ``name`` unless it already holds ``data``. True if written."""
        written = atomic.write_if_changed(self.path / name, data, FILE_MODE)
        if written:
            self.report(self.path / name)
        return written


def write_output_file(out, data, force=False):
    """Write ``data`` (bytes or text) to the file ``out`` that a command was
    asked to write. An existing file is replaced only with ``force``."""
    out = pathlib.Path(out)
    if os.path.lexists(out) and not force:
        raise FwembedError(out, "already exists; give --force to replace it")
    if out.is_dir():
        raise FwembedError(out, "is a directory")
    outdir = OutDir(out.parent)
    outdir.check_usable()
    outdir.create()
    outdir.write_bytes(out.name, data.encode() if isinstance(data, str) else data)
