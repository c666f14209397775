"""Comparing what the kernel delivered with what the manifest promised."""

import dataclasses
import json

from .errors import FwembedError


@dataclasses.dataclass
class Verdict:
    name: str
    passed: bool
    size: int
    sha256: str
    why: str = ""


def load_manifest(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)["entries"]
    except (OSError, ValueError, KeyError) as err:
        raise FwembedError(path, f"cannot read manifest: {err}") from None


def builtin_entries(manifest_entries):
    """The entries built into the image: not those marked "builtin": false,
    which are installed to the filesystem and unknown to the self-test."""
    return [e for e in manifest_entries if e.get("builtin", True)]


def verdicts(manifest_entries, log):
    """One Verdict per built-in manifest entry, then one per extra entry or check."""
    manifest_entries = builtin_entries(manifest_entries)
    reported = {}
    for result in log.entries:
        reported.setdefault(result.name, result)
    out = []
    for want in manifest_entries:
        got = reported.pop(want["name"], None)
        why = ""
        if got is None:
            why = "not reported by the kernel"
        elif not got.ok:
            why = f"request failed with error {got.error}" if got.error is not None \
                else "request failed"
        elif got.size != want["size"]:
            why = f"size {got.size}, manifest says {want['size']}"
        elif got.sha256 != want["sha256"]:
            why = f"sha256 {got.sha256[:12]}, manifest says {want['sha256'][:12]}"
        out.append(Verdict(want["name"], not why, want["size"], want["sha256"], why))
    for name, got in reported.items():
        # Built in by other means (CONFIG_EXTRA_FIRMWARE): it must load.
        out.append(Verdict(name, got.ok, got.size, got.sha256 or "",
                           "" if got.ok else "request failed"))
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
