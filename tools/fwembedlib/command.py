"""Running an outside tool: the command is printed first, so that it can be
pasted and run again, and a failure names the tool and shows its output."""

import shlex
import subprocess

from .errors import FwembedError


def run(command, what, stdin=None):
    """Run ``command``; return its standard output. ``stdin`` is text to feed it."""
    print(f"  RUN     {shlex.join(command)}", flush=True)
    try:
        result = subprocess.run(command, input=stdin, capture_output=True, text=True,
                                check=False)
    except OSError as err:
        raise FwembedError(command[0], f"cannot run ({what}): {err.strerror}") from None
    if result.returncode != 0:
        raise FwembedError(command[0], f"{what} failed with status {result.returncode}:\n"
                           + (result.stderr or result.stdout).strip())
    return result.stdout
