"""fwembed: embed firmware files in a Linux kernel image.

commands:
  gen     turn a firmware list or a directory into assembly sources, a
          manifest and a make dependency file:
              fwembed gen (--list FILE | --dir DIR) --out OUTDIR
                          [--compress none|xz|zstd|auto]
  install copy the entries marked install=yes (every entry with --all) to
          DEST/NAME, mode 0644, each atomically:
              fwembed install (--list FILE | --dir DIR) --dest DEST [--all]
  report  one row per manifest entry (size, stored size, ratio, compression,
          digest, license, built in or installed), totals, and the growth of
          vmlinux over a build without firmware, read from the ELF files:
              fwembed report --manifest JSON [--vmlinux ELF --base-vmlinux ELF]
                             [--json OUT]
  import-config
          turn a kernel config's CONFIG_EXTRA_FIRMWARE and
          CONFIG_EXTRA_FIRMWARE_DIR into a firmware list (no silent
          fallback to /lib/firmware):
              fwembed import-config KCONFIG [--srctree DIR] [--out LIST [--force]]
  config  merge config fragments into a .config, or check that they
          survived olddefconfig:
              fwembed config [--merge] --fragment FRAG [--fragment FRAG ...] --config .config
  cpio    pack the files below a folder as /lib/firmware of a test
          initramfs, with the self-test's list of them:
              fwembed cpio --dir DIR --out CPIO
  uimage  wrap a kernel image as a legacy U-Boot uImage, loaded at the
          board's kernel_load:
              fwembed uimage --board DIR --kernel IMAGE --out UIMAGE
  fit     write a FIT source (OUT.its: kernel, device tree, initramfs, each
          with a sha256 hash) and build the FIT with mkimage:
              fwembed fit --board DIR --kernel IMAGE [--dtb DTB] [--initrd CPIO] --out FIT
  dumpdtb write the device tree QEMU makes for the board's machine:
              fwembed dumpdtb --board DIR --out DTB [--kernel IMAGE] [--initrd CPIO]
  uboot-disk
          make the boot disk of a U-Boot board: an MBR disk with one FAT
          partition holding boot.scr and the FIT (mtools, no root needed):
              fwembed uboot-disk --board DIR --fit FIT --out DISK
  board   check a board folder and print its settings:
              fwembed board DIR
  boot    boot a kernel in QEMU as the board folder says, and check every
          firmware entry the self-test reports against the manifest:
              fwembed boot --board DIR --kernel IMAGE [--dtb DTB] [--initrd CPIO]
                           [--disk DISK] --manifest JSON --log LOG

Exit status: 0 on success, 1 on bad input or a failed check (the message
reads "path[:line]: error: ..."), 2 on usage errors. --debug shows a
traceback for unexpected failures.
"""

import argparse
import os
import sys

from .compress import METHODS
from .errors import FwembedError, UsageError


class Parser(argparse.ArgumentParser):
    """argparse that exits with status 2 and the fwembed prefix."""

    def error(self, message):
        self.print_usage(sys.stderr)
        raise UsageError(message)


