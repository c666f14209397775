"""The FW_LOADER_DEBUG oracle (harness/fwharness/fwdebug.py): parsing the loader's
"Loaded FW" lines and judging them against the manifest, on tiny consoles."""

from fwembedlib.manifest import ManifestEntry
from fwharness import fwdebug

HELLO = "6b25e9fd12b2d51253911bf963dbefd4dc9775a6fa2d95ca4712baccba81e49d"
EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
CONSOLE = [
    "[    0.51] fw_builtin_selftest fw_builtin_selftest: Loaded FW: empty.bin, sha256: "
    + EMPTY,
    " fw_builtin_selftest: Loaded FW: fwembed/hello, world #1.txt, sha256: " + HELLO,
    " fw_builtin_selftest: Loaded FW: fwembed/hello, world #1.txt, sha256: " + EMPTY,
    "Loaded FW: truncated, sha256: 6b25e9",
]


def entry(name, sha256):
    return ManifestEntry(name=name, size=0, sha256=sha256, stored_size=0)


def test_parse_keeps_commas_in_names_and_every_load():
    """A name with ", " in it is read whole; each load of a name is kept."""
    assert fwdebug.parse(CONSOLE) == {"empty.bin": [EMPTY],
                                      "fwembed/hello, world #1.txt": [HELLO, EMPTY]}


def test_check_passes_an_entry_whose_digest_the_loader_printed():
    """A partial load's other digest beside the whole one does not fail the entry."""
    loaded = fwdebug.parse(CONSOLE)
    assert fwdebug.check([entry("fwembed/hello, world #1.txt", HELLO)], loaded)[0][1] == ""


def test_check_fails_another_digest_and_a_missing_line():
    """Only other digests, or no line at all, fail the entry, with the reason."""
    loaded = fwdebug.parse(CONSOLE)
    (_, wrong), (_, missing) = fwdebug.check([entry("empty.bin", HELLO),
                                              entry("absent.bin", EMPTY)], loaded)
    assert wrong == "loader hashed 1 load(s) to e3b0c44298fc, manifest says 6b25e9fd12b2"
    assert missing == "no 'Loaded FW' line from the loader"


def test_enabled_needs_both_options(tmp_path):
    """The lines exist only with CONFIG_FW_LOADER_DEBUG and dynamic debug."""
    config = tmp_path / ".config"
    config.write_text("CONFIG_FW_LOADER_DEBUG=y\n# CONFIG_DYNAMIC_DEBUG is not set\n")
    assert not fwdebug.enabled(config)
    config.write_text("CONFIG_FW_LOADER_DEBUG=y\nCONFIG_DYNAMIC_DEBUG=y\n")
    assert fwdebug.enabled(config)
    assert not fwdebug.enabled(None)


def test_on_command_line_reads_the_line_the_kernel_printed():
    """Both parameters, in any place on the kernel's command line, count;
    one of them, or none, or no command line line at all, does not."""
    assert fwdebug.on_command_line(
        ["Booting Linux", "[    0.00] Kernel command line: console=ttyAMA0 loglevel=8 panic=-1 "
                          "firmware_class.dyndbg=+p"])
    assert not fwdebug.on_command_line(
        ["Kernel command line: console=ttyAMA0 firmware_class.dyndbg=+p"])
    assert not fwdebug.on_command_line(["Kernel command line: console=ttyAMA0 panic=-1"])
    assert not fwdebug.on_command_line(["Booting Linux"])
