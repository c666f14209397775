"""fwembed ls, extract and verify: the built-in firmware of a kernel image.

The table is read as the kernel reads it: struct builtin_fw entries of
(name, data, size, stored_size, compression, digest) words, between the
addresses the locator gives (kimage.py finds the kernel and the locator),
then the init-only table if the locator has one. 'ls' prints the same
lines as the kernel's debugfs listing (/sys/kernel/debug/firmware/builtin)
before the kernel has freed its init memory; 'extract' writes one entry's
data, decoded; 'verify' decodes every entry and checks its size and
SHA-256.
"""

import dataclasses
import hashlib

from .errors import FwembedError
from .kimage import decompress, memory_and_locator
from .outdir import write_output_file

COMPRESSION = {0: "none", 1: "xz", 2: "zstd"}
DIGEST_SIZE = 32
LISTING_HEADER = "name\tsize\tstored_size\tcompression\tsha256\tlifetime"


@dataclasses.dataclass(frozen=True)
class Builtin:
    """One entry of a kernel's table."""
    name: str
    size: int
    stored_size: int
    compression: str
    digest: bytes       # None when the entry has none (EXTRA_FIRMWARE)
    stored: bytes
    lifetime: str = "kernel"    # or "init": freed with the init memory


@dataclasses.dataclass
class Table:
    where: str
    entries: list
    data_bytes: int
    init_data_bytes: int = 0

    @property
    def init_entries(self):
        return sum(1 for entry in self.entries if entry.lifetime == "init")


def read_table(path):
    """The Table of the kernel image at ``path``."""
    _, memory, loc = memory_and_locator(path)
    where = memory.where
    if loc.entry_words < 6:
        raise FwembedError(where, f"table entries of {loc.entry_words} words; fwembed reads "
                                  "6 (name, data, size, stored_size, compression, digest)")
    entries = read_entries(memory, loc, loc.table_start, loc.table_end, "kernel")
    entries += read_entries(memory, loc, loc.init_table_start, loc.init_table_end, "init")
    return Table(where, entries, loc.data_end - loc.data_start,
                 loc.init_data_end - loc.init_data_start)


def read_entries(memory, loc, start, end, lifetime):
    """The Builtin entries of the table from ``start`` to ``end``."""
    where = memory.where
    entry_size = loc.entry_words * loc.word
    table = "the table" if lifetime == "kernel" else "the init-only table"
    count, rest = divmod(end - start, entry_size)
    if rest or count < 0:
        raise FwembedError(where, f"{table} spans {end - start} bytes, "
                                  f"not a whole number of {entry_size}-byte entries")
    entries = []
    for index in range(count):
        what = f"{'' if lifetime == 'kernel' else 'init-only '}table entry {index}"
        words = memory.words(start + index * entry_size, loc.entry_words, loc, what)
        name_at, data_at, size, stored_size, compression, digest_at = words[:6]
        raw_name = memory.cstring(name_at, f"{what}: name")
        name = raw_name.decode("ascii", "backslashreplace")
        what = f"{what} ({name!r})"
        if compression not in COMPRESSION:
            raise FwembedError(where, f"{what}: unknown compression {compression}")
        stored = memory.read(data_at, stored_size, f"{what}: data")
        digest = memory.read(digest_at, DIGEST_SIZE, f"{what}: digest") if digest_at else None
        entries.append(Builtin(name, size, stored_size, COMPRESSION[compression], digest,
                               stored, lifetime))
    return entries


def listing(table):
    """The lines of the kernel's debugfs listing, for this table."""
    lines = [LISTING_HEADER]
    for entry in table.entries:
        digest = entry.digest.hex() if entry.digest else "-"
        lines.append(f"{entry.name}\t{entry.size}\t{entry.stored_size}\t{entry.compression}"
                     f"\t{digest}\t{entry.lifetime}")
    init = table.init_entries
    lines.append(f"# {len(table.entries) - init} entries, {table.data_bytes} bytes of data")
    if init:
        lines.append(f"# {init} init-only entries, {table.init_data_bytes} bytes of data, "
                     "freed when boot ends")
    return lines


def decoded(table, entry):
    """The data drivers receive for ``entry``."""
    return decompress(entry.compression, entry.stored, f"{table.where}: {entry.name!r}",
                      short="the image is damaged")


def checked(table, entry):
    """(the data drivers receive, None), or (None, why it is not what the
    table entry says)."""
    try:
        data = decoded(table, entry)
    except FwembedError as err:
        return None, err.message
    if len(data) != entry.size:
        return None, f"decodes to {len(data)} bytes, the table says {entry.size}"
    if entry.digest and hashlib.sha256(data).digest() != entry.digest:
        return None, f"SHA-256 {hashlib.sha256(data).hexdigest()} does not match the " \
                     f"table's {entry.digest.hex()}"
    return data, None


def ls(path):
    return listing(read_table(path))


def verify(path):
    """The report's lines; raise FwembedError naming every bad entry."""
    table = read_table(path)
    lines, bad = [f"# {table.where}"], []
    for entry in table.entries:
        _, why = checked(table, entry)
        if why:
            bad.append(f"{entry.name!r}: {why}")
            lines.append(f"  FAIL    {entry.name}")
        else:
            lines.append(f"  {'OK' if entry.digest else 'SIZE OK':<8}{entry.name}"
                         + ("" if entry.digest else " (no digest: size checked only)"))
    if bad:
        print("\n".join(lines), flush=True)
        raise FwembedError(table.where, f"{len(bad)} of {len(table.entries)} entries do not "
                                        "match:\n" + "\n".join(bad))
    hashed = sum(1 for entry in table.entries if entry.digest)
    sized = len(table.entries) - hashed
    lines.append(f"{len(table.entries)} entries verified: {hashed} by SHA-256"
                 + (f", {sized} by size only (no digest)" if sized else ""))
    return lines


def extract(path, name, out, force=False):
    """Write the data of entry ``name`` to ``out``; return its size."""
    table = read_table(path)
    entry = next((e for e in table.entries if e.name == name), None)
    if entry is None:
        raise FwembedError(table.where, f"no built-in firmware named {name!r}")
    data, why = checked(table, entry)
    if why:
        raise FwembedError(table.where, f"{name!r}: {why}; nothing written")
    write_output_file(out, data, force)
    return len(data)
