"""The kernel patch series: form, checkpatch --strict, and git am on a clean tree."""

import re
import subprocess

import pytest

from conftest import ROOT

PATCHDIR = ROOT / "kernel-patch"
SIGNOFF = "Signed-off-by: fwembed maintainers <maintainers@fwembed.invalid>"


def series():
    names = [l for l in (PATCHDIR / "series").read_text().splitlines()
             if l.strip() and not l.startswith("#")]
    return [PATCHDIR / n for n in names]


def test_series_lists_every_patch_file():
    """series names each .patch file in kernel-patch/ exactly once."""
    assert sorted(p.name for p in series()) == sorted(p.name for p in PATCHDIR.glob("*.patch"))


@pytest.mark.parametrize("patch", series(), ids=lambda p: p.name[:4])
def test_patch_form(patch):
    """Subsystem-prefixed subject, a body that explains, and the sign-off."""
    text = patch.read_text()
    header, _, _ = text.partition("\n---\n")
    subject = re.search(r"^Subject: \[PATCH[^\]]*\] (.*(?:\n .*)*)", header, re.M).group(1)
    assert re.match(r"firmware_loader: [a-z_]+: [a-z]", subject), subject
    body = header.split("\n\n", 1)[1]
    assert len([l for l in body.splitlines() if l.strip()]) >= 5
    assert SIGNOFF in body


@pytest.mark.kernel
def test_checkpatch_strict_is_clean(kernel_tree):
    """checkpatch.pl --strict: 0 errors and 0 warnings on every patch."""
    result = subprocess.run(["perl", "scripts/checkpatch.pl", "--strict",
                             "--show-types", *series()], cwd=kernel_tree,
                            capture_output=True, text=True, check=False)
    totals = re.findall(r"total: (\d+) errors, (\d+) warnings, (\d+) checks", result.stdout)
    assert len(totals) == len(series()), result.stdout + result.stderr
    assert all(t[:2] == ("0", "0") for t in totals), result.stdout
    # Linker-script globs such as '.builtin_fw.*' read to checkpatch as a
    # multiplication; the existing 'KEEP(*(SORT(.ctors.*)))' gets the same
    # CHECK. Any other CHECK is a real finding.
    checks = re.findall(r"^CHECK:.*\n#\d+: FILE: (.*)", result.stdout, re.M)
    assert all(f.startswith("include/asm-generic/vmlinux.lds.h:") for f in checks), \
        result.stdout
    assert sum(int(t[2]) for t in totals) == len(checks)
    assert "ModuleNotFoundError" not in result.stderr, result.stderr
