"""The kernel patch series: form, checkpatch --strict, kernel-doc, and git am on a clean tree."""

import re
import subprocess

import pytest

from conftest import ROOT

PATCHDIR = ROOT / "kernel-patch"
SIGNOFF = "Signed-off-by: fwembed maintainers <maintainers@fwembed.invalid>"
# The subsystem prefixes the series uses, as the files' maintainers write them.
SUBJECT_RE = re.compile(r"(firmware_loader(: builtin)?|Documentation: firmware|selftests: firmware): [a-z]")
# The upstream commits that the series' fixes name, as "git log --oneline"
# shows them in Linus Torvalds' tree. This machine has no kernel history to
# look them up in, so checkpatch's UNKNOWN_COMMIT_ID check cannot run here;
# this table is what the Fixes: tags are checked against instead.
UPSTREAM_COMMITS = {
    "f7a07f7b9603": "firmware_loader: fix pre-allocated buf built-in firmware use",
    "59cdb23ca2df": "firmware: Add request_partial_firmware_into_buf()",
}


def series():
    names = [l for l in (PATCHDIR / "series").read_text().splitlines()
             if l.strip() and not l.startswith("#")]
    return [PATCHDIR / n for n in names]


def header(patch):
    return patch.read_text().partition("\n---\n")[0]


def subject(patch):
    return re.search(r"^Subject: \[PATCH[^\]]*\] (.*(?:\n .*)*)", header(patch),
                     re.M).group(1).replace("\n ", " ")


def test_series_lists_every_patch_file():
    """series names each numbered .patch file in kernel-patch/ exactly once."""
    patches = [p.name for p in PATCHDIR.glob("*.patch") if not p.name.startswith("0000-")]
    assert sorted(p.name for p in series()) == sorted(patches)


@pytest.mark.parametrize("patch", series(), ids=lambda p: p.name[:4])
def test_patch_form(patch):
    """Subsystem-prefixed subject, a body that explains, and the sign-off."""
    assert SUBJECT_RE.match(subject(patch)), subject(patch)
    body = header(patch).split("\n\n", 1)[1]
    assert len([l for l in body.splitlines() if l.strip()]) >= 5
    assert SIGNOFF in body


def test_fixes_come_first_and_name_upstream_commits():
    """Fixes to upstream behaviour lead the series; each Fixes: tag names a
    known upstream commit by its 12-character id and exact subject."""
    fixes = [bool(re.search(r"^Fixes: ", header(p), re.M)) for p in series()]
    assert fixes[0] and fixes == sorted(fixes, reverse=True), fixes
    for patch in series():
        for commit, title in re.findall(r'^Fixes: ([0-9a-f]+) \("(.*)"\)$', header(patch), re.M):
            assert UPSTREAM_COMMITS.get(commit) == title, (patch.name, commit)


def test_test_only_patches_come_last():
    """Production patches first; the self-tests, benchmark and stress test last."""
    kinds = ["test" if re.search(r"self-test|benchmark|stress test|KUnit|^selftests: ", subject(p))
             else "production" for p in series()]
    assert kinds == sorted(kinds), list(zip(kinds, map(subject, series())))


def test_cover_letter_summarises_every_patch():
    """0000-cover-letter.patch names every patch of the series by its subject."""
    cover = (PATCHDIR / "0000-cover-letter.patch").read_text()
    assert re.search(r"^Subject: \[PATCH 0/\d+\] ", cover, re.M)
    words = " ".join(cover.split())
    for patch in series():
        assert subject(patch) in words, patch.name


@pytest.mark.kernel
def test_checkpatch_strict_is_clean(kernel_tree):
    """checkpatch.pl --strict: 0 errors, 0 warnings and 0 checks on every patch.

    Only UNKNOWN_COMMIT_ID is left out: it needs the kernel's git history,
    which this machine has not; test_fixes_come_first_and_name_upstream_commits
    checks the Fixes: tags instead.
    """
    patches = [PATCHDIR / "0000-cover-letter.patch", *series()]
    result = subprocess.run(["perl", "scripts/checkpatch.pl", "--strict", "--show-types",
                             "--ignore", "UNKNOWN_COMMIT_ID", *patches], cwd=kernel_tree,
                            capture_output=True, text=True, check=False)
    totals = re.findall(r"total: (\d+) errors, (\d+) warnings, (\d+) checks", result.stdout)
    assert len(totals) == len(patches), result.stdout + result.stderr
    assert all(t == ("0", "0", "0") for t in totals), result.stdout
    assert "ModuleNotFoundError" not in result.stderr, result.stderr


def touched_sources(kernel_tree):
    """The C files and headers that the series adds or changes."""
    files = set()
    for patch in series():
        files.update(re.findall(r"^\+\+\+ b/(\S+\.[ch])$", patch.read_text(), re.M))
    return sorted(f for f in files if (kernel_tree / f).exists())


@pytest.mark.kernel
def test_kernel_doc_is_clean(kernel_tree):
    """scripts/kernel-doc -none finds nothing to warn about in any touched file."""
    files = touched_sources(kernel_tree)
    assert "drivers/base/firmware_loader/builtin/main.c" in files
    result = subprocess.run(["perl", "scripts/kernel-doc", "-none", *files], cwd=kernel_tree,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0 and result.stderr == "", result.stderr
