"""fwembed gen: firmware list or directory in, assembly and manifest out.

The run reads and checks every input, and builds the complete new set of
outputs in a staging directory beside the output directory; only when all
of it is there does it replace the old outputs, all at once (staging.py).
An error, or Ctrl-C, therefore never leaves a half-written output
directory, and the outputs of an earlier good run survive byte-identical.

Each source file is opened once and read through that one descriptor
(source.py): its digest, its copy and its compressed form are all made of
the bytes read there, and a second name for the same file (device and
inode) reads nothing more. A data copy or compressed form that the last
run made from the same content with the same encoder is reused, not made
again.
"""

import collections
import concurrent.futures
import dataclasses
import hashlib
import os
import pathlib
import signal
import threading

from . import emit
from . import __version__
from .compress import auto_keeps, compress_to, encoder_id, encoder_version, kernel_rejects
from .errors import FwembedError, warn
from .fwlist import read_list
from .scan import scan_dir
from .source import SUFFIX_OF, Source, digest_entry
from .staging import HELD_SIGNALS, Staging

# Written by every successful run; the target of the make dependency file,
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
    stored_size: int = None
    # "init" when every name it is stored for is lifetime=init: then its
    # data may go with the kernel's init memory
    lifetime: str = "kernel"

    @property
    def stem(self):
        return stem(self.sha256, self.compression)


def stem(sha256, compression):
    suffix = "" if compression == "none" else f"-{compression}"
    return f"blob-{sha256[:16]}{suffix}"


def made_from(sha256, encoding, where):
    """What a data file is made of, for the record: content, encoding, encoder."""
    if encoding == "none":
        return f"sha256:{sha256}"
    return f"sha256:{sha256} {encoding}: {encoder_id(encoding, where)}"


class Work:
    """What the tasks of one run share: the staging directory, the last task
    submitted for each content (a task waits for the one before it, so the
    tasks of one content run one at a time and in list order, and the
    stored bytes never depend on thread scheduling), and the event that
    stops them all when the run is interrupted."""

    def __init__(self, staging):
        self.staging = staging
        self.last = {}
        self.cancel = threading.Event()
        self.auto = {}  # sha256: how auto chose, for --dry-run
        self.given = {}  # (sha256, encoding): how a .xz/.zst file was stored, for --dry-run



def store(work, src, sha256, size, encoding, where):
    """Put the data file of one content in one encoding in the staging
    directory, reusing the last run's if it is known to match; return its size."""
    staging = work.staging
    name = f"{stem(sha256, encoding)}.bin"
    if src.entry.encoded == encoding and not staging.has(name):
        rejected = kernel_rejects(encoding, src.fd, where)
        work.given[sha256, encoding] = f"re-encoded: {rejected}" if rejected else \
            "stored as given: the kernel's decoder takes the file"
        if not rejected:
            origin = f"sha256:{sha256} {encoding}: as given, file sha256:{src.file_sha256}"
            if not staging.reuse(name, origin):
                src.copy_file_to(staging.file(name))
                staging.added(name, origin, src.file_sha256)
            return os.path.getsize(staging.file(name))
    origin = made_from(sha256, encoding, where)
    if not staging.has(name) and not staging.reuse(name, origin):
        if encoding == "none":
            src.copy_to(staging.file(name), sha256)
        else:
            compress_to(encoding, src.checked_chunks(sha256), size, staging.file(name), where,
                        work.cancel)
        staging.added(name, origin, sha256 if encoding == "none" else None)
    return os.path.getsize(staging.file(name))


def store_auto(work, src, sha256, size, where):
    """compress=auto: the smaller of xz and zstd, or raw if that saves too little.
    The choice is recorded, so that an unchanged content is not compressed again."""
    staging = work.staging
    key = f"{sha256} {encoder_id('xz', where)} | {encoder_id('zstd', where)}"
    choice = staging.old_decision(key)
    if choice is not None and choice != "none" and \
            not staging.has(f"{stem(sha256, choice)}.bin") and \
            not staging.reuse(f"{stem(sha256, choice)}.bin", made_from(sha256, choice, where)):
        choice = None
    if choice is not None:
        work.auto[sha256] = "as the last run chose for this content and encoders"
    else:
        trials = {e: staging.file(f".auto-{sha256[:16]}-{e}.tmp") for e in ("xz", "zstd")}
        sizes = {e: compress_to(e, src.checked_chunks(sha256), size, trials[e], where,
                                work.cancel) for e in trials}
        best = min(sizes, key=lambda e: (sizes[e], e))
        choice = best if auto_keeps(size, sizes[best]) else "none"
        work.auto[sha256] = f"xz {sizes['xz']} B, zstd {sizes['zstd']} B: " + \
            ("the smaller" if choice != "none" else "neither saves 1/8")
        for encoding, trial in trials.items():
            name = f"{stem(sha256, encoding)}.bin"
            try:
                if encoding == choice and not staging.has(name):
                    os.rename(trial, staging.file(name))
                    staging.added(name, made_from(sha256, encoding, where))
                else:
                    trial.unlink()
            except OSError as err:
                raise staging.fail(f"cannot write {name}: {err.strerror}") from None
    staging.decide(key, choice)
    return choice, store(work, src, sha256, size, choice, where)


