"""The one error class of fwembed: a message tied to the input it concerns."""

import sys


class FwembedError(Exception):
    """Bad input: printed as ``path[:line]: error: message``, exit status 1."""

    def __init__(self, where, message):
        super().__init__(message)
        self.where = str(where)
        self.message = message

    def __str__(self):
        return f"{self.where}: error: {self.message}"


class UsageError(Exception):
    """A command line that fwembed cannot act on: exit status 2."""


def warn(where, message):
    """Say ``where: warning: message`` on stderr; the run goes on."""
    print(f"{where}: warning: {message}", file=sys.stderr, flush=True)
