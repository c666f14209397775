"""fwembed ls, extract and verify on linked images of every architecture.

The versatile board's list is generated, assembled with the kernel's own
<linux/builtin_fw.h> and linked as vmlinux.lds.h places the table, by each
architecture's cross toolchain (asmlink.py); objcopy -O binary makes the
flat image that an Image or a zImage's payload is. The bytes read back
are compared with the source files the list names, and the listing with
the manifest through the harness's parser of the kernel's debugfs listing.
The boards' real kernels are read in test_boards.py.
"""

import gzip
import json
import subprocess

import pytest

from asmlink import BASE, LINKER_SCRIPT, TOOLCHAINS, assemble_and_link
from conftest import ROOT, run_fwembed
from fwembedlib.fwlist import read_list
from fwembedlib.manifest import read as read_manifest
from fwharness import listing

LIST = ROOT / "boards" / "versatile" / "firmware.list"
SOURCES = {e.name: e.path for e in read_list(LIST) if not e.install}


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    """{arch: {"elf": vmlinux-like ELF, "flat": its objcopy -O binary image}},
    and the manifest."""
    work = tmp_path_factory.mktemp("shipped")
    result = run_fwembed("gen", "-q", "--list", LIST, "--out", work / "fw")
    assert result.returncode == 0, result.stderr
    found = {}
    for toolchain in TOOLCHAINS:
        elf = assemble_and_link(work / "fw", work / toolchain.arch, toolchain)
        flat = elf.with_suffix(".bin")
        subprocess.run([toolchain.tool("objcopy"), "-O", "binary", elf, flat], check=True)
        found[toolchain.arch] = {"elf": elf, "flat": flat}
    return found, read_manifest(work / "fw" / "manifest.json")


def ls(image):
    result = run_fwembed("ls", image)
    assert result.returncode == 0, result.stderr
    return result.stdout


def mismatches(stdout, manifest):
    """What the kernel-style listing on stdout gets wrong, by the manifest."""
    lines = [listing.BEGIN, *stdout.splitlines(), listing.END]
    return listing.mismatches(manifest, listing.parse(lines), booted=False)


ARCHES = [t.arch for t in TOOLCHAINS]


@pytest.mark.parametrize("kind", ["elf", "flat"])
@pytest.mark.parametrize("arch", ARCHES)
def test_ls_lists_every_entry_as_the_manifest_says(images, arch, kind):
    """One debugfs-style row per built-in entry, with the manifest's fields."""
    found, manifest = images
    stdout = ls(found[arch][kind])
    assert mismatches(stdout, manifest) == []
    assert stdout.splitlines()[0] == "name\tsize\tstored_size\tcompression\tsha256\tlifetime"
    init = sum(1 for e in manifest if e.lifetime == "init")
    assert init
    assert stdout.splitlines()[-2].startswith(f"# {len(SOURCES) - init} entries, ")
    assert stdout.splitlines()[-1].startswith(f"# {init} init-only entries, ")


@pytest.mark.parametrize("arch", ARCHES)
def test_extract_gives_the_bytes_of_each_source_file(images, arch, tmp_path):
    """Every entry, raw, xz or zstd, extracts to its source file's bytes."""
    found, _ = images
    for n, (name, source) in enumerate(sorted(SOURCES.items())):
        out = tmp_path / f"{n}.bin"
        result = run_fwembed("extract", found[arch]["flat"], name, "--out", out)
        assert result.returncode == 0, result.stderr
        assert out.read_bytes() == source.read_bytes(), name


