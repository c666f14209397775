"""The locator: where the built-in firmware table is, in a kernel image
without symbols.

fwembed gen writes one into table.S. A raw arm64 Image, the kernel inside
an ARM zImage, a uImage or a FIT have no symbol table, so 'fwembed ls'
finds the table by this block's magic and reads the addresses in it. The
format is stable: a reader accepts versions 1 and 2 and refuses any other.
Version 2 is version 1 with four more addresses, for the init-only table;
fwembed gen writes it only for a table that has lifetime=init entries, so
that other tables still link with kernels that have no init-only table.

    offset  size  field
    0       16    magic: "fwembed locator" and a NUL byte
    16      4     version: 1 or 2, in the kernel's byte order (so a
                  reader that finds it in the other order knows the order)
    20      4     W: bytes in an address, 4 or 8 (__SIZEOF_POINTER__)
    24      4     words in one table entry (BUILTIN_FW_WORDS)
    28      4     0, reserved
    32      W     the address of the locator itself
    32+W    W     __start_builtin_fw: the sorted table of struct builtin_fw
    32+2W   W     __end_builtin_fw
    32+3W   W     __start_builtin_fw_data: the stored images
    32+4W   W     __end_builtin_fw_data
  version 2 only:
    32+5W   W     __start_builtin_fw_init: the init-only table, freed
                  with the kernel's init memory after boot
    32+6W   W     __end_builtin_fw_init
    32+7W   W     __start_builtin_fw_init_data: the init-only images
    32+8W   W     __end_builtin_fw_init_data

Addresses are the kernel's virtual addresses as linked. In an image that
is a flat copy of the kernel from some base address (Image, the payload
of a zImage), the locator's own address gives that base. It lives in
.rodata, 8-aligned, and costs 32 + 5 W bytes (72 on a 64-bit kernel), or
32 + 9 W in version 2.
"""

import dataclasses
import struct

MAGIC = b"fwembed locator\0"
# The addresses of each version, in order
FIELDS = {1: ("self", "table_start", "table_end", "data_start", "data_end")}
FIELDS[2] = FIELDS[1] + ("init_table_start", "init_table_end", "init_data_start",
                         "init_data_end")
ADDRESSES = 32      # the offset of the first address, "self"


def assembly(init=False):
    """The locator as table.S writes it, after <linux/builtin_fw.h>:
    version 2, with the init-only table, if ``init``, else version 1."""
    version = 2 if init else 1
    text = ("\n/*\n * Where 'fwembed ls' finds this table in a kernel image without\n"
            f" * symbols: format version {version} of fwembed's locator.\n */\n"
            "\t.pushsection .rodata, \"a\"\n"
            "\t.balign 8\n"
            ".L_fwembed_locator:\n"
            '\t.ascii "fwembed locator\\0"\n'
            f"\t.long {version}, __SIZEOF_POINTER__, BUILTIN_FW_WORDS, 0\n"
            "\t.dc.a .L_fwembed_locator, __start_builtin_fw, __end_builtin_fw\n"
            "\t.dc.a __start_builtin_fw_data, __end_builtin_fw_data\n")
    if init:
        text += ("\t.dc.a __start_builtin_fw_init, __end_builtin_fw_init\n"
                 "\t.dc.a __start_builtin_fw_init_data, __end_builtin_fw_init_data\n")
    return text + "\t.popsection\n"


@dataclasses.dataclass(frozen=True)
class Locator:
    offset: int         # of the magic, in the bytes searched
    order: str          # "<" or ">", for struct
    word: int           # 4 or 8
    entry_words: int
    version: int
    self: int
    table_start: int
    table_end: int
    data_start: int
    data_end: int
    # version 2; an empty range in version 1
    init_table_start: int = 0
    init_table_end: int = 0
    init_data_start: int = 0
    init_data_end: int = 0

    @property
    def fields(self):
        """The names of the addresses this locator holds, in order."""
        return FIELDS[self.version]

    def words_format(self, count):
        """The struct format of ``count`` words of this kernel."""
        return words_format(self.order, self.word, count)


def words_format(order, word, count):
    return order + ("I" if word == 4 else "Q") * count


def parse_at(data, offset):
    """The Locator whose magic is at ``offset`` of ``data``, or None if the
    bytes there are not a locator of a version this module reads."""
    head = data[offset + len(MAGIC):offset + ADDRESSES]
    if len(head) < 16:
        return None
    for order in "<>":
        version, word, entry_words, reserved = struct.unpack(order + "4I", head)
        if version in FIELDS and word in (4, 8) and reserved == 0:
            break
    else:
        return None
    count = len(FIELDS[version])
    raw = data[offset + ADDRESSES:offset + ADDRESSES + count * word]
    if len(raw) < count * word:
        return None
    values = struct.unpack(words_format(order, word, count), raw)
    return Locator(offset, order, word, entry_words, version,
                   **dict(zip(FIELDS[version], values)))


def find_all(data):
    """Every Locator in ``data`` that this module reads, in order."""
    found = []
    start = data.find(MAGIC)
    while start >= 0:
        locator = parse_at(data, start)
        if locator is not None:
            found.append(locator)
        start = data.find(MAGIC, start + 1)
    return found
