"""Running a board's QEMU command: filled in, printed, timed, logged.

The command comes from the board folder's qemu setting and is printed in
full before it runs, so it can be pasted and run again. The console is
copied to the log file as it arrives. The guest exits by itself (panic=-1
or a reboot, with QEMU's -no-reboot); a run that takes longer than its
timeout is stopped.
"""

import dataclasses
import shlex
import subprocess
import threading
import time


def qemu_command(board, kernel, dtb, cmdline=None, initrd=None, disk=None):
    """The board's QEMU argument list, with the placeholders filled in.

    ``-initrd {initrd}`` is dropped when there is no initramfs to pass.
    """
    values = {"kernel": str(kernel), "dtb": str(dtb), "initrd": str(initrd or ""),
              "cmdline": cmdline or board.settings["cmdline"],
              "uboot": board.settings.get("uboot", ""), "disk": str(disk or "")}
    args = shlex.split(board.settings["qemu"])
    if not initrd and "{initrd}" in args:
        at = args.index("{initrd}")
        del args[at - 1:at + 1]
    return [arg.format(**values) for arg in args]


def run_qemu(command, log_path, timeout):
    """Run QEMU, teeing its output to ``log_path``; return (lines, timed_out, status)."""
    lines = []
    with open(log_path, "w", encoding="utf-8", errors="replace") as log:
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace")

        def pump():
            for line in proc.stdout:
                log.write(line)
                log.flush()
                lines.append(line)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        try:
            proc.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            timed_out = True
        reader.join(timeout=5)
    return lines, timed_out, proc.returncode


@dataclasses.dataclass
class Run:
    """One QEMU run: its console lines, how long it took, and what went wrong
    with QEMU itself (a timeout, an exit status), for the caller's problems."""

    lines: list
    elapsed: float
    problems: list


def boot(command, log_path, timeout):
    """Print ``command``, run it as run_qemu() does, and time it."""
    print(f"  QEMU    {shlex.join(command)}", flush=True)
    start = time.monotonic()
    lines, timed_out, status = run_qemu(command, log_path, timeout)
    problems = []
    if timed_out:
        problems.append(f"QEMU did not exit within {timeout:g} s and was stopped")
    elif status != 0:
        problems.append(f"QEMU exited with status {status}")
    return Run(lines, time.monotonic() - start, problems)
