"""One firmware entry, as read from a list or a directory."""

import dataclasses
import pathlib


@dataclasses.dataclass(frozen=True)
class Entry:
    """A name to embed and the file that holds its data.

    ``source`` is the file's path as the input spelled it, relative to the
    list's folder or to the embedded directory. It names the data symbols,
    so it must not depend on where the tree is checked out. ``where`` is
    the ``path[:line]`` that error messages about this entry start with.
    ``install`` entries go to the filesystem, not into the kernel image.
    """

    name: str
    source: str
    path: pathlib.Path
    where: str
    license: str = None
    install: bool = False
    # "kernel", or "init": freed with the kernel's init memory after boot
    lifetime: str = "kernel"
    # none, xz, zstd or auto as the list asked, or None to take the default
    compress: str = None
    # where compress= came from, for --dry-run: "its line" or "%default at line N"
    compress_from: str = None
    # open with O_NOFOLLOW: the path was found to be a regular file, not a link
    nofollow: bool = False
    # "xz" or "zstd" if the source is a .xz or .zst file whose decoded bytes
    # are the entry's data (the name is the file's without the suffix)
    encoded: str = None

    @property
    def key(self):
        """What names the entry's data symbols: the source path, and whether
        the file is decoded (one list may embed a .xz file both ways)."""
        return f"{self.source}\0decoded" if self.encoded else self.source
