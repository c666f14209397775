"""fwembed: embed firmware files in a Linux kernel image.

commands:
  gen     turn a firmware list or a directory into assembly sources, a
          manifest and a make dependency file:
              fwembed gen (--list FILE | --dir DIR) --out OUTDIR
                          [--compress none|xz|zstd|auto] [-j N] [--dry-run]
                          [--include GLOB ...] [--exclude GLOB ...]
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
  needs   the firmware a built kernel's drivers declare (MODULE_FIRMWARE),
          each marked present or missing in a firmware directory; with
          --write-list, a firmware list of those present:
              fwembed needs KBUILD_DIR --firmware-dir DIR [--write-list LIST [--force]]
  ls      list the built-in firmware of a kernel image (vmlinux, Image,
          zImage, bzImage, uImage or FIT) as the kernel's debugfs listing does:
              fwembed ls IMAGE
  extract write one entry's data, decoded, after checking its digest:
              fwembed extract IMAGE NAME --out FILE [--force]
  verify  decode every entry of a kernel image and check its size and
          SHA-256; exit status 1 names each entry that does not match:
              fwembed verify IMAGE
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
  uboot-disk
          make the boot disk of a U-Boot board: an MBR disk (sfdisk) with one
          FAT partition holding boot.scr and the FIT (mtools, no root needed):
              fwembed uboot-disk --board DIR --fit FIT --out DISK
  board   check a board folder and print its settings, or write them as a
          make include:
              fwembed board DIR [--kernel VERSION] [--make-vars FILE]

Booting boards in QEMU and checking what the kernel delivered is the test
harness's job: harness/fwembed-harness --help.

Exit status: 0 on success, 1 on bad input or a failed check (the message
reads "path[:line]: error: ..."), 2 on usage errors, 3 on an internal
error, 128 + the signal's number when interrupted (130 for Ctrl-C, 143 for
SIGTERM, 129 for SIGHUP). --debug shows a traceback for internal errors.
"""

import argparse
import os
import signal
import sys
import time

from . import __version__, atomic
from .board import load_board
from .compress import METHODS
from .cpio import write_archive
from .errors import FwembedError, UsageError
from .gen import generate
from .importconfig import import_config
from .install import install
from .kconfig import check_fragments, merge_fragments
from .needs import needs
from .report import report
from .shipped import extract, ls, verify
from .uboot import make_disk, make_fit, make_uimage