@pytest.mark.parametrize("arch", ARCHES)
def test_verify_passes_on_an_intact_image(images, arch):
    """verify checks every entry and exits 0."""
    found, _ = images
    result = run_fwembed("verify", found[arch]["elf"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\n  OK      ") == len(SOURCES)
    assert result.stdout.endswith(f"{len(SOURCES)} entries verified: {len(SOURCES)} by "
                                  "SHA-256\n")


def flip_inside(image, data, out):
    """A copy of ``image`` with one bit flipped in the middle of ``data``."""
    raw = bytearray(image.read_bytes())
    assert raw.count(data) == 1
    raw[raw.index(data) + len(data) // 2] ^= 0x10
    out.write_bytes(raw)
    return out


@pytest.mark.parametrize("kind", ["elf", "flat"])
def test_verify_names_the_entry_with_a_flipped_bit(images, kind, tmp_path):
    """One bit flipped inside a raw blob: exit 1, and only that entry is named."""
    found, _ = images
    name = "fwembed/ramp-256.bin"
    bad = flip_inside(found["arm"][kind], SOURCES[name].read_bytes(), tmp_path / "bad")
    result = run_fwembed("verify", bad)
    assert result.returncode == 1
    assert f"  FAIL    {name}\n" in result.stdout
    assert result.stderr.startswith(f"{bad} (")
    assert f"error: 1 of {len(SOURCES)} entries do not match:\n'{name}': SHA-256 " \
        in result.stderr


def test_extract_refuses_a_corrupt_entry(images, tmp_path):
    """extract checks the digest first: a bad entry writes nothing."""
    found, _ = images
    name = "fwembed/random-4k.bin"
    bad = flip_inside(found["arm"]["flat"], SOURCES[name].read_bytes(), tmp_path / "bad")
    result = run_fwembed("extract", bad, name, "--out", tmp_path / "out.bin")
    assert result.returncode == 1
    assert "does not match the table's" in result.stderr
    assert not (tmp_path / "out.bin").exists()


def test_extract_keeps_an_existing_file(images, tmp_path):
    """--out over an existing file fails without --force and leaves it as it was."""
    found, _ = images
    out = tmp_path / "mine.bin"
    out.write_bytes(b"mine")
    result = run_fwembed("extract", found["arm"]["flat"], "fwembed/seven.bin", "--out", out)
    assert result.returncode == 1
    assert result.stderr == f"{out}: error: already exists; give --force to replace it\n"
    assert out.read_bytes() == b"mine"


def test_an_unknown_name_is_an_error(images, tmp_path):
    found, _ = images
    result = run_fwembed("extract", found["arm64"]["elf"], "no/such.bin", "--out",
                         tmp_path / "x")
    assert result.returncode == 1
    assert result.stderr.endswith("error: no built-in firmware named 'no/such.bin'\n")


def wrap_with(command, name):
    """A wrapper that runs 'fwembed COMMAND' for the versatile board."""
    def wrap(flat, tmp_path):
        out = tmp_path / name
        result = run_fwembed(command, "--board", ROOT / "boards" / "versatile", "--kernel",
                             flat, "--out", out)
        assert result.returncode == 0, result.stderr
        return out
    return wrap


def wrap_gzip(flat, tmp_path):
    out = tmp_path / "Image.gz"
    out.write_bytes(gzip.compress(flat.read_bytes(), mtime=0))
    return out


@pytest.mark.parametrize("wrap,layers", [(wrap_with("uimage", "uImage"),
                                          "uImage (none) > flat image"),
                                         (wrap_with("fit", "image.fit"),
                                          "FIT image /images/kernel (none) > flat image"),
                                         (wrap_gzip, "gzip file > flat image")],
                         ids=["uImage", "FIT", "gzip"])
def test_wrapped_images_list_the_same(images, tmp_path, wrap, layers):
    """A uImage, a FIT and a gzip file of the flat image give its listing."""
    found, _ = images
    image = wrap(found["arm"]["flat"], tmp_path)
    assert ls(image) == ls(found["arm"]["flat"])
    result = run_fwembed("verify", image)
    assert result.stdout.startswith(f"# {image} ({layers})\n")


def test_an_image_without_a_table_is_an_error(tmp_path):
    """A file with no locator: one error line, exit 1."""
    image = tmp_path / "Image"
    image.write_bytes(bytes(4096))
    result = run_fwembed("ls", image)
    assert result.returncode == 1
    assert result.stderr == (f"{image} (flat image): error: no fwembed locator: the kernel "
                             "has no table written by fwembed gen\n")


def test_a_locator_inside_firmware_data_is_not_taken(images, tmp_path):
    """An image embedded as firmware carries its own locator; the outer one is used."""
    found, _ = images
    inner = found["arm"]["flat"]
    (tmp_path / "inner.bin").write_bytes(inner.read_bytes())
    (tmp_path / "fw.list").write_text(f"vmlinux.bin {tmp_path / 'inner.bin'}\n")
    assert run_fwembed("gen", "-q", "--list", tmp_path / "fw.list",
                       "--out", tmp_path / "fw").returncode == 0
    elf = assemble_and_link(tmp_path / "fw", tmp_path / "outer", TOOLCHAINS[0])
    flat = elf.with_suffix(".bin")
    subprocess.run([TOOLCHAINS[0].tool("objcopy"), "-O", "binary", elf, flat], check=True)
    assert [line.split("\t")[0] for line in ls(flat).splitlines()[1:-1]] == ["vmlinux.bin"]
    manifest = json.loads((tmp_path / "fw" / "manifest.json").read_text())
    assert manifest["entries"][0]["size"] == inner.stat().st_size
    # Linked with the data before .rodata, the embedded locator comes first
    # in the file: the ELF file's own is still the one taken.
    script = tmp_path / "data-first.lds"
    rodata = "  .rodata : { *(.rodata) *(.rodata.*) }\n"
    script.write_text(LINKER_SCRIPT.replace(rodata, "").replace("/DISCARD/", rodata + "  /DISCARD/"))
    data_first = tmp_path / "data-first.elf"
    subprocess.run([TOOLCHAINS[0].tool("ld"), "-T", script, "-o", data_first,
                    *sorted((tmp_path / "outer" / "obj0").glob("*.o"))], check=True)
    raw = data_first.read_bytes()
    assert raw.index(b"fwembed locator\0") < raw.rindex(b"fwembed locator\0")
    assert [line.split("\t")[0] for line in ls(data_first).splitlines()[1:-1]] == \
        ["vmlinux.bin"]


def test_a_relocatable_arm64_kernel_is_read_through_its_relocations(images, tmp_path):
    """Linked as arm64 links a RELOCATABLE kernel (-pie --no-apply-dynamic-relocs),
    the table's pointers are zero in the file: ls reads them from .rela.dyn,
    in the ELF file and by scanning the flat image."""
    found, manifest = images
    arm64 = next(t for t in TOOLCHAINS if t.arch == "arm64")
    objects = sorted((found["arm64"]["elf"].parent / "obj0").glob("*.o"))
    script = tmp_path / "pie.lds"
    script.write_text(LINKER_SCRIPT.replace(
        "/DISCARD/", ".rela.dyn : ALIGN(8) { *(.rela .rela*) }\n  /DISCARD/"))
    elf, flat = tmp_path / "vmlinux", tmp_path / "Image"
    subprocess.run([arm64.tool("ld"), "-pie", "-z", "notext", "--no-apply-dynamic-relocs",
                    "-T", script, "-o", elf, *objects], check=True)
    subprocess.run([arm64.tool("objcopy"), "-O", "binary", elf, flat], check=True)
    symbols = dict(line.split()[::-2] for line in subprocess.run(
        [arm64.tool("nm"), elf], capture_output=True, text=True, check=True).stdout.splitlines())
    first_entry = int(symbols["__start_builtin_fw"], 16) - BASE
    assert flat.read_bytes()[first_entry:first_entry + 16] == bytes(16)
    for image in (elf, flat):
        assert mismatches(ls(image), manifest) == []
        assert run_fwembed("verify", image).returncode == 0


def test_a_truncated_image_is_an_error(images, tmp_path):
    """A gzip file cut short: the message says so, rather than listing what decoded."""
    found, _ = images
    whole = gzip.compress(found["arm"]["flat"].read_bytes(), mtime=0)
    cut = tmp_path / "Image.gz"
    cut.write_bytes(whole[:len(whole) - 100])
    result = run_fwembed("ls", cut)
    assert result.returncode == 1
    assert result.stderr == f"{cut}: error: its gzip payload ends early: the file is truncated\n"


def test_a_truncated_zimage_is_an_error(tmp_path):
    """A zImage cut inside its compressed kernel names the stream that ends early."""
    zimage = bytearray(0x40)
    zimage[0x24:0x28] = (0x016F2818).to_bytes(4, "little")
    stream = gzip.compress(bytes(range(256)) * 4096, mtime=0)
    cut = tmp_path / "zImage"
    cut.write_bytes(bytes(zimage) + stream[:len(stream) // 2])
    result = run_fwembed("ls", cut)
    assert result.returncode == 1
    assert result.stderr == (f"{cut}: error: the gzip stream at 0x40 of the ARM zImage ends "
                             "early: the file is truncated\n")