def build_parser():
    parser = Parser(prog="fwembed", description=__doc__,
                    formatter_class=argparse.RawDescriptionHelpFormatter,
                    allow_abbrev=False)
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    gen = sub.add_parser("gen", help="generate the firmware table", allow_abbrev=False)
    src = gen.add_mutually_exclusive_group(required=True)
    src.add_argument("--list", metavar="FILE", help="firmware list (see README)")
    src.add_argument("--dir", metavar="DIR", help="embed every file below DIR")
    gen.add_argument("--out", metavar="OUTDIR", required=True, help="output directory")
    gen.add_argument("-q", "--quiet", action="store_true", help="do not list updated files")
    gen.add_argument("--compress", choices=METHODS, default="none",
                     help="how to store entries whose list sets no compress= (default: none)")
    gen.add_argument("--test-corrupt-digest", metavar="NAME",
                     help="tests only: give entry NAME a wrong digest in the table")

    inst = sub.add_parser("install", help="install firmware files to a directory",
                          allow_abbrev=False)
    src = inst.add_mutually_exclusive_group(required=True)
    src.add_argument("--list", metavar="FILE", help="firmware list (see README)")
    src.add_argument("--dir", metavar="DIR", help="entries: every file below DIR")
    inst.add_argument("--dest", metavar="DEST", required=True, help="destination directory")
    inst.add_argument("--all", action="store_true",
                      help="install every entry, not only those marked install=yes")

    rep = sub.add_parser("report", help="report sizes and licenses", allow_abbrev=False)
    rep.add_argument("--manifest", required=True, help="manifest.json written by gen")
    rep.add_argument("--vmlinux", metavar="ELF", help="vmlinux built with the firmware")
    rep.add_argument("--base-vmlinux", metavar="ELF",
                     help="the same kernel built without firmware")
    rep.add_argument("--json", metavar="OUT", help="also write the report as JSON")

    imp = sub.add_parser("import-config", help="firmware list from CONFIG_EXTRA_FIRMWARE",
                         allow_abbrev=False)
    imp.add_argument("kconfig", metavar="KCONFIG", help="a kernel .config")
    imp.add_argument("--srctree", metavar="DIR",
                     help="kernel source tree, for a relative CONFIG_EXTRA_FIRMWARE_DIR")
    imp.add_argument("--out", metavar="LIST", help="write the list here instead of stdout")
    imp.add_argument("--force", action="store_true", help="replace an existing --out file")

    config = sub.add_parser("config", help="check a fragment survived", allow_abbrev=False)
    config.add_argument("--fragment", metavar="FRAG", action="append", required=True)
    config.add_argument("--config", metavar="DOTCONFIG", required=True)
    config.add_argument("--merge", action="store_true",
                        help="append the fragments to DOTCONFIG instead of checking")

    cpio = sub.add_parser("cpio", help="pack /lib/firmware for a test initramfs",
                          allow_abbrev=False)
    cpio.add_argument("--dir", metavar="DIR", required=True, help="the files to pack")
    cpio.add_argument("--out", metavar="CPIO", required=True, help="the archive to write")

    uimage = sub.add_parser("uimage", help="make a legacy uImage", allow_abbrev=False)
    uimage.add_argument("--board", metavar="DIR", required=True)
    uimage.add_argument("--kernel", metavar="IMAGE", required=True)
    uimage.add_argument("--out", metavar="UIMAGE", required=True)

    fit = sub.add_parser("fit", help="make a FIT image", allow_abbrev=False)
    fit.add_argument("--board", metavar="DIR", required=True)
    fit.add_argument("--kernel", metavar="IMAGE", required=True)
    fit.add_argument("--dtb", metavar="DTB")
    fit.add_argument("--initrd", metavar="CPIO")
    fit.add_argument("--out", metavar="FIT", required=True)

    dumpdtb = sub.add_parser("dumpdtb", help="the device tree of a QEMU machine",
                             allow_abbrev=False)
    dumpdtb.add_argument("--board", metavar="DIR", required=True)
    dumpdtb.add_argument("--kernel", metavar="IMAGE")
    dumpdtb.add_argument("--initrd", metavar="CPIO")
    dumpdtb.add_argument("--out", metavar="DTB", required=True)

    disk = sub.add_parser("uboot-disk", help="make a U-Boot boot disk", allow_abbrev=False)
    disk.add_argument("--board", metavar="DIR", required=True)
    disk.add_argument("--fit", metavar="FIT", required=True)
    disk.add_argument("--out", metavar="DISK", required=True)

    board = sub.add_parser("board", help="check a board folder", allow_abbrev=False)
    board.add_argument("folder", metavar="DIR")

    boot = sub.add_parser("boot", help="boot in QEMU and verify", allow_abbrev=False)
    boot.add_argument("--board", metavar="DIR", required=True)
    boot.add_argument("--kernel", required=True)
    boot.add_argument("--dtb")
    boot.add_argument("--initrd", help="test initramfs; its debugfs listing is checked")
    boot.add_argument("--disk", help="boot disk of a U-Boot board; U-Boot's FIT hash "
                                     "checks are verified")
    boot.add_argument("--manifest", required=True)
    boot.add_argument("--log", required=True, help="console log file to write")
    boot.add_argument("--timeout-multiplier", type=float, default=1.0)
    boot.add_argument("--qemu-extra", default="", metavar="ARGS",
                      help="more QEMU arguments, appended to the board's command")
    return parser


