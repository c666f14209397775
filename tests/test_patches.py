"""The kernel patch series, one per kernel: form, checkpatch --strict and kernel-doc
against the kernel's own tree."""

import re
import subprocess

import pytest

from conftest import DEFAULT_KERNEL, KERNELS, ROOT, prepare_tree
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
    "c92316bf8e94": "test_firmware: add batched firmware tests",
}


def patchdir(kernel=DEFAULT_KERNEL):
    return ROOT / "kernel-patch" / kernel


def series(kernel=DEFAULT_KERNEL):
    """The patches of one kernel's series, in order."""
    names = [l for l in (patchdir(kernel) / "series").read_text().splitlines()
             if l.strip() and not l.startswith("#")]
    return [patchdir(kernel) / n for n in names]


def paths_in_series(kernel=DEFAULT_KERNEL):
    """Every path that a patch of ``kernel``'s series changes, adds or
    removes, from the patches' diff headers."""
    paths = set()
    for patch in series(kernel):
        for old, new in re.findall(r"^diff --git a/(\S+) b/(\S+)$", patch.read_text(), re.M):
            paths.update((old, new))
    return sorted(paths)


# (kernel, patch) for every patch of every series.
EVERY_PATCH = [(kernel, patch) for kernel in KERNELS for patch in series(kernel)]


def header(patch):
    return patch.read_text().partition("\n---\n")[0]


def subject(patch):
    return re.search(r"^Subject: \[PATCH[^\]]*\] (.*(?:\n .*)*)", header(patch),
                     re.M).group(1).replace("\n ", " ")


def test_both_lts_kernels_have_a_series():
    """kernel-patch/ holds a series for 6.1 and for 6.12, and nothing else."""
    assert KERNELS == ["6.1", "6.12"]
    assert sorted(p.name for p in (ROOT / "kernel-patch").iterdir()) == KERNELS


@pytest.mark.parametrize("kernel", KERNELS)
def test_series_lists_every_patch_file(kernel):
    """series names each numbered .patch file of its folder exactly once."""
    patches = [p.name for p in patchdir(kernel).glob("*.patch")
               if not p.name.startswith("0000-")]
    assert sorted(p.name for p in series(kernel)) == sorted(patches)


def test_series_have_the_same_patches():
    """The two series are ports of one another: the same patches, in the same
    order, with the same subjects."""
    assert [subject(p) for p in series("6.1")] == [subject(p) for p in series("6.12")]


@pytest.mark.parametrize("kernel,patch", EVERY_PATCH, ids=lambda p: getattr(p, "name", p)[:4])
def test_patch_form(kernel, patch):
    """Subsystem-prefixed subject, a body that explains, and the sign-off."""
    assert SUBJECT_RE.match(subject(patch)), subject(patch)
    body = header(patch).split("\n\n", 1)[1]
    assert len([l for l in body.splitlines() if l.strip()]) >= 5
    assert SIGNOFF in body


@pytest.mark.parametrize("kernel", KERNELS)
def test_fixes_come_first_and_name_upstream_commits(kernel):
    """Fixes to upstream behaviour lead the series; each Fixes: tag names a
    known upstream commit by its 12-character id and exact subject."""
    fixes = [bool(re.search(r"^Fixes: ", header(p), re.M)) for p in series(kernel)]
    assert fixes[0] and fixes == sorted(fixes, reverse=True), fixes
    for patch in series(kernel):
        for commit, title in re.findall(r'^Fixes: ([0-9a-f]+) \("(.*)"\)$', header(patch), re.M):
            assert UPSTREAM_COMMITS.get(commit) == title, (patch.name, commit)


@pytest.mark.parametrize("kernel", KERNELS)
def test_test_only_patches_come_last(kernel):
    """Fixes first (a fix to a selftest too), then production patches; the
    self-tests, benchmark and stress test last."""
    def kind(patch):
        if re.search(r"^Fixes: ", header(patch), re.M):
            return "fix"
        if re.search(r"self-test|benchmark|stress test|KUnit|^selftests: ", subject(patch)):
            return "test"
        return "production"
    kinds = [kind(p) for p in series(kernel)]
    # The three kinds sort in the order the series must have.
    assert kinds == sorted(kinds), list(zip(kinds, map(subject, series(kernel))))
    assert {"fix", "production", "test"} == set(kinds)


@pytest.mark.parametrize("kernel", KERNELS)
def test_cover_letter_summarises_every_patch(kernel):
    """0000-cover-letter.patch names every patch of the series by its subject,
    and the kernel it applies to."""
    cover = (patchdir(kernel) / "0000-cover-letter.patch").read_text()
    assert re.search(r"^Subject: \[PATCH 0/\d+\] ", cover, re.M)
    words = " ".join(cover.split())
    assert f"linux-source-{kernel} " in words
    for patch in series(kernel):
        assert subject(patch) in words, patch.name


@pytest.mark.kernel
@pytest.mark.parametrize("kernel", KERNELS)
def test_checkpatch_strict_is_clean(kernel):
    """checkpatch.pl --strict: 0 errors, 0 warnings and 0 checks on every patch.

    Only UNKNOWN_COMMIT_ID is left out: it needs the kernel's git history,
    which this machine has not; test_fixes_come_first_and_name_upstream_commits
    checks the Fixes: tags instead.
    """
    patches = [patchdir(kernel) / "0000-cover-letter.patch", *series(kernel)]
    result = subprocess.run(["perl", "scripts/checkpatch.pl", "--strict", "--show-types",
                             "--ignore", "UNKNOWN_COMMIT_ID", *patches], cwd=prepare_tree(kernel),
                            capture_output=True, text=True, check=False)
    totals = re.findall(r"total: (\d+) errors, (\d+) warnings, (\d+) checks", result.stdout)
    assert len(totals) == len(patches), result.stdout + result.stderr
    assert all(t == ("0", "0", "0") for t in totals), result.stdout
    assert "ModuleNotFoundError" not in result.stderr, result.stderr


def touched_sources(kernel, tree):
    """The C files and headers that the series adds or changes."""
    return [f for f in paths_in_series(kernel) if f.endswith((".c", ".h")) and (tree / f).exists()]


@pytest.mark.kernel
@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_doc_is_clean(kernel):
    """scripts/kernel-doc -none finds nothing to warn about in any touched file."""
    kernel_tree = prepare_tree(kernel)
    files = touched_sources(kernel, kernel_tree)
    assert "drivers/base/firmware_loader/builtin/main.c" in files
    result = subprocess.run(["perl", "scripts/kernel-doc", "-none", *files], cwd=kernel_tree,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0 and result.stderr == "", result.stderr
