"""manifest.json: what 'fwembed gen' embedded, for report, tests and others.

This module is the one writer and the one reader of the format::

    {
      "format": "fwembed-manifest",
      "version": 1,
      "generator": {"fwembed": "0.6.0", "xz": "xz (XZ Utils) 5.4.1 ..."},
      "entries": [ {"name": ..., "size": ..., ...}, ... ]
    }

``generator`` names the fwembed that wrote the file and the version of
each encoder whose output it embeds (only those used); it was added
within version 1 and is absent from older files.

Entries come in name order (bytewise, as strcmp() sorts), one per firmware
name, with the fields of ManifestEntry below. name, size, sha256 and
stored_size are required; a reader fills in the defaults of the others.
Readers ignore fields they do not know, so that a later version may add
fields without breaking them; a change that old readers would misread gets
a new version number, which they refuse. Files written before the version
field existed say ``"fwembed_manifest": 1`` instead and are read as
version 1, which they are.
"""

import dataclasses
import json

from .errors import FwembedError

FORMAT = "fwembed-manifest"
VERSION = 1


@dataclasses.dataclass(frozen=True)
class ManifestEntry:
    """One firmware name: what drivers receive, and how it is stored.

    ``size`` and ``sha256`` describe the data drivers receive;
    ``stored_size`` and ``compression`` how the image holds it. ``blob`` is
    the stem of the data object in the output directory, shared by names
    with the same content and encoding. ``builtin`` is false for
    install=yes entries, which go to the filesystem and have no blob.
    ``lifetime`` is "init" for an entry that the kernel serves only while
    it boots and then frees, "kernel" for one it keeps, and null for an
    install=yes entry (added within version 1: older files lack it, and
    their entries are read as "kernel").
    """

    name: str
    size: int
    sha256: str
    stored_size: int
    compression: str = "none"
    license: str = None
    source: str = None
    blob: str = None
    builtin: bool = True
    lifetime: str = "kernel"


REQUIRED = ("name", "size", "sha256", "stored_size")
FIELDS = {f.name: f.type for f in dataclasses.fields(ManifestEntry)}


def dumps(entries, generator=None):
    """The text of manifest.json for ``entries``, sorted by name; ``generator``
    is {tool: version} of the programs that made it."""
    ordered = sorted(entries, key=lambda e: e.name.encode())
    head = {"format": FORMAT, "version": VERSION}
    if generator:
        head["generator"] = dict(sorted(generator.items()))
    return json.dumps({**head, "entries": [dataclasses.asdict(e) for e in ordered]},
                      indent=2) + "\n"


def version_of(data):
    if not isinstance(data, dict):
        return None
    return data["version"] if "version" in data else data.get("fwembed_manifest")


def entry_from(raw, number):
    """A ManifestEntry from one decoded JSON object, or why it is not one."""
    if not isinstance(raw, dict):
        raise ValueError(f"entry {number} is not an object")
    missing = [key for key in REQUIRED if key not in raw]
    if missing:
        raise ValueError(f"entry {number} lacks {', '.join(missing)}")
    known = {key: value for key, value in raw.items() if key in FIELDS}
    for key in ("size", "stored_size"):
        if not isinstance(known[key], int) or isinstance(known[key], bool):
            raise ValueError(f"entry {number}: {key} is not an integer")
    return ManifestEntry(**known)


def read(path):
    """Return the ManifestEntry list of the manifest at ``path``."""
    try:
        with open(path, encoding="utf-8") as manifest:
            data = json.load(manifest)
        version = version_of(data)
        if version is None:
            raise ValueError("no version field: not an fwembed manifest")
        if version != VERSION:
            raise ValueError(f"version {version} is not supported "
                             f"(this fwembed reads version {VERSION})")
        if not isinstance(data.get("entries"), list):
            raise ValueError("no entries list")
        return [entry_from(raw, number)
                for number, raw in enumerate(data["entries"], start=1)]
    except (OSError, ValueError) as err:
        raise FwembedError(path, f"cannot read manifest: {err}") from None
