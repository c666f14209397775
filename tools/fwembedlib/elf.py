"""Section headers of an ELF file (32 or 64 bits, either byte order)."""

import dataclasses
import struct

from .errors import FwembedError

SHT_NOBITS = 8
SHF_ALLOC = 0x2

# The file header after the 16-byte e_ident: e_type ... e_shstrndx.
HEADER = {1: "HHIIIIIHHHHHH", 2: "HHIQQQIHHHHHH"}
# sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, ...
SECTION = {1: "IIIIIIIIII", 2: "IIQQQQIIQQ"}


@dataclasses.dataclass(frozen=True)
class Section:
    name: str
    type: int
    flags: int
    addr: int
    size: int

    @property
    def allocated(self):
        """Part of the loaded image (code, data, and .bss)."""
        return bool(self.flags & SHF_ALLOC)

    @property
    def nobits(self):
        """Takes memory but no bytes in the file (.bss)."""
        return self.type == SHT_NOBITS


def read_sections(path):
    """Return the Sections of the ELF file at ``path``, in header order."""
    try:
        with open(path, "rb") as elf:
            data = elf.read()
    except OSError as err:
        raise FwembedError(path, f"cannot read: {err.strerror}") from None
    if data[:4] != b"\x7fELF" or len(data) < 16 or data[4] not in HEADER or data[5] not in (1, 2):
        raise FwembedError(path, "not an ELF file")
    order = "<" if data[5] == 1 else ">"
    try:
        fields = struct.unpack_from(order + HEADER[data[4]], data, 16)
        shoff, shentsize, shnum, shstrndx = fields[5], fields[10], fields[11], fields[12]
        raw = [struct.unpack_from(order + SECTION[data[4]], data, shoff + i * shentsize)
               for i in range(shnum)]
        strtab = raw[shstrndx][4]
    except (struct.error, IndexError):
        raise FwembedError(path, "truncated ELF file") from None

    def name(offset):
        end = data.find(b"\0", strtab + offset)
        return data[strtab + offset:end].decode("ascii", "replace")

    return [Section(name(s[0]), s[1], s[2], s[3], s[5]) for s in raw]
