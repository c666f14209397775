"""fwembed gen: firmware list or directory in, assembly and manifest out.

The run has two phases. The first reads and checks every input and hashes
every file, and writes nothing; any error ends the run there. The second
writes the outputs, each only if its content changed, and then removes data
objects that are no longer used. An error therefore never leaves a half-
written output directory, and the outputs of an earlier good run survive.
"""

import dataclasses
import hashlib
import os
import pathlib

from . import emit
from .compress import encode
from .content import copy_checked, digest_file, read_checked, read_file
from .errors import FwembedError, warn
from .fwlist import read_list
from .scan import scan_dir

# Touched by every successful run; the target of the make dependency file,
# since the outputs themselves keep their timestamps when unchanged.
STAMP = ".fwembed-stamp"


@dataclasses.dataclass
class Blob:
    """One distinct content in one encoding: stored once, whatever the number of names."""

    sha256: str
    size: int
    entry: object
    sources: list
    compression: str = "none"
    stored: bytes = None  # the compressed bytes; None when stored raw

    @property
    def stored_size(self):
        return self.size if self.stored is None else len(self.stored)

    @property
    def stem(self):
        suffix = "" if self.compression == "none" else f"-{self.compression}"
        return f"blob-{self.sha256[:16]}{suffix}"


def collect(entries, compress="none"):
    """Hash and encode every entry; return (rows sorted by name, blobs sorted by stem).

    ``compress`` is the method for entries whose list set none.
    """
    blobs = {}
    rows = []
    by_source = {}
    encoded = {}
    for entry in entries:
        method = entry.compress or compress
        data = None
        if entry.source not in by_source:
            if method == "none":
                by_source[entry.source] = digest_file(entry)
            else:
                # Read once: the bytes hashed are the bytes compressed.
                data = read_file(entry)
                by_source[entry.source] = hashlib.sha256(data).hexdigest(), len(data)
        sha256, size = by_source[entry.source]
        if (sha256, method) not in encoded:
            if method != "none" and data is None:
                data = read_checked(entry, sha256)
            encoded[sha256, method] = encode(data, method, entry.where)
        encoding, stored = encoded[sha256, method]
        blob = blobs.get((sha256, encoding))
        if blob is None:
            blob = blobs[sha256, encoding] = Blob(sha256=sha256, size=size, entry=entry,
                                                  sources=[], compression=encoding,
                                                  stored=stored)
        if entry.source not in blob.sources:
            blob.sources.append(entry.source)
        rows.append((entry, blob))
    check_unique(blobs.values(), lambda b: b.stem, "content digests")
    check_unique([e for e, _ in rows], lambda e: emit.key_hash(e.source), "source paths",
                 same=lambda a, b: a.source == b.source)
    for blob in blobs.values():
        blob.sources.sort()
    rows.sort(key=lambda row: row[0].name.encode())
    return rows, sorted(blobs.values(), key=lambda b: b.stem)


def check_unique(items, key, what, same=lambda a, b: a is b):
    """Refuse the (astronomically unlikely) collision of two short hashes."""
    seen = {}
    for item in items:
        other = seen.setdefault(key(item), item)
        if not same(other, item):
            where = getattr(item, "where", None) or item.entry.where
            raise FwembedError(where, f"two {what} share the prefix {key(item)}")


def read_inputs(list_path=None, directory=None):
    """Return the entries and the paths that make should watch."""
    if list_path is not None:
        entries = read_list(list_path)
        watched = [pathlib.Path(list_path)]
    else:
        watched = []
        entries = scan_dir(directory, walked=watched)
    watched += sorted({e.path for e in entries})
    return entries, watched


def generate(out, list_path=None, directory=None, compress="none", corrupt_digest=None):
    """Run both phases; return the rows (entry, blob) written to the table.

    ``corrupt_digest`` names an entry whose table digest is made wrong on
    purpose, for the test of the kernel's digest check; manifest.json keeps
    the true digest.
    """
    entries, watched = read_inputs(list_path, directory)
    builtin = [e for e in entries if not e.install]
    if compress != "none" and builtin and all(e.compress for e in builtin):
        warn(list_path, f"--compress {compress} (make's COMPRESS={compress}) changes no entry: "
                        "every entry sets compress= itself or through %default")
    rows, blobs = collect(builtin, compress)
    # Install-only entries are not built in, but the manifest describes them.
    installed = [(e, *digest_file(e)) for e in entries if e.install]
    if corrupt_digest is not None and corrupt_digest not in {e.name for e, _ in rows}:
        raise FwembedError(list_path or directory,
                           f"--test-corrupt-digest: no entry named {corrupt_digest!r}")
    out.check_usable()

    out.create()
    for blob in blobs:
        if blob.stored is not None:
            out.write_bytes(f"{blob.stem}.bin", blob.stored)
        elif not (out.path / f"{blob.stem}.bin").is_file() or \
                os.path.getsize(out.path / f"{blob.stem}.bin") != blob.stored_size:
            out.write_with(f"{blob.stem}.bin",
                           lambda tmp, b=blob: copy_checked(b.entry, b.sha256, tmp))
        out.write_text(f"{blob.stem}.S", emit.blob_source(blob))
    out.write_text("table.S", emit.table_source(rows, corrupt_digest))
    out.write_text("objects.mk", emit.objects_mk(blobs))
    out.write_text("names.txt", emit.names(rows))
    out.write_text("manifest.json", emit.manifest(rows, installed))
    out.write_text("fwembed.d", emit.depfile(out.path / STAMP,
                                             [p.resolve() for p in watched]))
    keep = {f"{b.stem}{ext}" for b in blobs for ext in (".S", ".bin")}
    out.remove_stale("blob-*", keep)
    out.touch(STAMP)
    return rows
