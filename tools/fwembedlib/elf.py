"""Sections of an ELF file, read with pyelftools (python3-pyelftools).

Used by 'fwembed report', by 'fwembed needs' for modules and by make bench,
never by 'fwembed gen', which needs nothing beyond the Python standard
library (see docs/architecture.md).
"""

import dataclasses

from .errors import FwembedError

SHT_NOBITS = "SHT_NOBITS"
SHF_ALLOC = 0x2


def elftools():
    """The pyelftools classes, or an error that says which package provides them."""
    try:
        # pylint: disable=import-outside-toplevel
        from elftools.common.exceptions import ELFError
        from elftools.elf.elffile import ELFFile
    except ImportError:
        raise FwembedError("fwembed", "reading ELF files needs pyelftools: "
                                      "apt-get install python3-pyelftools") from None
    return ELFFile, ELFError


@dataclasses.dataclass(frozen=True)
class Section:
    name: str
    type: str
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


def with_elf(path, read):
    """``read(ELFFile)`` of the ELF file at ``path``; errors name the file."""
    elf_file, elf_error = elftools()
    try:
        with open(path, "rb") as stream:
            if stream.read(4) != b"\x7fELF":
                raise FwembedError(path, "not an ELF file")
            stream.seek(0)
            return read(elf_file(stream))
    except OSError as err:
        raise FwembedError(path, f"cannot read: {err.strerror}") from None
    except (elf_error, ValueError, IndexError) as err:
        raise FwembedError(path, f"truncated or malformed ELF file: {err}") from None


def read_sections(path):
    """Return the Sections of the ELF file at ``path``, in header order
    (the null section first, as readelf numbers them)."""
    return with_elf(path, lambda elf: [
        Section(s.name, s["sh_type"], s["sh_flags"], s["sh_addr"], s["sh_size"])
        for s in elf.iter_sections()])


def section_data(path, name):
    """The bytes of the ELF file's section ``name``; b"" if it has none."""
    def read(elf):
        section = elf.get_section_by_name(name)
        return b"" if section is None else section.data()
    return with_elf(path, read)
