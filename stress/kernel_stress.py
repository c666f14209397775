"""Boot the sanitizer kernel of "make stress" and judge its console.

    kernel_stress.py --board DIR --kernel IMAGE --dtb DTB --initrd CPIO --log LOG
                     [--threads N] [--cycles N] [--timeout-multiplier X]

The kernel (stress/vexpress-a9: KASAN, kmemleak, lockdep, debug objects,
DEBUG_VM, fault injection) and its initramfs (stress/init.c) come from the
Makefile's stress target. The QEMU command comes from the board folder, with
fw_builtin_stress.threads= and .cycles= added to the kernel command line,
and is printed before it runs; the console is copied to LOG as it arrives.

The run passes only if the console shows no sanitizer or kernel report
(stress/stresslog.py lists what counts), THREADS x CYCLES
successful stress cycles, if the list has lifetime=init entries every one
of them served while the kernel booted and refused once it freed them, a fault injection run in which some requests
failed and every failure was a clean -ENOMEM, and an empty kmemleak report.
The exit status is 0 if it passed, 1 if not.
"""

import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tools"), str(ROOT / "harness")]

# pylint: disable=wrong-import-position
import stresslog  # noqa: E402
from fwembedlib.board import load_board  # noqa: E402
from fwembedlib.errors import FwembedError  # noqa: E402
from fwembedlib.fwlist import read_list  # noqa: E402
from fwharness.qemu import boot, qemu_command  # noqa: E402


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0],
                                     allow_abbrev=False)
    parser.add_argument("--board", required=True, metavar="DIR")
    parser.add_argument("--kernel", required=True)
    parser.add_argument("--dtb", required=True)
    parser.add_argument("--initrd", required=True)
    parser.add_argument("--log", required=True, help="console log file to write")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--cycles", type=int, default=10000, help="cycles per thread")
    parser.add_argument("--timeout-multiplier", type=float, default=1.0)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    try:
        board = load_board(args.board)
        want_init = any(e.lifetime == "init" for e in read_list(board.folder / "firmware.list"))
    except FwembedError as err:
        print(f"kernel_stress: {err}", file=sys.stderr)
        return 1
    cmdline = f"{board.settings['cmdline']} fw_builtin_stress.threads={args.threads} " \
        f"fw_builtin_stress.cycles={args.cycles}"
    command = qemu_command(board, args.kernel, args.dtb, cmdline=cmdline, initrd=args.initrd)
    run = boot(command, args.log, board.timeout * args.timeout_multiplier)

    log = stresslog.parse(run.lines)
    problems = log.problems(args.threads * args.cycles, want_init=want_init) + run.problems
    print(f"stress summary ({board.name}, boot took {run.elapsed:.0f} s, console log {args.log}):")
    for line in stresslog.summary(log, args.threads, args.cycles):
        print(f"  {line}")
    for problem in problems:
        print(f"{args.log}: error: {problem}", file=sys.stderr)
    print(f"stress: {'FAIL' if problems else 'PASS'}", flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