def encode_task(work, src, sha256, size, method, where, after):
    """One content in one method, in a worker thread, once the task ``after``
    (the content's previous one, or None) has ended; closes ``src``."""
    with src:
        if after is not None:
            concurrent.futures.wait([after])
        if work.cancel.is_set():
            raise FwembedError(where, "cancelled")
        src.cancel = work.cancel
        if method == "auto":
            return store_auto(work, src, sha256, size, where)
        return method, store(work, src, sha256, size, method, where)


def collect(entries, compress, staging, jobs=None, progress=None):
    """Hash and store every entry; return (rows sorted by name, blobs sorted by stem).

    ``compress`` is the method for entries whose list set none. Sources are
    opened and hashed in list order; copying and compressing run on
    ``jobs`` threads (default: one per CPU), each driving its own encoder
    process, with at most 2 * jobs sources open and waiting. Errors are
    raised in list order, so a run reports the same error every time.
    ``progress(hashed, total, storing)`` is called after each entry is
    hashed, and while the last copies and encoders run.
    """
    jobs = jobs or os.cpu_count() or 1
    work = Work(staging)
    by_file = {}
    encoded = {}
    pending = collections.deque()
    wanted = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        try:
            for entry in entries:
                # A .xz or .zst file stays in its encoding unless its line says otherwise.
                method = entry.compress or entry.encoded or compress
                src = Source(entry).__enter__()
                try:
                    # One file read as itself and decoded gives two contents.
                    known = (src.identity, entry.encoded)
                    if known not in by_file:
                        by_file[known] = (*src.digest(), src.file_sha256)
                    sha256, size, src.file_sha256 = by_file[known]
                    if (sha256, method) not in encoded:
                        task = pool.submit(encode_task, work, src, sha256, size, method,
                                           entry.where, work.last.get(sha256))
                        encoded[sha256, method] = work.last[sha256] = task
                        pending.append(task)
                        src = None  # the task closes it
                finally:
                    if src is not None:
                        src.__exit__(None, None, None)
                wanted.append((entry, sha256, size, method))
                if progress is not None:
                    progress(len(wanted), len(entries), len(pending))
                while len(pending) >= 2 * jobs:
                    pending.popleft().result()
            results = {}
            for key, future in encoded.items():
                while key not in results:
                    try:
                        results[key] = future.result(timeout=0.25)
                    except concurrent.futures.TimeoutError:
                        if progress is not None:
                            progress(len(wanted), len(entries),
                                     sum(not f.done() for f in encoded.values()))
        except BaseException:
            # Stop the encoders, drop the tasks not started (closing their
            # sources) and wait for the rest, with signals held so that a
            # second Ctrl-C cannot leave a worker writing into a staging
            # folder that is being removed.
            work.cancel.set()
            held = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS)
            try:
                pool.shutdown(wait=True, cancel_futures=True)
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
            raise
    blobs = {}
    rows = []
    spelled = set()
    for entry, sha256, size, method in wanted:
        encoding, stored_size = results[sha256, method]
        blob = blobs.get((sha256, encoding))
        if blob is None:
            blob = blobs[sha256, encoding] = Blob(sha256=sha256, size=size, entry=entry,
                                                  sources=[], compression=encoding,
                                                  stored_size=stored_size)
        if (entry.key, encoding) not in spelled:  # a set: no quadratic list search
            spelled.add((entry.key, encoding))
            blob.sources.append(entry.key)
        rows.append((entry, blob))
    check_unique(blobs.values(), lambda b: b.stem, "content digests")
    check_unique([e for e, _ in rows], lambda e: emit.key_hash(e.key), "source paths",
                 same=lambda a, b: a.key == b.key)
    resident = {id(blob) for entry, blob in rows if entry.lifetime != "init"}
    for blob in blobs.values():
        blob.sources.sort()
        blob.lifetime = "kernel" if id(blob) in resident else "init"
    rows.sort(key=lambda row: row[0].name.encode())
    return rows, sorted(blobs.values(), key=lambda b: b.stem), work


