"""fwembed-harness boot: boot a board's kernel in QEMU and verify every entry.

The QEMU command comes from the board folder (qemu.py). A boot that takes
longer than the board's timeout times the multiplier is stopped and counts
as failed. Each check prints one PASS or FAIL line, then a summary line.

A kernel with CONFIG_FW_LOADER_DEBUG (Linux 6.4 and later) boots with the
loader's dev_dbg() lines enabled, and every entry the self-test received
must also have the manifest's digest in the loader's own "Loaded FW" line
(fwdebug.py), when the command line the kernel prints holds the dynamic
debug parameters: QEMU's -append gives them, or, on a board whose command
line is U-Boot's boot script's, the kernel's own CONFIG_CMDLINE.
"""

import shlex
import sys

from fwembedlib.board import load_board
from fwembedlib.errors import FwembedError
from fwembedlib.manifest import read as read_manifest

from . import extrafw, fwdebug, ktap, listing, ubootlog
from .qemu import boot, qemu_command
from .verify import Verdict, builtin_entries, format_verdict, verdicts


def loader_digest_verdicts(manifest, results, lines):
    """One verdict per entry the self-test received whole and right: the
    loader's own FW_LOADER_DEBUG digest of it must be the manifest's."""
    received = {v.name for v in results if v.passed}
    failed = {v.name for v in results if not v.passed}
    entries = {e.name: e for e in manifest if e.name in received - failed}
    return [Verdict(f"[FW_LOADER_DEBUG] {entry.name}", not why, entry.size, entry.sha256, why)
            for entry, why in fwdebug.check(entries.values(), fwdebug.parse(lines))]


def boot_and_verify(args):
    board = load_board(args.board)
    manifest = read_manifest(args.manifest)
    disk = getattr(args, "disk", None)
    if board.boot == "uboot" and not disk:
        raise FwembedError(board.folder, "this board boots through U-Boot: "
                                         "give its boot disk (--disk)")
    loader_digests = fwdebug.enabled(args.kernel_config)
    cmdline = f"{board.settings['cmdline']} {fwdebug.DYNDBG_PARAM}" \
        if loader_digests and board.boot != "uboot" else None
    command = qemu_command(board, args.kernel, args.dtb or "", cmdline=cmdline,
                           initrd=args.initrd, disk=disk)
    command += shlex.split(args.qemu_extra)
    run = boot(command, args.log, board.timeout * args.timeout_multiplier)
    lines = run.lines
    if loader_digests and not fwdebug.on_command_line(lines):
        print(f"{board.name}: FW_LOADER_DEBUG digests not checked: the kernel's command "
              f"line lacks {fwdebug.DYNDBG_PARAM}")
        loader_digests = False

    log = ktap.parse(lines)
    # CONFIG_EXTRA_FIRMWARE's files are expected as manifest entries are.
    extra = extrafw.expected_entries(args.kernel_config, args.kernel_tree) \
        if args.kernel_config else []
    results = verdicts(manifest + extra, log, set(args.extra_firmware)) if log.found else []
    if board.boot == "uboot":
        verified, detail = ubootlog.describe(lines)
        results.insert(0, Verdict("[check] uboot_verified_fit_sha256", verified, None, "",
                                  detail))
    if loader_digests and log.found:
        results += loader_digest_verdicts(manifest + extra, results, lines)
    if args.initrd:
        problems_found = listing.mismatches(manifest, listing.parse(lines))
        results.append(Verdict("[check] debugfs_listing_matches_manifest", not problems_found,
                               None, "", "; ".join(problems_found[:3])))
        for entry, why in listing.gone_after_boot(manifest, lines):
            results.append(Verdict(f"[after boot] {entry.name}", not why, entry.size,
                                   entry.sha256, why))
    for verdict in results:
        print(format_verdict(verdict))
    problems = log.problems() + run.problems
    for problem in problems:
        print(f"{args.log}: error: {problem}", file=sys.stderr)
    passed = sum(v.passed for v in results)
    failed = len(results) - passed
    installed = len(manifest) - len(builtin_entries(manifest))
    counts = f"{len(manifest) - installed} firmware entries" + \
        (f" and {installed} installed" if installed else "")
    print(f"{board.name}: {counts}, boot took {run.elapsed:.1f} s; "
          f"{passed} checks passed, {failed} failed; console log: {args.log}")
    return 0 if results and not failed and not problems else 1
