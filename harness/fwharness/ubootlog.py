"""Reading U-Boot's console: did bootm check the FIT's hashes?

When bootm loads an image from a FIT it prints a "## Loading NAME from FIT
Image" header, then "Verifying Hash Integrity ... sha256+ OK" once the
image's sha256 hash node matched its data (a mismatch prints "sha256
error!" and "Bad hash value" and stops the boot). A boot counts as checked
only if every image the FIT's configuration uses was verified so.
"""

import re

LOADING_RE = re.compile(r"^## Loading (\w+) from FIT Image at ([0-9a-fA-F]+)")
VERIFIED_RE = re.compile(r"^\s*Verifying Hash Integrity \.\.\. ((?:\w+\+ )+)OK\s*$")
BAD_RE = re.compile(r"Bad hash value|\w+ error!|ERROR: can't get kernel image")
STARTING = "Starting kernel ..."


def fit_hash_checks(lines):
    """({image: [algorithms verified]}, [problems], started) from U-Boot's lines."""
    verified = {}
    problems = []
    current = None
    started = False
    for line in lines:
        line = line.rstrip("\r\n")
        match = LOADING_RE.match(line)
        if match:
            current = match.group(1)
            verified.setdefault(current, [])
            continue
        match = VERIFIED_RE.match(line)
        if match and current:
            verified[current] += [algo.rstrip("+") for algo in match.group(1).split()]
            continue
        if BAD_RE.search(line):
            problems.append(line.strip())
        if STARTING in line:
            started = True
            current = None
    return verified, problems, started


def describe(lines, wanted=("kernel", "ramdisk", "fdt")):
    """(passed, detail) for the check that U-Boot verified every FIT image."""
    verified, problems, started = fit_hash_checks(lines)
    missing = [name for name in wanted if "sha256" not in verified.get(name, [])]
    if problems:
        return False, "; ".join(problems[:3])
    if missing:
        return False, "U-Boot did not verify the sha256 of " + ", ".join(missing)
    if not started:
        return False, "U-Boot did not start the kernel"
    return True, ""
