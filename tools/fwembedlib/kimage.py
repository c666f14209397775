"""The kernel inside a kernel image file, and its memory as linked.

A file may wrap the kernel in several layers, each of which says (or
shows, by its stream's magic) how its payload is compressed:

    uImage      a legacy U-Boot image: 64-byte header, whose ih_comp
                names the compression of the payload after it
    FIT         a flattened device tree (python3-libfdt reads it): the
                first image node of type "kernel", and its "compression"
    ARM zImage  the decompressor, then the compressed kernel; its
                stream is found by the magic of gzip, xz, lzma, bzip2
                or zstd after the zImage header
    bzImage     x86's setup header gives payload_offset and
                payload_length; the payload is a compressed ELF file
    gzip, xz    a whole file compressed (arm64's Image.gz)

Inside is either an ELF file (vmlinux, or x86's stripped copy of it),
read through its PT_LOAD program headers with pyelftools, or a flat
image (arm64 Image, the kernel inside a zImage): a copy of the kernel's
memory from some base address, which the locator gives (locator.py).
"""

import bz2
import dataclasses
import io
import lzma
import struct
import zlib

from . import locator
from .compress import run_tool
from .elf import elftools
from .errors import FwembedError

UIMAGE_MAGIC = 0x27051956
UIMAGE_HEADER = 64
UIMAGE_COMPRESSION = {0: "none", 1: "gzip", 2: "bzip2", 3: "lzma", 4: "lzo", 5: "lz4",
                      6: "zstd"}
FDT_MAGIC = 0xD00DFEED
ZIMAGE_MAGIC = 0x016F2818
STREAM_MAGIC = {"gzip": b"\x1f\x8b\x08", "xz": b"\xfd7zXZ\x00", "lzma": b"\x5d\x00\x00",
                "bzip2": b"BZh", "zstd": b"\x28\xb5\x2f\xfd", "lzo": b"\x89LZO",
                "lz4": b"\x02\x21\x4c\x18"}


@dataclasses.dataclass
class Kernel:
    """The innermost kernel of an image file."""
    data: bytes
    layers: list        # how it was reached, outermost first
    elf: bool


def compressed_kind(data):
    """The compression whose magic starts ``data``, or None."""
    for kind, magic in STREAM_MAGIC.items():
        if data.startswith(magic) and kind != "lzma":
            return kind
    return None


def decompress(kind, data, where, short="the file is truncated"):
    """The first stream of ``data``, decoded; what follows it is ignored.
    ``short`` says why a stream that ends early does."""
    if kind == "none":
        return data
    decoders = {"gzip": lambda: zlib.decompressobj(wbits=31),
                "xz": lambda: lzma.LZMADecompressor(format=lzma.FORMAT_XZ),
                "lzma": lambda: lzma.LZMADecompressor(format=lzma.FORMAT_ALONE),
                "bzip2": bz2.BZ2Decompressor}
    if kind in decoders:
        decoder = decoders[kind]()
        try:
            out = decoder.decompress(data)
        except (zlib.error, lzma.LZMAError, OSError, EOFError) as err:
            raise FwembedError(where, f"cannot decode its {kind} payload: {err}") from None
        if not decoder.eof:
            raise FwembedError(where, f"its {kind} payload ends early: {short}")
        return out
    if kind == "zstd":
        result = run_tool(["zstd", "-d", "-c", "-q"], where, input=data)
        # Bytes after the frame (a zImage's size word) fail the command
        # after it has written the frame's data.
        if result.returncode != 0 and not result.stdout:
            raise FwembedError(where, "cannot decode its zstd payload: "
                               + result.stderr.decode(errors="replace").strip())
        return result.stdout
    raise FwembedError(where, f"its payload is {kind}-compressed; fwembed reads gzip, xz, "
                              "lzma, bzip2 and zstd kernels: give vmlinux instead")


def be32(data, offset):
    return struct.unpack_from(">I", data, offset)[0]


def le32(data, offset):
    return struct.unpack_from("<I", data, offset)[0]


def uimage_payload(data, where):
    size = be32(data, 12)
    kind = UIMAGE_COMPRESSION.get(data[31], f"type {data[31]}")
    payload = data[UIMAGE_HEADER:UIMAGE_HEADER + size]
    if len(payload) != size:
        raise FwembedError(where, f"uImage header says {size} bytes of payload, the file has "
                                  f"{len(payload)}")
    return f"uImage ({kind})", decompress(kind, payload, where)


