"""The firmware loader's own digests: an oracle independent of fwembed's code.

Since Linux 6.4, CONFIG_FW_LOADER_DEBUG makes _request_firmware() hash
every firmware it hands out, with the crypto API's SHA-256, and print

    firmware_class: <device>: Loaded FW: NAME, sha256: HEX

through dev_dbg(), which dynamic debug enables for the loader's module
(firmware_class) with the boot parameters this module gives. Built-in,
decompressed and filesystem firmware all pass through there, so each entry
the self-test received must appear with the manifest's digest. Requests
for part of an image print the digest of that part: a name may also have
lines with other digests, which are counted but not judged.
"""

import re

from fwembedlib.kconfig import parse_config

# The boot parameters that enable the loader's dev_dbg() lines and let
# their level (KERN_DEBUG) through to the console.
DYNDBG_PARAM = "firmware_class.dyndbg=+p loglevel=8"
LOADED_RE = re.compile(r"Loaded FW: (.*), sha256: ([0-9a-f]{64})\s*$")
COMMAND_LINE_RE = re.compile(r"Kernel command line: (.*)$")


def enabled(kernel_config):
    """Whether the kernel of this .config prints the loader's digests once
    DYNDBG_PARAM is given: CONFIG_FW_LOADER_DEBUG with dynamic debug."""
    if not kernel_config:
        return False
    values = parse_config(kernel_config)
    return all(values.get(option, ("n",))[0] == "y"
               for option in ("CONFIG_FW_LOADER_DEBUG", "CONFIG_DYNAMIC_DEBUG"))


def on_command_line(lines):
    """Whether the command line the kernel printed holds DYNDBG_PARAM: on a
    board whose boot loader gives the command line, the kernel's own
    CONFIG_CMDLINE_EXTEND can add it."""
    for line in lines:
        match = COMMAND_LINE_RE.search(line)
        if match:
            return set(DYNDBG_PARAM.split()) <= set(match.group(1).split())
    return False


def parse(lines):
    """{name: [sha256, ...]} of the "Loaded FW" lines, in console order."""
    loaded = {}
    for line in lines:
        match = LOADED_RE.search(line)
        if match:
            loaded.setdefault(match.group(1), []).append(match.group(2))
    return loaded


def check(entries, loaded):
    """One (entry, why) per entry: why is "" when the loader printed the
    entry's digest, or says what it printed instead."""
    out = []
    for entry in entries:
        digests = loaded.get(entry.name, [])
        if entry.sha256 in digests:
            out.append((entry, ""))
        elif digests:
            out.append((entry, f"loader hashed {len(digests)} load(s) to "
                               f"{', '.join(d[:12] for d in digests)}, "
                               f"manifest says {entry.sha256[:12]}"))
        else:
            out.append((entry, "no 'Loaded FW' line from the loader"))
    return out
