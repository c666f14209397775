"""The debugfs listing printed by the test init, on a recorded console log."""

from conftest import ROOT
from fwembedlib.manifest import ManifestEntry, read
from fwharness import listing

DATA = ROOT / "tests" / "data"
# The manifest of the build whose boot boot-listing.log recorded
MANIFEST = read(DATA / "boot-listing-manifest.json")


def lines(name="boot-listing.log"):
    return (DATA / name).read_text().splitlines(True)


def test_recorded_listing_matches_the_manifest():
    """Every manifest entry is listed with its size, compression and digest."""
    parsed = listing.parse(lines())
    assert parsed.found and parsed.complete and parsed.header_ok
    assert len(parsed.rows) == 14
    assert parsed.rows["fwembed/ramp-256.bin"] == {
        "size": "256", "stored_size": "256", "compression": "none",
        "sha256": "40aff2e9d2d8922e47afd4648e6967497158785fbd1da870e7110266bf944880",
        "lifetime": "kernel"}
    assert parsed.rows["fwembed/boot-only/regs-16k.bin"]["lifetime"] == "freed"
    assert listing.mismatches(MANIFEST, parsed) == []


def test_init_only_entries_must_say_freed_after_boot():
    """Read after boot, an init-only entry still listed as "init" is a mismatch;
    'fwembed ls' (booted=False) lists it so."""
    before = [l.replace("\tfreed\n", "\tinit\n") for l in lines()]
    problems = listing.mismatches(MANIFEST, listing.parse(before))
    assert "'fwembed/boot-only/regs-16k.bin' listed with lifetime init (manifest freed)" \
        in problems
    assert listing.mismatches(MANIFEST, listing.parse(before), booted=False) == []


def test_init_only_entries_were_refused_after_boot():
    """Each init-only entry's request after boot failed with -ENOENT."""
    gone = listing.gone_after_boot(MANIFEST, lines())
    assert [(entry.name, why) for entry, why in gone] == [
        ("fwembed/boot-only/empty.bin", ""), ("fwembed/boot-only/random-4k.bin", ""),
        ("fwembed/boot-only/regs-16k.bin", ""), ("fwembed/boot-only/seven.xz", "")]


def test_an_init_only_entry_served_after_boot_fails():
    """An init-only entry that still loads after boot, or that was not asked
    for, is reported."""
    seven = '"fwembed/boot-only/seven.xz": '
    served = [l.replace(seven + "error -2", seven + "served") for l in lines()
              if '"fwembed/boot-only/empty.bin"' not in l]
    whys = dict((entry.name, why) for entry, why in listing.gone_after_boot(MANIFEST, served))
    assert whys["fwembed/boot-only/seven.xz"] == "still served after boot"
    assert whys["fwembed/boot-only/empty.bin"].startswith("not requested after boot")
    assert whys["fwembed/boot-only/regs-16k.bin"] == ""


def test_install_only_entries_are_not_expected_in_the_listing():
    """The listing is compared only with the manifest's built-in entries."""
    installed = ManifestEntry(name="fs/only.bin", size=1, sha256="00" * 32, stored_size=1,
                              builtin=False)
    assert listing.mismatches(MANIFEST + [installed], listing.parse(lines())) == []


def test_wrong_digest_is_named():
    """A listed digest that differs from the manifest is reported by name."""
    bad = [l.replace("40aff2e9d2d8922e", "00000000d2d8922e") for l in lines()]
    problems = listing.mismatches(MANIFEST, listing.parse(bad))
    assert problems == ["'fwembed/ramp-256.bin' listed with sha256 "
                        "00000000d2d8922e47afd4648e6967497158785fbd1da870e7110266bf944880 "
                        "(manifest 40aff2e9d2d8922e47afd4648e6967497158785fbd1da870e7110266bf944880)"]


def test_truncated_listing_is_flagged():
    """A listing cut off before its end marker, and its missing rows, are reported."""
    cut = [l for l in lines() if "fwembed/seven.bin\t" not in l and
           "listing end" not in l]
    problems = listing.mismatches(MANIFEST, listing.parse(cut))
    assert "debugfs listing ends early" in problems
    assert "'fwembed/seven.bin' missing from the debugfs listing" in problems


def test_no_listing_says_which_option():
    """A console without a listing names the Kconfig option to check."""
    problems = listing.mismatches(MANIFEST, listing.parse(lines("boot-pass.log")))
    assert "CONFIG_FW_LOADER_BUILTIN_DEBUGFS" in problems[0]
