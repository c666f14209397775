"""cfg80211 in QEMU: the built-in regulatory database, checked by the kernel.

At boot, cfg80211 requests regulatory.db and, with
CONFIG_CFG80211_REQUIRE_SIGNED_REGDB, regulatory.db.p7s, whose PKCS#7
signature it checks against the keys in net/wireless/certs before it uses
a byte of the database. It prints a line when it cannot load the database
("failed to load regulatory.db") and when it refuses it ("... malformed or
signature is missing/invalid"), and nothing when it takes it. So the guest
asks: the kernel boots with cfg80211.ieee80211_regdom=COUNTRY, a country it
can only take from the database, and the init (Debian's busybox and iw,
unpacked by scripts/fetch-debs) runs "iw reg get" until it shows that
country or cfg80211 has printed why it has none, and prints its output
between marker lines.

The initramfs's /lib/firmware holds decoys under both names: were the
file system served instead of the built-in entries, cfg80211 would refuse
the database. With --fs-regdb, it holds a real pair instead, which
cfg80211 would accept: a test of an altered built-in database uses it to
show that the refusal is of the built-in bytes.
"""

import argparse
import json
import pathlib
import re
import sys

from fwembedlib import atomic, cpio
from fwembedlib.board import load_board
from fwembedlib.manifest import read as read_manifest

from .kselftest import USERLAND as KSELFTEST_USERLAND, script_runs, userland_files
from .qemu import boot, qemu_command

NAMES = ("regulatory.db", "regulatory.db.p7s")
# (path in the unpacked packages, path in the initramfs): busybox and the C
# library as make kselftest's guest has them, and iw with libnl.
USERLAND = tuple(f for f in KSELFTEST_USERLAND
                 if f[1] in ("bin/busybox", "lib/ld-linux.so.3",
                             "lib/arm-linux-gnueabi/libc.so.6")) + (
    ("sbin/iw", "sbin/iw"),
    ("lib/arm-linux-gnueabi/libnl-3.so.200", "lib/arm-linux-gnueabi/libnl-3.so.200"),
    ("lib/arm-linux-gnueabi/libnl-genl-3.so.200", "lib/arm-linux-gnueabi/libnl-genl-3.so.200"))
DECOY = b"fwembed: a decoy on the file system, not the built-in %s\n"
MARK = "fwembed-cfg80211:"
# How many times the init runs "iw reg get", a second apart, before it
# gives up: far more than cfg80211 needs to take the database, which it
# has a second or so after the init starts.
WAIT = 60
FAILED = "cfg80211: failed to load regulatory.db"
REFUSED = "cfg80211: loaded regulatory.db is malformed or signature is missing/invalid"
LOADING_KEYS = "cfg80211: Loading compiled-in X.509 certificates for regulatory database"
# 6.1's cfg80211 prints each key it loads under its own prefix; 6.12's
# hands the list to x509_load_certificate_list(), which prints none.
CERT_RE = re.compile(r"^(?:cfg80211: )?Loaded X\.509 cert '(.*)'$")
COUNTRY_RE = re.compile(r"^country (\S\S): (.*)$")


def init_script(country):
    """The guest's init: poll "iw reg get", print it, reboot."""
    return f"""#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
n=0
while :; do
	iw reg get >/tmp/reg 2>&1
	status=$?
	grep -A1 '^global$' /tmp/reg | grep -q '^country {country}:' && break
	dmesg | grep -q -e '{FAILED}' -e '{REFUSED}' && break
	[ $n -ge {WAIT} ] && break
	n=$((n + 1))
	sleep 1
done
echo "{MARK} begin iw"
cat /tmp/reg
echo "{MARK} end iw status=$status"
reboot -f
"""


def country_code(text):
    """An argparse type: a country the database alone can give, not the
    world domain "00" that cfg80211 has built in."""
    if not re.fullmatch(r"[A-Z]{2}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a country code (two capitals, as DE)")
    return text


def initramfs(userland_root, country, fs_regdb=None):
    """The guest's initramfs (newc bytes). /lib/firmware holds the decoys,
    or the pair in the folder ``fs_regdb``."""
    files = userland_files(userland_root, USERLAND)
    files["init"] = (0o100755, init_script(country).encode())
    for name in NAMES:
        data = (pathlib.Path(fs_regdb) / name).read_bytes() if fs_regdb else \
            DECOY % name.encode()
        files[f"lib/firmware/{name}"] = (0o100644, data)
    return cpio.tree(files, folders=("dev", "proc", "sys", "tmp"))


def iw_output(lines):
    """The lines "iw reg get" printed, between the init's markers; None if absent."""
    run = script_runs(lines, MARK).get("iw")
    return run.lines if run else None


