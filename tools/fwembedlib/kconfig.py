"""Checking that a config fragment survived 'make olddefconfig'.

Kconfig silently drops a symbol whose dependencies are not met. A fragment
that asked for it then has no effect, and the failure shows up much later
as missing behaviour. Like kunit.py's validate_config, this compares every
line of the fragments with the resulting .config and names what was lost.
"""

import re

from . import atomic
from .errors import FwembedError

SET_RE = re.compile(r"(CONFIG_[A-Za-z0-9_]+)=(.*)\Z")
UNSET_RE = re.compile(r"# (CONFIG_[A-Za-z0-9_]+) is not set\Z")


def parse_config(path):
    """Return {symbol: (value, line)}; 'is not set' reads as 'n'."""
    values = {}
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as err:
        raise FwembedError(path, f"cannot read config: {err.strerror}") from None
    for lineno, line in enumerate(lines, start=1):
        line = line.strip()
        match = SET_RE.match(line)
        if match:
            values[match.group(1)] = (match.group(2), lineno)
            continue
        match = UNSET_RE.match(line)
        if match:
            values[match.group(1)] = ("n", lineno)
    return values


def dropped_options(fragment, dotconfig):
    """The fragment's lines that the .config does not honour."""
    wanted = parse_config(fragment)
    actual = parse_config(dotconfig)
    dropped = []
    for symbol, (value, lineno) in wanted.items():
        got = actual.get(symbol, ("n", 0))[0]
        if got != value:
            dropped.append(f"{fragment}:{lineno}: {symbol}: wanted {value}, got {got}")
    return dropped


def check_fragments(fragments, dotconfig):
    dropped = [line for frag in fragments for line in dropped_options(frag, dotconfig)]
    if dropped:
        raise FwembedError(dotconfig, "config fragment did not survive olddefconfig; "
                                      "these options were dropped (a dependency may be "
                                      "missing):\n  " + "\n  ".join(dropped))


def symbol_of(line):
    """The CONFIG_ symbol a .config line sets or unsets, or None."""
    line = line.strip()
    match = SET_RE.match(line) or UNSET_RE.match(line)
    return match.group(1) if match else None


def merge_fragments(fragments, dotconfig):
    """Append the fragments to .config, dropping the lines they override.

    Kconfig would take the last value anyway, but warns about every
    reassignment; this keeps 'make olddefconfig' quiet.
    """
    try:
        extra = [open(frag, encoding="utf-8").read().splitlines() for frag in fragments]
        base = open(dotconfig, encoding="utf-8").read().splitlines()
    except OSError as err:
        raise FwembedError(err.filename, f"cannot read config: {err.strerror}") from None
    overridden = {symbol_of(line) for lines in extra for line in lines} - {None}
    merged = [line for line in base if symbol_of(line) not in overridden]
    for lines in extra:
        merged += lines
    atomic.write_file(dotconfig, "\n".join(merged) + "\n")