def fit_payload(data, where):
    try:
        import libfdt  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise FwembedError("fwembed", "reading a FIT needs libfdt: apt-get install "
                                      "python3-libfdt") from None
    try:
        fdt = libfdt.Fdt(data)
        images = fdt.path_offset("/images")
        node = fdt.first_subnode(images, libfdt.QUIET_NOTFOUND)
        while node >= 0:
            kind = fdt.getprop(node, "type", libfdt.QUIET_NOTFOUND)
            if not isinstance(kind, int) and kind.as_str() == "kernel":
                break
            node = fdt.next_subnode(node, libfdt.QUIET_NOTFOUND)
        else:
            raise FwembedError(where, "the FIT has no image of type kernel")
        name = fdt.get_name(node)
        comp = fdt.getprop(node, "compression", libfdt.QUIET_NOTFOUND)
        comp = "none" if isinstance(comp, int) else comp.as_str()
        payload = fdt.getprop(node, "data", libfdt.QUIET_NOTFOUND)
        if isinstance(payload, int):
            size = fdt.getprop(node, "data-size").as_uint32()
            offset = fdt.getprop(node, "data-offset", libfdt.QUIET_NOTFOUND)
            if isinstance(offset, int):
                start = fdt.getprop(node, "data-position").as_uint32()
            else:
                start = (fdt.totalsize() + 3 & ~3) + offset.as_uint32()
            payload = data[start:start + size]
        payload = bytes(payload)
    except libfdt.FdtException as err:
        raise FwembedError(where, f"malformed FIT: {err}") from None
    return f"FIT image /images/{name} ({comp})", decompress(comp, payload, where)


def stream_starts(data, start, per_kind=64):
    """(offset, kind) of each place after ``start`` where a compressed stream
    may begin, by offset; at most ``per_kind`` of each kind."""
    found = []
    for kind, magic in STREAM_MAGIC.items():
        offset = data.find(magic, start)
        for _ in range(per_kind):
            if offset < 0:
                break
            found.append((offset, kind))
            offset = data.find(magic, offset + 1)
    return sorted(found)


def zimage_payload(data, where):
    """The kernel of an ARM zImage: the first stream after the header that
    decodes to more than its own size."""
    tried = []
    for offset, kind in stream_starts(data, 0x30):
        if kind in ("lzo", "lz4"):
            tried.append(kind)
            continue
        try:
            out = decompress(kind, data[offset:], where)
        except FwembedError as err:
            if "ends early" in err.message:
                raise FwembedError(where, f"the {kind} stream at {offset:#x} of the ARM zImage "
                                          "ends early: the file is truncated") from None
            continue
        if len(out) > len(data) - offset:
            return f"ARM zImage ({kind} at {offset:#x})", out
    unread = f" (it holds {'/'.join(sorted(set(tried)))} data, which fwembed does not read)" \
        if tried else ""
    raise FwembedError(where, f"no kernel found in the ARM zImage{unread}; fwembed reads "
                              "gzip, xz, lzma, bzip2 and zstd: give vmlinux")


def bzimage_payload(data, where):
    setup_sects = data[0x1F1] or 4
    start = (setup_sects + 1) * 512 + le32(data, 0x248)
    payload = data[start:start + le32(data, 0x24C)]
    kind = compressed_kind(payload) or ("lzma" if payload[:3] == STREAM_MAGIC["lzma"]
                                        else "unknown")
    return f"x86 bzImage ({kind})", decompress(kind, payload, where)


def unwrap(path):
    """Read the image file at ``path`` and return its innermost Kernel."""
    try:
        with open(path, "rb") as stream:
            data = stream.read()
    except OSError as err:
        raise FwembedError(path, f"cannot read: {err.strerror}") from None
    layers = []
    for _ in range(8):
        if data[:4] == b"\x7fELF":
            return Kernel(data, layers + ["ELF"], True)
        if len(data) >= UIMAGE_HEADER and be32(data, 0) == UIMAGE_MAGIC:
            layer, data = uimage_payload(data, path)
        elif len(data) >= 40 and be32(data, 0) == FDT_MAGIC:
            layer, data = fit_payload(data, path)
        elif len(data) >= 0x30 and le32(data, 0x24) == ZIMAGE_MAGIC:
            layer, data = zimage_payload(data, path)
        elif len(data) >= 0x250 and data[0x202:0x206] == b"HdrS":
            layer, data = bzimage_payload(data, path)
        elif kind := compressed_kind(data):
            layer, data = f"{kind} file", decompress(kind, data, path)
        else:
            label = "arm64 Image" if data[0x38:0x3C] == b"ARM\x64" else "flat image"
            return Kernel(data, layers + [label], False)
        layers.append(layer)
    raise FwembedError(path, "more than 8 layers of wrapping: " + " > ".join(layers))


class Memory:
    """The kernel's memory as linked.

    ``relocs`` maps an address to the value that a RELATIVE relocation
    puts there at boot: a relocatable arm64 kernel is linked with
    --no-apply-dynamic-relocs, so its pointers are zero in vmlinux and in
    the Image, and only .rela.dyn says what they will be.
    """

    def __init__(self, where, spans, relocs=None):
        self.where = where
        self.spans = spans      # [(first address, bytes)]
        self.relocs = relocs or {}

    def read(self, address, size, what):
        for first, data in self.spans:
            if first <= address and address + size <= first + len(data):
                return data[address - first:address - first + size]
        raise FwembedError(self.where, f"{what}: {size} bytes at {address:#x} are not in the "
                                       "image")

    def words(self, address, count, loc, what):
        """``count`` words of ``loc``'s size and byte order, relocated."""
        values = struct.unpack(loc.words_format(count), self.read(address, count * loc.word, what))
        return [self.relocs.get(address + i * loc.word, value)
                for i, value in enumerate(values)]

    def cstring(self, address, what, limit=4096):
        for first, data in self.spans:
            if first <= address < first + len(data):
                start = address - first
                end = data.find(b"\0", start, start + limit)
                if end >= 0:
                    return data[start:end]
        raise FwembedError(self.where, f"{what}: no string at {address:#x} in the image")

    def locator(self, found, address):
        """``found`` with the addresses read at ``address``, relocated."""
        return dataclasses.replace(found, **dict(zip(found.fields, self.words(
            address + locator.ADDRESSES, len(found.fields), found, "locator"))))


