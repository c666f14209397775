"""Compressing firmware for the kernel's own decoders, deterministically.

The stored bytes must be accepted by Linux 6.1's ``lib/xz`` and
``lib/zstd``, which decode them at request time:

xz
    The ``xz`` command: the .xz container with a CRC32 check and a single
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

Both encoders run single-threaded, so the same input gives the same bytes
for a given xz and zstd version; encoder_id() names the versions and
settings, for the record of what an output was made with. The data is
piped through the command a chunk at a time and its output goes straight
to a file, so memory does not grow with the file's size.

``auto`` tries both and keeps the smaller, but only if it saves at least
one eighth (12.5%) of the size; otherwise the data is stored raw, since a
compressed entry costs a decoder run and a vmalloc() copy on every request,
while a raw one is handed out in place.
"""

import re
import shlex
import subprocess

from .errors import FwembedError

METHODS = ("none", "xz", "zstd", "auto")
ENCODINGS = ("none", "xz", "zstd")
ZSTD_LEVEL = 19
XZ_DICT_MIN = 4 << 10
XZ_DICT_MAX = 64 << 20
PACKAGE = {"xz": "xz-utils", "zstd": "zstd"}


def auto_keeps(size, stored_size):
    """True if ``auto`` stores a compressed form of ``stored_size`` bytes."""
    return stored_size * 8 <= size * 7


def xz_dict_size(size):
    dict_size = XZ_DICT_MIN
    while dict_size < size and dict_size < XZ_DICT_MAX:
        dict_size *= 2
    return dict_size


def command(encoding, size):
    """The encoder command line for ``size`` bytes on standard input."""
    if encoding == "xz":
        return ["xz", "--format=xz", "--check=crc32",
                f"--lzma2=preset=9,dict={xz_dict_size(size)}", "-T1", "-q", "-c"]
    return ["zstd", f"-{ZSTD_LEVEL}", "--single-thread", "--check", "-q", "-c",
            f"--stream-size={size}", "-"]


def run_tool(cmd, where, **kwargs):
    try:
        return subprocess.run(cmd, capture_output=True, check=False, **kwargs)
    except OSError as err:
        raise FwembedError(where, f"cannot run {cmd[0]} ({err.strerror}); "
                                  f"install Debian's {PACKAGE[cmd[0]]} package") from None


_IDS = {}
_VERSIONS = {}


def encoder_version(encoding, where):
    """The first line of ``encoding --version``."""
    if encoding not in _VERSIONS:
        result = run_tool([encoding, "--version"], where)
        _VERSIONS[encoding] = " ".join(result.stdout.decode(errors="replace").split())
    return _VERSIONS[encoding]


def encoder_id(encoding, where):
    """The encoder's version and settings: one line, the same for the same output."""
    if encoding not in _IDS:
        version = encoder_version(encoding, where)
        settings = shlex.join(command(encoding, 0)[1:]).replace("dict=4096", "dict=auto")
        _IDS[encoding] = f"{version}; {settings}"
    return _IDS[encoding]


def compress_to(encoding, chunks, size, dest, where, cancel=None):
    """Write the ``encoding`` form of the ``size`` bytes that ``chunks`` yields
    to the new file ``dest``; return its size. Setting the threading.Event
    ``cancel`` stops the encoder (the run is being interrupted)."""
    cmd = command(encoding, size)
    try:
        with open(dest, "xb") as out:
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=out,
                                    stderr=subprocess.PIPE)
    except OSError as err:
        if err.filename is not None and str(err.filename) == str(dest):
            raise FwembedError(dest, f"cannot write: {err.strerror}") from None
        raise FwembedError(where, f"cannot run {cmd[0]} ({err.strerror}); "
                                  f"install Debian's {PACKAGE[cmd[0]]} package") from None
    try:
        try:
            for chunk in chunks:
                if cancel is not None and cancel.is_set():
                    raise FwembedError(where, "cancelled")
                proc.stdin.write(chunk)
            proc.stdin.close()
        except BrokenPipeError:
            pass
        while True:
            try:
                proc.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                if cancel is not None and cancel.is_set():
                    raise FwembedError(where, "cancelled") from None
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    errors = proc.stderr.read()
    if proc.returncode != 0:
        raise FwembedError(where, f"{shlex.join(cmd)} failed: "
                                  f"{errors.decode(errors='replace').strip()}")
    return dest.stat().st_size


ZSTD_WINDOW_MAX = 1 << 27


def kernel_rejects(encoding, fd, where):
    """Why Linux 6.1's decoder (as the built-in loader calls it) would refuse
    the .xz or .zst file open at descriptor ``fd``, or None if it takes it.

    lib/xz in single-call mode: exactly one stream, no padding after it,
    a CRC32 check or none, and every block LZMA2 alone (no BCJ or delta
    filter). lib/zstd: one frame whose window is at most 128 MiB.
    """
    path = f"/dev/fd/{fd}"
    if encoding == "xz":
        result = run_tool(["xz", "--robot", "--list", "-vv", path], where, pass_fds=(fd,))
        if result.returncode != 0:
            return "xz --list cannot read it"
        lines = [line.split("\t") for line in result.stdout.decode().splitlines()]
        summary = next(line for line in lines if line[0] == "file")
        if summary[1] != "1" or summary[7] != "0":
            return "it holds more than one stream, or padding, which single-call lib/xz refuses"
        if summary[6] not in ("None", "CRC32"):
            return f"its check is {summary[6]}; lib/xz checks CRC32 or none"
        for line in lines:
            if line[0] == "block" and (" " in line[-1] or not line[-1].startswith("--lzma2")):
                return f"a block uses the filters {line[-1]}; lib/xz is built with LZMA2 alone"
        return None
    # -f: the path is a symlink into /proc, which zstd otherwise skips
    result = run_tool(["zstd", "-lv", "-f", path], where, pass_fds=(fd,))
    text = result.stdout.decode(errors="replace")
    frames = re.search(r"# Zstandard Frames: (\d+)", text)
    window = re.search(r"Window Size: .*\((\d+) B\)", text)
    if result.returncode != 0 or not frames or not window:
        return "zstd -l cannot read it"
    if frames.group(1) != "1":
        return f"it holds {frames.group(1)} frames; the built-in loader decodes one"
    if int(window.group(1)) > ZSTD_WINDOW_MAX:
        return f"its window is {window.group(1)} bytes; lib/zstd takes at most 128 MiB"
    return None
