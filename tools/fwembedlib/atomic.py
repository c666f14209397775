"""Replacing a file all at once: the one way fwembed writes a file.

The new content goes to a temporary file in the destination's own folder
(so that the rename stays within one filesystem), named by tempfile, never
by a fixed name that two runs could share. Only when it is complete is it
renamed over the destination, so a reader sees the old file or the new one,
never half of one. On any failure the temporary file is removed and the
destination is left as it was.
"""

import contextlib
import os
import pathlib
import tempfile

from .errors import FwembedError


def umask_mode():
    """The mode open() would give a new file: 0666 less the umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def temp_next_to(dest, mode=None):
    """Create an empty temporary file beside ``dest`` with ``mode`` (default:
    as the umask gives); return its path. Missing folders are created."""
    dest = pathlib.Path(dest)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
        os.close(fd)
        os.chmod(tmp, umask_mode() if mode is None else mode)
    except OSError as err:
        raise FwembedError(dest, f"cannot write: {err.strerror}") from None
    return pathlib.Path(tmp)


@contextlib.contextmanager
def replacing(dest, mode=None, failure="cannot write"):
    """Yield a temporary path to fill; rename it over ``dest`` if the block
    ends normally. An OSError in the block or the rename reads
    ``dest: error: <failure>: <reason>``."""
    tmp = temp_next_to(dest, mode)
    try:
        yield tmp
        os.replace(tmp, dest)
    except OSError as err:
        raise FwembedError(dest, f"{failure}: {err.strerror}") from None
    finally:
        tmp.unlink(missing_ok=True)


def write_file(dest, data, mode=None):
    """Replace ``dest`` with ``data`` (bytes or text)."""
    if isinstance(data, str):
        data = data.encode()
    with replacing(dest, mode) as tmp:
        tmp.write_bytes(data)


def write_if_changed(dest, data, mode=None):
    """Replace ``dest`` unless it already holds ``data``; True if written."""
    if isinstance(data, str):
        data = data.encode()
    try:
        if pathlib.Path(dest).read_bytes() == data:
            return False
    except OSError:
        pass
    write_file(dest, data, mode)
    return True