# The RELATIVE relocation of each architecture whose kernels are linked as
# position-independent executables with addends (RELA).
RELATIVE = {"EM_AARCH64": 1027, "EM_X86_64": 8, "EM_RISCV": 3}
AARCH64_RELATIVE = struct.pack("<Q", RELATIVE["EM_AARCH64"])


def elf_memory(data, where):
    """The Memory of an ELF file: its PT_LOAD segments, and the RELATIVE
    relocations of its RELA sections; and a function from file offset to
    address."""
    elf_file, elf_error = elftools()
    try:
        elf = elf_file(io.BytesIO(data))
        segments = [(seg["p_vaddr"], seg["p_offset"], seg["p_filesz"])
                    for seg in elf.iter_segments() if seg["p_type"] == "PT_LOAD"]
        relative = RELATIVE.get(elf["e_machine"])
        mask = (1 << elf.elfclass) - 1     # r_addend is signed
        relocs = {}
        for section in elf.iter_sections():
            if section["sh_type"] == "SHT_RELA" and relative is not None:
                relocs.update((r["r_offset"], r["r_addend"] & mask)
                              for r in section.iter_relocations()
                              if r["r_info_type"] == relative)
    except (elf_error, ValueError, IndexError) as err:
        raise FwembedError(where, f"truncated or malformed ELF file: {err}") from None

    def address_of(offset):
        for vaddr, start, size in segments:
            if start <= offset < start + size:
                return vaddr + offset - start
        return None

    spans = [(vaddr, data[start:start + size]) for vaddr, start, size in segments]
    return Memory(where, spans, relocs), address_of


def flat_relocations(data):
    """The locator's address and {address: value} of a flat little-endian
    64-bit image's R_AARCH64_RELATIVE records (Elf64_Rela: r_offset,
    r_info, r_addend), found by scanning: the record that fills the
    locator's own address slot gives the locator's address."""
    relocs = {}
    at = data.find(AARCH64_RELATIVE)
    while at >= 0:
        if at % 8 == 0 and at >= 8:
            offset, _, addend = struct.unpack_from("<QQq", data, at - 8)
            relocs[offset] = addend & ((1 << 64) - 1)
        at = data.find(AARCH64_RELATIVE, at + 1)
    slot = locator.ADDRESSES
    for offset, addend in relocs.items():
        if offset - addend == slot and all(offset + 8 * i in relocs for i in range(1, 5)):
            return addend, relocs
    return None, relocs


def in_data(loc, address):
    """Whether ``address`` lies in the firmware data that ``loc`` describes."""
    return loc.data_start <= address < loc.data_end or \
        loc.init_data_start <= address < loc.init_data_end


def memory_and_locator(path):
    """The Kernel of the image at ``path``, its Memory and its Locator."""
    kernel = unwrap(path)
    where = f"{path} ({' > '.join(kernel.layers)})"
    found = locator.find_all(kernel.data)
    candidates = []     # (Locator, the address where its bytes are)
    if kernel.elf:
        memory, address_of = elf_memory(kernel.data, where)
        for loc in found:
            address = address_of(loc.offset)
            if address is not None:
                candidates.append((memory.locator(loc, address), address))
    elif found:
        # The kernel's own locator is in .rodata, which vmlinux.lds.h puts
        # before the firmware data: the first one found gives the base.
        loc = found[0]
        address = loc.self
        relocs = {}
        if address == 0 and loc.word == 8 and loc.order == "<":
            address, relocs = flat_relocations(kernel.data)
        if not address:
            raise FwembedError(where, "the table's addresses are zero in this image, and no "
                                      "relocation records say what they become at boot")
        base = address - loc.offset
        memory = Memory(where, [(base, kernel.data)], relocs)
        candidates = [(memory.locator(other, base + other.offset), base + other.offset)
                      for other in found]
    # The kernel's own locator is where its own address says, and outside
    # the firmware data. One inside the data is a kernel embedded as
    # firmware: it holds that kernel's addresses, which may happen to match.
    candidates = [(loc, address) for loc, address in candidates if loc.self == address]
    candidates = [loc for loc, address in candidates
                  if not any(other is not loc and in_data(other, address)
                             for other, _ in candidates)]
    if not candidates:
        raise FwembedError(where, "no fwembed locator: the kernel has no table written by "
                                  "fwembed gen")
    return kernel, memory, candidates[0]
