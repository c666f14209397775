"""Compressing firmware for the kernel's own decoders, deterministically.

The stored bytes must be accepted by Linux 6.1's ``lib/xz`` and
``lib/zstd``, which decode them at request time:

xz
    Python's ``lzma``: the .xz container with a CRC32 check and a single
    LZMA2 filter (``lib/xz`` has no CRC64 or SHA-256 checks and the kernel
    enables no BCJ filter for firmware). Preset 9 (the "extreme" variant
    saved 0.5% on firmware-linux-free but made a 16 KiB register table 2.2
    times larger, so it is not used). The dictionary is the
    smallest power of two that holds the whole file, at least 4 KiB and at
    most 64 MiB: a larger one cannot help, and the kernel decodes in
    single-call mode, where the output buffer is the dictionary.
zstd
    The ``zstd`` command, level 19, with the content size in the frame
    header and a content checksum. Level 19 uses a window of at most
    8 MiB (2^23), well below the 2^27 that ``lib/zstd`` accepts by default.

Both encoders are single-threaded, so the same input gives the same bytes
for a given liblzma and zstd version.

``auto`` tries both and keeps the smaller, but only if it saves at least
one eighth (12.5%) of the size; otherwise the data is stored raw, since a
compressed entry costs a decoder run and a vmalloc() copy on every request,
while a raw one is handed out in place.
"""

import lzma
import shlex
import subprocess

from .errors import FwembedError

METHODS = ("none", "xz", "zstd", "auto")
ENCODINGS = ("none", "xz", "zstd")
ZSTD_LEVEL = 19
XZ_DICT_MIN = 4 << 10
XZ_DICT_MAX = 64 << 20


def auto_keeps(size, stored_size):
    """True if ``auto`` stores a compressed form of ``stored_size`` bytes."""
    return stored_size * 8 <= size * 7


def xz_dict_size(size):
    dict_size = XZ_DICT_MIN
    while dict_size < size and dict_size < XZ_DICT_MAX:
        dict_size *= 2
    return dict_size


def compress_xz(data):
    filters = [{"id": lzma.FILTER_LZMA2, "preset": 9, "dict_size": xz_dict_size(len(data))}]
    return lzma.compress(data, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC32, filters=filters)


def zstd_command(size):
    return ["zstd", f"-{ZSTD_LEVEL}", "--single-thread", "--check", "-q", "-c",
            f"--stream-size={size}", "-"]


def compress_zstd(data, where):
    cmd = zstd_command(len(data))
    try:
        result = subprocess.run(cmd, input=data, capture_output=True, check=False)
    except OSError as err:
        raise FwembedError(where, f"cannot run zstd ({err.strerror}); "
                                  "install Debian's zstd package") from None
    if result.returncode != 0:
        raise FwembedError(where, f"{shlex.join(cmd)} failed: "
                                  f"{result.stderr.decode(errors='replace').strip()}")
    return result.stdout


def encode(data, method, where):
    """Return (encoding, stored bytes or None for raw) for one content."""
    if method == "none":
        return "none", None
    if method == "xz":
        return "xz", compress_xz(data)
    if method == "zstd":
        return "zstd", compress_zstd(data, where)
    candidates = [("xz", compress_xz(data)), ("zstd", compress_zstd(data, where))]
    encoding, stored = min(candidates, key=lambda c: (len(c[1]), c[0]))
    if auto_keeps(len(data), len(stored)):
        return encoding, stored
    return "none", None