def global_country(iw_lines):
    """(alpha2, DFS region) of the global regulatory domain "iw reg get"
    shows, or None: the first "country" line, which follows "global"."""
    for line in iw_lines or ():
        match = COUNTRY_RE.match(line)
        if match:
            return match.groups()
    return None


def regdb_keys(console):
    """The keys cfg80211 loaded for the database: the "Loaded X.509 cert"
    lines right after its LOADING_KEYS line (other keyrings print the same
    lines, without a prefix on 6.12)."""
    keys, after = [], False
    for line in console:
        match = CERT_RE.match(line)
        if after and match:
            keys.append(match.group(1))
        else:
            after = line == LOADING_KEYS
    return keys


def verdict(console, country):
    """The checks on a console log: a list of (description, passed, detail)."""
    certs = regdb_keys(console)
    got = global_country(iw_output(console))
    shown = f"{got[0]}: {got[1]}" if got else "no country"
    return [
        ("cfg80211 loaded its regulatory database keys", bool(certs),
         ", ".join(c.split(":")[0] for c in certs) or "none"),
        ('no "failed to load regulatory.db"', FAILED not in console, ""),
        ("signature accepted", REFUSED not in console, ""),
        (f"iw reg get: country {country}", bool(got) and got[0] == country, shown),
    ]


def run(args):
    board = load_board(args.board)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    entries = {e.name: e for e in read_manifest(args.manifest) if e.builtin}
    missing = [name for name in NAMES if name not in entries]
    if missing and not args.fs_regdb:
        print(f"{args.manifest}: error: not built in: {', '.join(missing)}", file=sys.stderr)
        return 1
    for name in NAMES if args.fs_regdb else ():
        if not (pathlib.Path(args.fs_regdb) / name).is_file():
            print(f"{pathlib.Path(args.fs_regdb) / name}: error: no such file", file=sys.stderr)
            return 1
    image = out / "initramfs.cpio"
    print(f"  CPIO    {image}", flush=True)
    atomic.write_file(image, initramfs(args.userland, args.country, args.fs_regdb))
    cmdline = f"{board.settings['cmdline']} cfg80211.ieee80211_regdom={args.country}"
    log = out / "console.log"
    qemu_run = boot(qemu_command(board, args.kernel, args.dtb or "", cmdline=cmdline,
                                 initrd=image), log, float(board.settings["timeout"]))
    console = [line.rstrip("\r\n") for line in qemu_run.lines]
    for line in console:
        if line.startswith("cfg80211: "):
            print(line)
    iw_lines = iw_output(console)
    for line in iw_lines or ["(no output from iw reg get)"]:
        if line:
            print(f"iw reg get: {line}")
    db = entries.get("regulatory.db")
    if db:
        stored = db.compression if db.compression != "none" else "raw"
        sig = entries.get(NAMES[1])
        print(f"  BUILTIN {db.name}: {db.size} B, {stored} ({db.stored_size} B stored), "
              f"sha256 {db.sha256[:12]}; "
              f"{NAMES[1]}: {f'{sig.size} B' if sig else 'not built in'}")
        served = f"the built-in regulatory.db ({stored})"
    else:
        print(f"  BUILTIN none: regulatory.db is not built in; the guest's /lib/firmware "
              f"has the pair from {args.fs_regdb}")
        served = "the file system's regulatory.db"
    checks = verdict(console, args.country)
    for description, passed, detail in checks:
        print(f"  {'PASS' if passed else 'FAIL'}    {description}"
              + (f"  ({detail})" if detail else ""))
    failed = [d for d, passed, _ in checks if not passed]
    problems = qemu_run.problems + failed
    result = {"regulatory.db": db and {"compression": db.compression, "size": db.size,
                                       "stored_size": db.stored_size, "sha256": db.sha256},
              "cfg80211_lines": [ln for ln in console if ln.startswith("cfg80211: ")],
              "iw_reg_get": iw_lines, "checks": [{"check": d, "passed": p, "detail": x}
                                                 for d, p, x in checks],
              "problems": problems}
    atomic.write_file(out / "result.json", (json.dumps(result, indent=1) + "\n").encode())
    for problem in qemu_run.problems:
        print(f"{log}: error: {problem}", file=sys.stderr)
    outcome = "accepted" if not failed else \
        "refused" if REFUSED in console else "did not take"
    print(f"{board.name}: cfg80211 {outcome} {served}; "
          f"{len(checks) - len(failed)} checks passed, {len(failed)} failed; "
          f"console log: {log}")
    return 1 if problems else 0