class Parser(argparse.ArgumentParser):
    """argparse without abbreviations, whose usage errors exit with status 2."""

    def __init__(self, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(**kwargs)

    def error(self, message):
        self.print_usage(sys.stderr)
        raise UsageError(message)


def command_parser(prog, doc):
    """The top-level parser of a command whose --help is ``doc``."""
    parser = Parser(prog=prog, description=doc,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser,
                                required=True)
    return parser, sub


def report_update(path, tag="UPD"):
    print(f"  {tag:<8}{path}", flush=True)


def below_cwd(path):
    """``path`` relative to the current directory if it is below it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def add_input(parser, what):
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--list", metavar="FILE", help="firmware list (docs/firmware-list.md)")
    src.add_argument("--dir", metavar="DIR", help=f"{what}: every file below DIR")


def add_gen(sub):
    gen = sub.add_parser("gen", help="generate the firmware table")
    add_input(gen, "embed")
    gen.add_argument("--out", metavar="OUTDIR", required=True, help="output directory")
    gen.add_argument("-q", "--quiet", action="store_true", help="do not list updated files")
    gen.add_argument("--compress", choices=METHODS, default="none",
                     help="how to store entries whose list sets no compress= (default: none)")
    gen.add_argument("--dry-run", action="store_true",
                     help="print each built-in name with its size, stored size, encoding "
                          "and why; leave OUTDIR as it is")
    gen.add_argument("--include", action="append", default=[], metavar="GLOB",
                     help="with --dir: take only files whose name matches GLOB (repeatable)")
    gen.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                     help="with --dir: leave out files whose name matches GLOB (repeatable)")
    gen.add_argument("-j", "--jobs", type=positive, metavar="N",
                     help="copy and compress on N threads, each with its own encoder "
                          "(default: one per CPU)")
    # For the harness's test of the kernel's digest check only (docs/testing.md).
    gen.add_argument("--test-corrupt-digest", metavar="NAME", help=argparse.SUPPRESS)
    gen.set_defaults(func=run_gen)


def positive(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return value


class ProgressLine:
    """"  GEN     N/TOTAL files hashed, K being copied or compressed" on a
    terminal's standard error, updated in
    place, once the run has taken more than a second; nothing when standard
    error is not a terminal (a build log)."""

    def __init__(self, stream=sys.stderr):
        self.stream = stream
        self.start = self.last = time.monotonic()
        self.shown = False
        self.live = stream.isatty()

    def __call__(self, done, total, storing=0):
        now = time.monotonic()
        if self.live and now - self.start >= 1 and now - self.last >= 0.2:
            self.stream.write(f"\r  GEN     {done}/{total} files hashed, {storing} "
                              "being copied or compressed\033[K")
            self.stream.flush()
            self.shown, self.last = True, now

    def end(self):
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()


def print_lines(lines):
    print("\n".join(lines), flush=True)


def run_gen(args):
    if args.out == "":
        raise UsageError("gen: --out: an empty path names no directory")
    if (args.include or args.exclude) and not args.dir:
        raise UsageError("gen: --include and --exclude select files of --dir")
    progress = ProgressLine()
    try:
        generate(args.out, list_path=args.list, directory=args.dir, compress=args.compress,
                 corrupt_digest=args.test_corrupt_digest, jobs=args.jobs,
                 report=None if args.quiet or args.dry_run else report_update,
                 dry_run=print_lines if args.dry_run else None, include=args.include,
                 exclude=args.exclude, progress=progress)
    finally:
        progress.end()



def add_install(sub):
    inst = sub.add_parser("install", help="install firmware files to a directory")
    add_input(inst, "entries")
    inst.add_argument("--dest", metavar="DEST", required=True, help="destination directory")
    inst.add_argument("--all", action="store_true",
                      help="install every entry, not only those marked install=yes")
    # How the note on an empty selection names --all: make passes
    # INSTALL_FW_ALL=1, and '' for no hint at all.
    inst.add_argument("--all-hint", default="--all", help=argparse.SUPPRESS)
    inst.set_defaults(func=run_install)


def run_install(args):
    count = install(args.dest, list_path=args.list, directory=args.dir,
                    install_all=args.all,
                    report=lambda path: report_update(below_cwd(path), "INSTALL"))
    if count == 0:
        hint = f" ({args.all_hint} installs every entry)" if args.all_hint else ""
        print(f"fwembed install: no entry of {args.list or args.dir} is marked "
              f"install=yes; nothing to install{hint}")


def add_report(sub):
    rep = sub.add_parser("report", help="report sizes and licenses")
    rep.add_argument("--manifest", required=True, help="manifest.json written by gen")
    rep.add_argument("--vmlinux", metavar="ELF", help="vmlinux built with the firmware")
    rep.add_argument("--base-vmlinux", metavar="ELF",
                     help="the same kernel built without firmware")
    rep.add_argument("--json", metavar="OUT", help="also write the report as JSON")
    rep.set_defaults(func=run_report)


def run_report(args):
    if bool(args.vmlinux) != bool(args.base_vmlinux):
        raise UsageError("report: --vmlinux and --base-vmlinux go together")
    for line in report(args.manifest, args.vmlinux, args.base_vmlinux, args.json):
        print(line)


def add_import_config(sub):
    imp = sub.add_parser("import-config", help="firmware list from CONFIG_EXTRA_FIRMWARE")
    imp.add_argument("kconfig", metavar="KCONFIG", help="a kernel .config")
    imp.add_argument("--srctree", metavar="DIR",
                     help="kernel source tree, for a relative CONFIG_EXTRA_FIRMWARE_DIR")
    imp.add_argument("--out", metavar="LIST", help="write the list here instead of stdout")
    imp.add_argument("--force", action="store_true", help="replace an existing --out file")
    imp.set_defaults(func=run_import_config)


def run_import_config(args):
    if args.force and not args.out:
        raise UsageError("import-config: --force goes with --out")
    text = import_config(args.kconfig, srctree=args.srctree, out=args.out, force=args.force)
    if args.out is None:
        print(text, end="")


def add_needs(sub):
    need = sub.add_parser("needs", help="the firmware a kernel's drivers declare")
    need.add_argument("build", metavar="KBUILD_DIR",
                      help="a built kernel's output directory (O=)")
    need.add_argument("--firmware-dir", metavar="DIR", required=True,
                      help="where to look for the firmware, as /lib/firmware")
    need.add_argument("--write-list", metavar="LIST",
                      help="write a firmware list of the names found")
    need.add_argument("--force", action="store_true", help="replace an existing LIST")
    need.set_defaults(func=run_needs)


def run_needs(args):
    if args.force and not args.write_list:
        raise UsageError("needs: --force goes with --write-list")
    print_lines(needs(args.build, args.firmware_dir, out=args.write_list, force=args.force))


def add_shipped(sub):
    lister = sub.add_parser("ls", help="list the built-in firmware of a kernel image")
    lister.add_argument("image", metavar="IMAGE")
    lister.set_defaults(func=lambda args: print_lines(ls(args.image)))

    ext = sub.add_parser("extract", help="write one built-in entry's data")
    ext.add_argument("image", metavar="IMAGE")
    ext.add_argument("name", metavar="NAME", help="the firmware name, as drivers request it")
    ext.add_argument("--out", metavar="FILE", required=True)
    ext.add_argument("--force", action="store_true", help="replace an existing FILE")
    ext.set_defaults(func=run_extract)

    check = sub.add_parser("verify", help="check every built-in entry of a kernel image")
    check.add_argument("image", metavar="IMAGE")
    check.set_defaults(func=lambda args: print_lines(verify(args.image)))


def run_extract(args):
    size = extract(args.image, args.name, args.out, force=args.force)
    print(f"  EXTRACT {below_cwd(args.out)} ({size} bytes)")


def add_config(sub):
    config = sub.add_parser("config", help="merge fragments, or check they survived")
    config.add_argument("--fragment", metavar="FRAG", action="append", required=True)
    config.add_argument("--config", metavar="DOTCONFIG", required=True)
    config.add_argument("--merge", action="store_true",
                        help="append the fragments to DOTCONFIG instead of checking")
    config.set_defaults(func=run_config)


def run_config(args):
    if args.merge:
        merge_fragments(args.fragment, args.config)
    else:
        check_fragments(args.fragment, args.config)


def add_cpio(sub):
    cpio = sub.add_parser("cpio", help="pack /lib/firmware for a test initramfs")
    cpio.add_argument("--dir", metavar="DIR", required=True, help="the files to pack")
    cpio.add_argument("--out", metavar="CPIO", required=True, help="the archive to write")
    cpio.set_defaults(func=run_cpio)


def run_cpio(args):
    write_archive(args.dir, args.out)


def add_images(sub):
    uimage = sub.add_parser("uimage", help="make a legacy uImage")
    uimage.add_argument("--board", metavar="DIR", required=True)
    uimage.add_argument("--kernel", metavar="IMAGE", required=True)
    uimage.add_argument("--out", metavar="UIMAGE", required=True)
    uimage.set_defaults(func=run_uimage)

    fit = sub.add_parser("fit", help="make a FIT image")
    fit.add_argument("--board", metavar="DIR", required=True)
    fit.add_argument("--kernel", metavar="IMAGE", required=True)
    fit.add_argument("--dtb", metavar="DTB")
    fit.add_argument("--initrd", metavar="CPIO")
    fit.add_argument("--out", metavar="FIT", required=True)
    fit.set_defaults(func=run_fit)

    disk = sub.add_parser("uboot-disk", help="make a U-Boot boot disk")
    disk.add_argument("--board", metavar="DIR", required=True)
    disk.add_argument("--fit", metavar="FIT", required=True)
    disk.add_argument("--out", metavar="DISK", required=True)
    disk.set_defaults(func=run_uboot_disk)


def run_uimage(args):
    make_uimage(load_board(args.board), args.kernel, args.out)


def run_fit(args):
    make_fit(load_board(args.board), args.kernel, args.out, dtb=args.dtb, ramdisk=args.initrd)


def run_uboot_disk(args):
    make_disk(load_board(args.board), args.fit, args.out)


def add_board(sub):
    board = sub.add_parser("board", help="check a board folder")
    board.add_argument("folder", metavar="DIR")
    board.add_argument("--kernel", metavar="VERSION",
                       help="the settings for this kernel version, KEY[VERSION] "
                            "lines replacing KEY")
    board.add_argument("--make-vars", metavar="FILE",
                       help="write the settings as a make include (BOARD_<KEY> := value) "
                            "instead of printing them")
    board.set_defaults(func=run_board)


def run_board(args):
    board = load_board(args.folder, args.kernel)
    if args.make_vars:
        atomic.write_file(args.make_vars, board.make_vars())
    else:
        print(board.describe(), end="")


COMMANDS = (add_gen, add_install, add_report, add_import_config, add_needs, add_shipped,
            add_config, add_cpio, add_images, add_board)


def build_parser():
    parser, sub = command_parser("fwembed", __doc__)
    for add in COMMANDS:
        add(sub)
    return parser


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP, handled as Ctrl-C is: outputs are cleaned up."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def interrupt(signum, _frame):
    raise Interrupted(signum)


def main(argv=None, parser=None, prog="fwembed"):
    """Parse ``argv``, run the command's handler; return the exit status."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, interrupt)
    parser = parser or build_parser()
    argv = sys.argv[1:] if argv is None else argv
    debug = "--debug" in argv
    try:
        args = parser.parse_args(argv)
        return args.func(args) or 0
    except UsageError as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return 2
    except FwembedError as err:
        print(err, file=sys.stderr)
        return 1
    except BrokenPipeError:
        # A reader that stopped early ('fwembed ls IMAGE | head'), as if the
        # SIGPIPE that Python ignores had ended the process.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except KeyboardInterrupt as err:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 128 + getattr(err, "signum", signal.SIGINT)
    except Exception as err:  # pylint: disable=broad-except
        if debug:
            raise
        print(f"{prog}: internal error: {err!r} (run with --debug for a traceback)",
              file=sys.stderr)
        return 3
