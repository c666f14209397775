"""Reading firmware files: digests, and copies whose digest is checked."""

import hashlib

from .errors import FwembedError

CHUNK = 1 << 20


def digest_file(entry):
    """Return (sha256 hex, size) of an entry's source file."""
    sha = hashlib.sha256()
    size = 0
    try:
        with open(entry.path, "rb") as src:
            while chunk := src.read(CHUNK):
                sha.update(chunk)
                size += len(chunk)
    except OSError as err:
        raise FwembedError(entry.where, f"source {entry.source!r}: {err.strerror}") from None
    return sha.hexdigest(), size


def copy_checked(entry, sha256, dest):
    """Copy an entry's source to ``dest``; fail if it no longer has ``sha256``.

    The copy is what the assembler includes, so the embedded bytes are the
    bytes that were hashed even if the source changes later.
    """
    sha = hashlib.sha256()
    try:
        with open(entry.path, "rb") as src, open(dest, "wb") as out:
            while chunk := src.read(CHUNK):
                sha.update(chunk)
                out.write(chunk)
    except OSError as err:
        raise FwembedError(entry.where, f"source {entry.source!r}: {err.strerror}") from None
    if sha.hexdigest() != sha256:
        raise FwembedError(entry.where, f"source {entry.source!r} changed while it was read")


def read_file(entry):
    """Return an entry's data, for the entries that are compressed."""
    try:
        with open(entry.path, "rb") as src:
            return src.read()
    except OSError as err:
        raise FwembedError(entry.where, f"source {entry.source!r}: {err.strerror}") from None


def read_checked(entry, sha256):
    """Return an entry's data; fail if it no longer has ``sha256``."""
    data = read_file(entry)
    if hashlib.sha256(data).hexdigest() != sha256:
        raise FwembedError(entry.where, f"source {entry.source!r} changed while it was read")
    return data