def why(entry, blob, compress, work):
    """Why an entry is stored as it is, in words, for --dry-run."""
    method = entry.compress or entry.encoded or compress
    auto = work.auto.get(blob.sha256) if method == "auto" else \
        work.given.get((blob.sha256, blob.compression))
    asked = f"compress={method} ({entry.compress_from})" if entry.compress else \
        f"a {SUFFIX_OF[entry.encoded]} file" if entry.encoded else \
        f"--compress {method}" if compress != "none" else "no compress= and no --compress"
    if method == "auto" or (entry.encoded == method and auto):
        return f"{asked}: {auto}"
    return asked


def dry_run_lines(rows, compress, work):
    """The table --dry-run prints: one line per built-in name."""
    table = [("NAME", "SIZE", "STORED", "ENCODING", "WHY")]
    table += [(entry.name, str(blob.size), str(blob.stored_size), blob.compression,
               why(entry, blob, compress, work))
              for entry, blob in rows]
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    return [f"{r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]:>{widths[2]}}  "
            f"{r[3]:<{widths[3]}}  {r[4]}".rstrip() for r in table]


def check_unique(items, key, what, same=lambda a, b: a is b):
    """Refuse the (astronomically unlikely) collision of two short hashes."""
    seen = {}
    for item in items:
        other = seen.setdefault(key(item), item)
        if not same(other, item):
            where = getattr(item, "where", None) or item.entry.where
            raise FwembedError(where, f"two {what} share the prefix {key(item)}")


def read_inputs(list_path=None, directory=None, include=(), exclude=()):
    """Return the entries and the paths that make should watch."""
    if list_path is not None:
        entries = read_list(list_path)
        watched = [pathlib.Path(list_path)]
    else:
        watched = []
        entries = scan_dir(directory, walked=watched, include=include, exclude=exclude)
    watched += sorted({e.path for e in entries})
    return entries, watched


def generator(blobs):
    """{program: version} of fwembed and of the encoders whose output is embedded."""
    versions = {"fwembed": __version__}
    for encoding in sorted({b.compression for b in blobs} - {"none"}):
        versions[encoding] = encoder_version(encoding, "fwembed")
    return versions


def generate(out, list_path=None, directory=None, compress="none", corrupt_digest=None,
             report=None, jobs=None, dry_run=None, include=(), exclude=(), progress=None):
    """Build the outputs in ``out``; return the rows (entry, blob) written to the table.

    ``corrupt_digest`` names an entry whose table digest is made wrong on
    purpose, for the test of the kernel's digest check; manifest.json keeps
    the true digest. ``report(path, tag)`` is told of each file written
    (tag UPD) or removed (RM). ``dry_run(lines)``, if given, gets the
    --dry-run table instead of the outputs being put in place: the run does
    all its work in the staging folder, then removes it.
    ``include``/``exclude`` select files in directory mode (scan.py).
    """
    entries, watched = read_inputs(list_path, directory, include, exclude)
    builtin = [e for e in entries if not e.install]
    if compress != "none" and builtin and all(e.compress for e in builtin):
        warn(list_path, f"--compress {compress} (make's COMPRESS={compress}) changes no entry: "
                        "every entry sets compress= itself or through %default")
    if corrupt_digest is not None and corrupt_digest not in {e.name for e in builtin}:
        raise FwembedError(list_path or directory,
                           f"--test-corrupt-digest: no entry named {corrupt_digest!r}")
    staging = Staging(out, report)
    staging.check(input_dirs=[directory] if directory is not None else [],
                  input_files=([list_path] if list_path is not None else []) +
                  [e.path for e in entries])
    with staging:
        rows, blobs, work = collect(builtin, compress, staging, jobs, progress)
        if dry_run is not None:
            staging.abort()
            dry_run(dry_run_lines(rows, compress, work))
            return rows
        # Install-only entries are not built in, but the manifest describes them.
        installed = [(e, *digest_entry(e)) for e in entries if e.install]
        texts = [(f"{stem}.S", emit.data_source(packed))
                 for stem, packed in emit.pack(blobs).items()]
        texts += [("table.S", emit.table_source(rows, corrupt_digest)),
                  ("objects.mk", emit.objects_mk(blobs)),
                  ("names.txt", emit.names(rows)),
                  ("manifest.json", emit.manifest(rows, installed, generator(blobs))),
                  # Named as given, not resolved: make matches targets by spelling.
                  ("fwembed.d", emit.depfile(pathlib.Path(os.path.abspath(out)) / STAMP,
                                             [p.resolve() for p in watched]))]
        for name, text in texts:
            data = text.encode()
            staging.write_bytes(name, data, f"sha256:{hashlib.sha256(data).hexdigest()}")
        staging.stamp(STAMP)
        staging.commit()
    return rows
