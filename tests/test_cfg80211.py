"""cfg80211 checks the regulatory database built into the kernel (make cfg80211).

The versatile board embeds Debian's regulatory.db and regulatory.db.p7s.
At boot cfg80211 requests both, checks the PKCS#7 signature against the
keys in net/wireless/certs, and only then uses the database; the guest
asks it, with Debian's iw, for the country it was told to take. The same
kernel is relinked with the database stored xz-compressed, with one
byte of it changed, which cfg80211 must refuse although the guest's
/lib/firmware holds the genuine pair, and without it, when cfg80211 must
take that pair. The parsers are tested first, on lines as the guest
prints them.
"""

import argparse
import hashlib
import json
import shutil
import subprocess

import pytest

from conftest import HARNESS, PYTHON, ROOT, build_group, make, run_command
from fwembedlib.manifest import read as read_manifest
from fwharness import cfg80211

OUT = ROOT / "build" / "versatile"
RESULT = OUT / "cfg80211" / "result.json"
REGDB = "/lib/firmware/regulatory.db"

CONSOLE = """\
cfg80211: Loading compiled-in X.509 certificates for regulatory database
cfg80211: Loaded X.509 cert 'sforshee: 00b28ddf47aef9cea7'
fwembed-cfg80211: begin iw
global
country DE: DFS-ETSI
\t(2400 - 2483 @ 40), (N/A, 20), (N/A)

phy#0
country 99: DFS-UNSET
fwembed-cfg80211: end iw status=0
reboot: Restarting system""".splitlines()


def test_the_global_country_is_the_first_one_iw_shows():
    lines = cfg80211.iw_output(CONSOLE)
    assert lines[:2] == ["global", "country DE: DFS-ETSI"]
    assert lines[-1] == "country 99: DFS-UNSET"
    assert cfg80211.global_country(lines) == ("DE", "DFS-ETSI")
    assert cfg80211.global_country(None) is None


def test_every_check_passes_on_an_accepted_database():
    assert [passed for _, passed, _ in cfg80211.verdict(CONSOLE, "DE")] == [True] * 4
    assert [passed for _, passed, _ in cfg80211.verdict(CONSOLE, "FR")] == [True] * 3 + [False]


def test_regdb_keys_are_the_lines_after_cfg80211s_own():
    """6.1 prefixes each key with "cfg80211: ", 6.12 does not; another
    keyring's keys, before cfg80211's line or after a line of another
    kind, are not cfg80211's."""
    assert cfg80211.regdb_keys(CONSOLE) == ["sforshee: 00b28ddf47aef9cea7"]
    console_6_12 = ["Loading compiled-in X.509 certificates",
                    "Loaded X.509 cert 'system: 1234'",
                    cfg80211.LOADING_KEYS,
                    "Loaded X.509 cert 'benh@debian.org: 577e021cb980'",
                    "Loaded X.509 cert 'wens: 61c038651aab'",
                    "clocksource: Switched to clocksource timer3",
                    "Loaded X.509 cert 'late: 99'"]
    assert cfg80211.regdb_keys(console_6_12) == ["benh@debian.org: 577e021cb980",
                                                 "wens: 61c038651aab"]
    assert cfg80211.regdb_keys(console_6_12[:2]) == []


def test_a_refused_database_fails_the_signature_check():
    refused = CONSOLE[:2] + [cfg80211.REFUSED] + [
        line.replace("country DE: DFS-ETSI", "country 00: DFS-UNSET") for line in CONSOLE[2:]]
    failed = [d for d, passed, _ in cfg80211.verdict(refused, "DE") if not passed]
    assert failed == ["signature accepted", "iw reg get: country DE"]


def test_the_country_must_come_from_the_database():
    assert cfg80211.country_code("DE") == "DE"
    for bad in ("00", "de", "DEU", "D'"):
        with pytest.raises(argparse.ArgumentTypeError):
            cfg80211.country_code(bad)


def board_copy(tmp_path, list_text):
    """The versatile board with another firmware list, built in build/versatile."""
    board = tmp_path / "versatile"
    shutil.copytree(ROOT / "boards" / "versatile", board)
    (board / "firmware.list").write_text(list_text)
    return board


@pytest.fixture(scope="module")
def relinked_after():
    """Relink build/versatile with its own list once this file's variants are done."""
    yield
    result = make("kernel")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.kernel
