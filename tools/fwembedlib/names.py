"""Rules for firmware names.

A name is what drivers pass to request_firmware(). It may hold any printable
ASCII character except '"' and '\\', so spaces, commas, '+', '@' and '='
are fine. It is a relative path: '/' separates components, and no component
may be empty, '.' or '..'. A name is at most MAX_NAME_LEN bytes long, which
keeps every name usable as a path below /lib/firmware.
"""

MAX_NAME_LEN = 255
FORBIDDEN = '"\\'


def name_problem(name):
    """Return why ``name`` is not a valid firmware name, or None."""
    if name == "":
        return "empty firmware name"
    for ch in name:
        if not " " <= ch <= "~":
            return f"firmware name {name!r} has control or non-ASCII character {ch!r}"
        if ch in FORBIDDEN:
            return f"firmware name {name!r} has forbidden character {ch!r}"
    if len(name) > MAX_NAME_LEN:
        return f"firmware name is {len(name)} bytes long; the limit is {MAX_NAME_LEN}"
    if name.startswith("/"):
        return f"firmware name {name!r} starts with '/'; names are relative"
    for part in name.split("/"):
        if part == "":
            return f"firmware name {name!r} has an empty path component"
        if part in (".", ".."):
            return f"firmware name {name!r} has a {part!r} path component"
    return None
