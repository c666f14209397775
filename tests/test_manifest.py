"""manifest.json: written and read by one module, with a version field."""

import json

import pytest

from fwembedlib.errors import FwembedError
from fwembedlib.manifest import ManifestEntry, dumps, read

ENTRY = ManifestEntry(name="a", size=7, sha256="8b" * 32, stored_size=7, license="MIT",
                      source="seven.bin", blob="blob-8bb0cf6eb9b17d0f")


def write(tmp_path, data):
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_what_is_written_reads_back(tmp_path):
    """dumps() then read() gives the same entries, in name order."""
    other = ManifestEntry(name="B", size=0, sha256="e3" * 32, stored_size=32,
                          compression="xz", builtin=False)
    path = write(tmp_path, dumps([ENTRY, other]))
    assert read(path) == [other, ENTRY]


def test_version_and_format_are_written(tmp_path):
    """The file names its format and version before the entries."""
    data = json.loads(dumps([ENTRY]))
    assert list(data) == ["format", "version", "entries"]
    assert (data["format"], data["version"]) == ("fwembed-manifest", 1)


def test_defaults_fill_in_optional_fields(tmp_path):
    """An entry with the four required fields reads as built in, raw, no license."""
    path = write(tmp_path, {"version": 1, "entries": [
        {"name": "a", "size": 1, "sha256": "00" * 32, "stored_size": 1, "later": "ignored"}]})
    assert read(path) == [ManifestEntry(name="a", size=1, sha256="00" * 32, stored_size=1)]
    assert read(path)[0].builtin is True and read(path)[0].compression == "none"


def test_files_from_before_the_version_field_read_as_version_1(tmp_path):
    """'fwembed_manifest': 1, as earlier gen runs wrote it, is version 1."""
    path = write(tmp_path, {"fwembed_manifest": 1, "entries": []})
    assert read(path) == []


@pytest.mark.parametrize("data, message", [
    ({"version": 2, "entries": []}, "version 2 is not supported (this fwembed reads version 1)"),
    ({"entries": []}, "no version field: not an fwembed manifest"),
    ({"version": 1, "entries": [{"name": "a", "size": 1}]}, "entry 1 lacks sha256, stored_size"),
    ({"version": 1, "entries": [{"name": "a", "size": "1", "sha256": "", "stored_size": 1}]},
     "entry 1: size is not an integer"),
    ("{", "Expecting property name"),
])
def test_bad_manifest_is_named(tmp_path, data, message):
    """A manifest this fwembed cannot read: 'path: error: cannot read manifest: why'."""
    path = write(tmp_path, data)
    with pytest.raises(FwembedError) as err:
        read(path)
    assert str(err.value).startswith(f"{path}: error: cannot read manifest: ")
    assert message in str(err.value)