@build_group("versatile")
def test_cfg80211_accepts_the_raw_database(relinked_after):
    """The board's own list: the upstream pair, stored as it is."""
    run = run_command("make cfg80211")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    result = json.loads(RESULT.read_text())
    assert result["regulatory.db"]["compression"] == "none"
    assert result["iw_reg_get"][:2] == ["global", "country DE: DFS-ETSI"]
    assert "cfg80211: Loaded X.509 cert 'wens: 61c038651aabdcf94bd0ac7ff06c7248db18c600'" \
        in result["cfg80211_lines"]
    assert not [line for line in result["cfg80211_lines"] if "regulatory.db" in line]


@pytest.mark.kernel
@build_group("versatile")
def test_cfg80211_accepts_the_database_stored_xz_compressed(tmp_path, relinked_after):
    """Debian's own pair, regulatory.db decoded from xz at the request."""
    board = board_copy(tmp_path, f"regulatory.db {REGDB}-debian compress=xz license=ISC\n"
                                 f"regulatory.db.p7s {REGDB}.p7s-debian license=ISC\n")
    run = make("cfg80211", f"BOARD={board}", "OUT_NAME=versatile")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    result = json.loads(RESULT.read_text())
    assert result["regulatory.db"]["compression"] == "xz"
    assert result["regulatory.db"]["stored_size"] < result["regulatory.db"]["size"]
    assert result["iw_reg_get"][1] == "country DE: DFS-ETSI"
    assert "versatile: cfg80211 accepted the built-in regulatory.db (xz)" in run.stdout


def genuine_pair(folder):
    """Debian's upstream pair, under the names cfg80211 requests."""
    folder.mkdir()
    for name in cfg80211.NAMES:
        shutil.copy(f"/lib/firmware/{name}-upstream", folder / name)
    return folder


def harness_cfg80211(*args):
    """fwembed-harness cfg80211 on build/versatile's kernel, as make runs it."""
    linux = OUT / "linux" / "arch" / "arm" / "boot"
    return subprocess.run(
        [PYTHON, HARNESS, "cfg80211", "--board", ROOT / "boards" / "versatile",
         "--userland", ROOT / "build" / "guest-userland" / "root",
         "--kernel", linux / "zImage", "--dtb", linux / "dts" / "versatile-pb.dtb",
         "--manifest", OUT / "fw" / "manifest.json", "--out", OUT / "cfg80211", *args],
        capture_output=True, text=True, check=False)


@pytest.mark.kernel
@build_group("versatile")
def test_cfg80211_refuses_an_altered_database(tmp_path, relinked_after):
    """One bit changed in the database's last byte, the signature kept. The
    guest's /lib/firmware holds the genuine pair, which cfg80211 would take
    (next test): the bytes it refuses are the built-in ones."""
    data = bytearray(open(f"{REGDB}-upstream", "rb").read())
    data[-1] ^= 1
    altered = tmp_path / "regulatory.db"
    altered.write_bytes(data)
    board = board_copy(tmp_path, f"regulatory.db {altered} license=ISC\n"
                                 f"regulatory.db.p7s {REGDB}.p7s-upstream license=ISC\n")
    built = make("kernel", f"BOARD={board}", "OUT_NAME=versatile")
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    entry = {e.name: e for e in read_manifest(OUT / "fw" / "manifest.json")}["regulatory.db"]
    assert entry.sha256 == hashlib.sha256(data).hexdigest()
    run = harness_cfg80211("--fs-regdb", genuine_pair(tmp_path / "genuine"))
    assert run.returncode == 1, run.stdout[-4000:] + run.stderr[-2000:]
    result = json.loads(RESULT.read_text())
    assert cfg80211.REFUSED in result["cfg80211_lines"]
    assert result["iw_reg_get"][1].startswith("country 00: ")
    assert "  FAIL    signature accepted" in run.stdout
    assert "versatile: cfg80211 refused the built-in regulatory.db (raw)" in run.stdout


@pytest.mark.kernel
@build_group("versatile")
def test_without_the_built_in_pair_cfg80211_takes_the_file_system_one(tmp_path,
                                                                       relinked_after):
    """The control for the test above: with no regulatory.db built in, the
    guest's genuine pair is what cfg80211 loads and accepts."""
    board = board_copy(tmp_path, f"fwembed/seven.bin {ROOT}/firmware/seven.bin\n")
    built = make("kernel", f"BOARD={board}", "OUT_NAME=versatile")
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    run = harness_cfg80211("--fs-regdb", genuine_pair(tmp_path / "genuine"))
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "versatile: cfg80211 accepted the file system's regulatory.db" in run.stdout
    assert json.loads(RESULT.read_text())["iw_reg_get"][1] == "country DE: DFS-ETSI"