def report_update(path, tag="UPD"):
    print(f"  {tag:<8}{path}", flush=True)


def below_cwd(path):
    """``path`` relative to the current directory if it is below it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def run(args):
    if args.command == "gen":
        from .gen import generate
        from .outdir import OutDir
        generate(OutDir(args.out, None if args.quiet else report_update),
                 list_path=args.list, directory=args.dir, compress=args.compress,
                 corrupt_digest=args.test_corrupt_digest)
        return 0
    if args.command == "install":
        from .install import install
        count = install(args.dest, list_path=args.list, directory=args.dir,
                        install_all=args.all, report=lambda path: report_update(below_cwd(path), "INSTALL"))
        if count == 0:
            print(f"fwembed install: no entry of {args.list or args.dir} is marked "
                  "install=yes; nothing to install (--all installs every entry)")
        return 0
    if args.command == "report":
        from .report import report
        if bool(args.vmlinux) != bool(args.base_vmlinux):
            raise UsageError("report: --vmlinux and --base-vmlinux go together")
        for line in report(args.manifest, args.vmlinux, args.base_vmlinux, args.json):
            print(line)
        return 0
    if args.command == "import-config":
        from .importconfig import import_config
        if args.force and not args.out:
            raise UsageError("import-config: --force goes with --out")
        text = import_config(args.kconfig, srctree=args.srctree, out=args.out, force=args.force)
        if args.out is None:
            print(text, end="")
        return 0
    if args.command == "config":
        from .kconfig import check_fragments, merge_fragments
        if args.merge:
            merge_fragments(args.fragment, args.config)
        else:
            check_fragments(args.fragment, args.config)
        return 0
    if args.command == "cpio":
        from .cpio import write_archive
        write_archive(args.dir, args.out)
        return 0
    if args.command in ("uimage", "fit", "dumpdtb", "uboot-disk"):
        from . import uboot
        from .board import load_board
        board = load_board(args.board)
        if args.command == "uimage":
            uboot.make_uimage(board, args.kernel, args.out)
        elif args.command == "fit":
            uboot.make_fit(board, args.kernel, args.out, dtb=args.dtb, ramdisk=args.initrd)
        elif args.command == "dumpdtb":
            uboot.dump_qemu_dtb(board, args.out, kernel=args.kernel, initrd=args.initrd)
        else:
            uboot.make_disk(board, args.fit, args.out)
        return 0
    if args.command == "board":
        from .board import load_board
        board = load_board(args.folder)
        print(board.describe(), end="")
        return 0
    if args.command == "boot":
        from .boot import boot_and_verify
        return boot_and_verify(args)
    raise UsageError("a command is required (gen, install, report, import-config, config, "
                     "cpio, uimage, fit, dumpdtb, uboot-disk, board, boot)")


def main(argv=None):
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else argv
    debug = "--debug" in argv
    try:
        return run(parser.parse_args(argv))
    except UsageError as err:
        print(f"fwembed: {err}", file=sys.stderr)
        return 2
    except FwembedError as err:
        print(err, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("fwembed: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # pylint: disable=broad-except
        if debug:
            raise
        print(f"fwembed: internal error: {err!r} (run with --debug for a traceback)",
              file=sys.stderr)
        return 3
