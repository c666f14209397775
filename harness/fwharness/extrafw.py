"""What CONFIG_EXTRA_FIRMWARE builds in, read from a kernel's .config.

The kernel's own rule builds in each file that CONFIG_EXTRA_FIRMWARE names
(blank-separated), from CONFIG_EXTRA_FIRMWARE_DIR: an absolute directory,
or one relative to the kernel source tree. Such entries carry no digest in
the kernel, so the harness hashes the files themselves: the self-test must
deliver each one byte for byte, like a manifest entry.
"""

import hashlib
import pathlib

from fwembedlib.errors import FwembedError
from fwembedlib.kconfig import parse_config
from fwembedlib.manifest import ManifestEntry


def unquote(value):
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value


def expected_entries(config, tree):
    """ManifestEntry objects for the files that ``config`` builds in."""
    values = parse_config(config)
    names = unquote(values.get("CONFIG_EXTRA_FIRMWARE", ('""', 0))[0]).split()
    folder = pathlib.Path(unquote(values.get("CONFIG_EXTRA_FIRMWARE_DIR", ('""', 0))[0]))
    if not folder.is_absolute():
        folder = pathlib.Path(tree) / folder
    entries = []
    for name in names:
        try:
            data = (folder / name).read_bytes()
        except OSError as err:
            raise FwembedError(config, f"CONFIG_EXTRA_FIRMWARE: {folder / name}: "
                                       f"{err.strerror}") from None
        entries.append(ManifestEntry(name=name, size=len(data),
                                     sha256=hashlib.sha256(data).hexdigest(),
                                     stored_size=len(data), source=str(folder / name)))
    return entries
