"""fwembed-harness: boot fwembed's boards in QEMU and judge what the kernel delivered.

commands:
  boot    boot a kernel in QEMU as the board folder says, and check every
          firmware entry the self-test reports against the manifest:
              fwembed-harness boot --board DIR --kernel IMAGE [--dtb DTB]
                                   [--initrd CPIO] [--disk DISK]
                                   --manifest JSON --log LOG
                                   [--kernel-config CONFIG --kernel-tree DIR]
                                   [--extra-firmware NAME ...]
  kselftest
          run the kernel's firmware selftests on a kernel with the series and
          on one without, and fw_builtin.sh on the first; compare the two:
              fwembed-harness kselftest --board DIR --userland DIR
                  --patched-kernel IMAGE --patched-tree DIR [--patched-dtb DTB]
                  --unpatched-kernel IMAGE --unpatched-tree DIR [--unpatched-dtb DTB]
                  --manifest JSON --out DIR
  cfg80211
          boot a kernel with regulatory.db built in, and check that cfg80211
          accepts its signature and takes a country from it (Debian's iw):
              fwembed-harness cfg80211 --board DIR --userland DIR
                  --kernel IMAGE [--dtb DTB] --manifest JSON --out DIR
                  [--country CC] [--fs-regdb DIR]
  dumpdtb write the device tree QEMU makes for the board's machine:
              fwembed-harness dumpdtb --board DIR --out DTB [--kernel IMAGE]
                                      [--initrd CPIO]

'make run' calls boot and dumpdtb, 'make kselftest' and 'make cfg80211' the
others; docs/testing.md tells the rest.

Exit status: 0 if every check passed, 1 if one failed or on bad input (the
message reads "path[:line]: error: ..."), 2 on usage errors, 3 on an
internal error (--debug shows its traceback).
"""

from fwembedlib.board import load_board
from fwembedlib.cli import command_parser, main as run_main

from .boot import boot_and_verify
from .cfg80211 import country_code, run as run_cfg80211
from .dtb import dump_qemu_dtb
from .kselftest import run as run_kselftest


def add_boot(sub):
    boot = sub.add_parser("boot", help="boot in QEMU and verify")
    boot.add_argument("--board", metavar="DIR", required=True)
    boot.add_argument("--kernel", required=True)
    boot.add_argument("--dtb")
    boot.add_argument("--initrd", help="test initramfs; its debugfs listing is checked")
    boot.add_argument("--disk", help="boot disk of a U-Boot board; U-Boot's FIT hash "
                                     "checks are verified")
    boot.add_argument("--manifest", required=True)
    boot.add_argument("--log", required=True, help="console log file to write")
    boot.add_argument("--kernel-config", metavar="CONFIG",
                      help="the kernel's .config: every file its CONFIG_EXTRA_FIRMWARE "
                           "builds in must be delivered byte for byte")
    boot.add_argument("--kernel-tree", metavar="DIR", default=".",
                      help="the kernel source tree, which a relative "
                           "CONFIG_EXTRA_FIRMWARE_DIR is taken from")
    boot.add_argument("--extra-firmware", metavar="NAME", action="append", default=[],
                      help="a name built in by CONFIG_EXTRA_FIRMWARE, which the manifest "
                           "does not list, and which must load; any other unknown name "
                           "fails")
    boot.add_argument("--timeout-multiplier", type=float, default=1.0)
    boot.add_argument("--qemu-extra", default="", metavar="ARGS",
                      help="more QEMU arguments, appended to the board's command")
    boot.set_defaults(func=boot_and_verify)


def add_dumpdtb(sub):
    dumpdtb = sub.add_parser("dumpdtb", help="the device tree of a QEMU machine")
    dumpdtb.add_argument("--board", metavar="DIR", required=True)
    dumpdtb.add_argument("--kernel", metavar="IMAGE")
    dumpdtb.add_argument("--initrd", metavar="CPIO")
    dumpdtb.add_argument("--out", metavar="DTB", required=True)
    dumpdtb.set_defaults(func=run_dumpdtb)


def run_dumpdtb(args):
    dump_qemu_dtb(load_board(args.board), args.out, kernel=args.kernel, initrd=args.initrd)


def add_kselftest(sub):
    ks = sub.add_parser("kselftest", help="the kernel's firmware selftests, "
                                          "patched against unpatched")
    ks.add_argument("--board", metavar="DIR", required=True)
    ks.add_argument("--userland", metavar="DIR", required=True,
                    help="the guest's Debian packages, unpacked (scripts/fetch-debs)")
    for which in ("patched", "unpatched"):
        ks.add_argument(f"--{which}-kernel", metavar="IMAGE", required=True)
        ks.add_argument(f"--{which}-tree", metavar="DIR", required=True,
                        help="the kernel tree whose selftests the guest runs")
        ks.add_argument(f"--{which}-dtb", metavar="DTB")
    ks.add_argument("--manifest", required=True,
                    help="fw_builtin.sh checks every built-in entry against it")
    ks.add_argument("--out", metavar="DIR", required=True,
                    help="where the initramfs, console logs and results.json go")
    ks.add_argument("--timeout", type=float, default=1500,
                    help="seconds each guest may take (default 1500: both scripts' "
                         "600 s guards, and the boot)")
    ks.set_defaults(func=run_kselftest)


def add_cfg80211(sub):
    cfg = sub.add_parser("cfg80211", help="cfg80211 and the built-in regulatory database")
    cfg.add_argument("--board", metavar="DIR", required=True)
    cfg.add_argument("--userland", metavar="DIR", required=True,
                     help="the guest's Debian packages, unpacked (scripts/fetch-debs)")
    cfg.add_argument("--kernel", metavar="IMAGE", required=True)
    cfg.add_argument("--dtb", metavar="DTB")
    cfg.add_argument("--manifest", required=True,
                     help="must list regulatory.db and regulatory.db.p7s as built in")
    cfg.add_argument("--out", metavar="DIR", required=True,
                     help="where the initramfs, console.log and result.json go")
    cfg.add_argument("--country", default="DE", type=country_code,
                     help="the country the kernel must take from the database (default DE)")
    cfg.add_argument("--fs-regdb", metavar="DIR",
                     help="put DIR's regulatory.db and regulatory.db.p7s in the guest's "
                          "/lib/firmware instead of decoys")
    cfg.set_defaults(func=run_cfg80211)


def build_parser():
    parser, sub = command_parser("fwembed-harness", __doc__)
    for add in (add_boot, add_kselftest, add_cfg80211, add_dumpdtb):
        add(sub)
    return parser


def main(argv=None):
    return run_main(argv, build_parser(), "fwembed-harness")
