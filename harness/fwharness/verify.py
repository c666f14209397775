"""Comparing what the kernel delivered with what the manifest promised."""

import dataclasses


@dataclasses.dataclass
class Verdict:
    name: str
    passed: bool
    size: int
    sha256: str
    why: str = ""


def builtin_entries(manifest_entries):
    """The entries built into the image: not those marked "builtin": false,
    which are installed to the filesystem and unknown to the self-test."""
    return [e for e in manifest_entries if e.builtin]


def expected_entries(manifest_entries, log):
    """What the kernel must report: the built-in entries, and the installed
    ones too when the boot's filesystem listed them for the self-test."""
    if log.listed_count:
        return list(manifest_entries)
    return builtin_entries(manifest_entries)


def compare(want, got):
    """Why ``got`` (one request's result) is not what the manifest promised."""
    if not got.ok:
        return f"request failed with error {got.error}" if got.error is not None \
            else "request failed"
    if got.size != want.size:
        return f"size {got.size}, manifest says {want.size}"
    if got.sha256 != want.sha256:
        return f"sha256 {got.sha256[:12]}, manifest says {want.sha256[:12]}"
    return ""


def verdicts(manifest_entries, log, extra_firmware=()):
    """One Verdict per request of each expected manifest entry, then one per
    extra entry or check.

    A name may be requested twice: once from the built-in table and once
    from the filesystem's list. Both must deliver the manifest's data,
    since built-in firmware wins over a filesystem copy of the same name.

    A name the kernel reports that the manifest does not know fails (a
    stale table, or one from another build), unless it is one of
    ``extra_firmware``: built in by other means (CONFIG_EXTRA_FIRMWARE),
    which must load.
    """
    reported = {}
    for result in log.entries:
        reported.setdefault(result.name, []).append(result)
    out = []
    for want in expected_entries(manifest_entries, log):
        results = reported.pop(want.name, [])
        if not results:
            out.append(Verdict(want.name, False, want.size, want.sha256,
                               "not reported by the kernel"))
        for got in results:
            why = compare(want, got)
            out.append(Verdict(want.name, not why, want.size, want.sha256, why))
    for name, results in reported.items():
        for got in results:
            if name not in extra_firmware:
                why = "not in the manifest: a stale or foreign table entry"
            else:
                why = "" if got.ok else "request failed"
            out.append(Verdict(name, not why, got.size, got.sha256 or "", why))
    for check in log.checks:
        out.append(Verdict(f"[check] {check.description}", check.ok, None, "",
                           "" if check.ok else "check failed"))
    return out


def format_verdict(v):
    status = "PASS" if v.passed else "FAIL"
    size = f"{v.size:>9} B" if v.size is not None else " " * 11
    sha = v.sha256[:12] if v.sha256 else " " * 12
    line = f"  {status}  {size}  {sha}  {v.name}"
    return line + (f"  ({v.why})" if v.why else "")
