"""Board folders: everything fwembed knows about a board, as data.

A board folder holds three files:

  board.cfg      KEY = VALUE settings (below); '#' starts a comment line
  kernel.config  a kernel config fragment, merged over the defconfig
  firmware.list  the firmware list that 'make run' embeds

board.cfg keys (all required unless marked optional):

  description    one line about the board
  arch           the kernel's ARCH
  cross_compile  the CROSS_COMPILE prefix
  defconfig      the kernel defconfig the fragment is merged over
  image          the kernel image to boot, relative to the kernel build dir
  dtb            the device tree blob, relative to the kernel build dir;
                 'qemu' when QEMU makes the machine's tree itself (a FIT
                 then holds the tree QEMU dumps); 'none' for no tree at all
  qemu           the QEMU command; {kernel}, {dtb}, {initrd} and {cmdline}
                 are replaced by the image, the dtb, the test initramfs and
                 the command line; on a U-Boot board, {uboot} and {disk}
                 by the U-Boot binary and the boot disk image
  cmdline        the kernel command line
  timeout        seconds the boot may take before it is stopped
  packages       (optional) Debian packages the board needs
  kernel_load    (optional) load and entry address of the kernel in U-Boot
                 images ('make uimage', 'make fit'), such as 0x00008000
  boot           (optional) 'kernel' (the default): QEMU loads the kernel
                 itself; 'uboot': QEMU runs U-Boot, which boots the FIT
                 from the boot disk ('make run' builds both)
  uboot          (with boot = uboot) the U-Boot binary QEMU runs
"""

import dataclasses
import pathlib
import re
import shlex

from .errors import FwembedError

FILES = ("board.cfg", "kernel.config", "firmware.list")
REQUIRED = ("description", "arch", "cross_compile", "defconfig", "image", "dtb",
            "qemu", "cmdline", "timeout")
OPTIONAL = ("packages", "kernel_load", "boot", "uboot")
BOOT_METHODS = ("kernel", "uboot")
PLACEHOLDERS = ("kernel", "dtb", "initrd", "cmdline", "uboot", "disk")
LINE_RE = re.compile(r"([a-z_]+)\s*=\s*(.*?)\s*\Z")


@dataclasses.dataclass
class Board:
    """A parsed, checked board folder."""

    folder: pathlib.Path
    settings: dict

    @property
    def name(self):
        return self.folder.name

    @property
    def boot(self):
        return self.settings.get("boot", "kernel")

    @property
    def timeout(self):
        return float(self.settings["timeout"])

    def describe(self):
        return "".join(f"{key} = {self.settings[key]}\n" for key in REQUIRED + OPTIONAL
                       if key in self.settings)


def parse_cfg(path):
    settings = {}
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as err:
        raise FwembedError(path, f"cannot read board settings: {err}") from None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = LINE_RE.match(line.strip())
        if not match:
            raise FwembedError(f"{path}:{lineno}", "expected KEY = VALUE")
        key, value = match.groups()
        if key not in REQUIRED + OPTIONAL:
            raise FwembedError(f"{path}:{lineno}", f"unknown board setting {key!r}")
        if key in settings:
            raise FwembedError(f"{path}:{lineno}", f"board setting {key!r} given twice")
        settings[key] = value
    return settings


def load_board(folder):
    """Read and check a board folder; errors name the folder and what is missing."""
    folder = pathlib.Path(folder)
    if not folder.is_dir():
        raise FwembedError(folder, "board folder not found")
    missing = [name for name in FILES if not (folder / name).is_file()]
    if missing:
        raise FwembedError(folder, "board folder lacks " + ", ".join(missing))
    cfg = folder / "board.cfg"
    settings = parse_cfg(cfg)
    absent = [key for key in REQUIRED if not settings.get(key)]
    if absent:
        raise FwembedError(cfg, "board settings lack " + ", ".join(absent))
    try:
        if float(settings["timeout"]) <= 0:
            raise ValueError
    except ValueError:
        raise FwembedError(cfg, f"timeout {settings['timeout']!r} is not a positive number") \
            from None
    try:
        args = shlex.split(settings["qemu"])
        for arg in args:
            arg.format(**dict.fromkeys(PLACEHOLDERS, ""))
    except (ValueError, KeyError, IndexError) as err:
        raise FwembedError(cfg, f"qemu command cannot be used: {err}") from None
    check_boot_method(cfg, settings)
    return Board(folder=folder.resolve(), settings=settings)


def check_boot_method(cfg, settings):
    """The settings a boot method needs, and the QEMU placeholders it fills."""
    boot = settings.get("boot", "kernel")
    if boot not in BOOT_METHODS:
        raise FwembedError(cfg, f"boot {boot!r} is not one of " + ", ".join(BOOT_METHODS))
    if "kernel_load" in settings:
        try:
            int(settings["kernel_load"], 0)
        except ValueError:
            raise FwembedError(cfg, f"kernel_load {settings['kernel_load']!r} is not an "
                                    "address such as 0x00008000") from None
    needed = {"kernel": ["{kernel}"], "uboot": ["{uboot}", "{disk}"]}[boot]
    if boot == "uboot":
        absent = [key for key in ("uboot", "kernel_load") if not settings.get(key)]
        if absent:
            raise FwembedError(cfg, "board settings lack " + ", ".join(absent) +
                               ", which boot = uboot needs")
    missing = [p for p in needed if p not in settings["qemu"]]
    if missing:
        raise FwembedError(cfg, f"qemu command lacks {', '.join(missing)}, which "
                                f"boot = {boot} needs")
