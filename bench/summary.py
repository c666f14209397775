"""The one table of make bench, gathered from each part's JSON results.

Each row is one figure: fwembed's value, the value it is compared with and
what that is, and their ratio, written so that above 1.0x means fwembed
costs less. The kind column says how far a figure carries to other
machines:

host    absolute, measured on this host (wall or CPU seconds, peak memory):
        machine- and load-dependent; only the ratio carries over
guest   guest instructions or guest time under QEMU -icount: the same on
        any host, but specific to this kernel, compiler and emulated CPU
bytes   exact for this toolchain and these inputs, on any host
count   exact: objects assembled, links done
"""

import re

import benchlib

KINDS = ("host", "guest", "bytes", "count")


def upstream(r):
    """The kernel whose own route a part's results compare with: the kernel
    they were measured on (results from before it was recorded are 6.1's)."""
    return r.get("kernel", benchlib.DEFAULT_KERNEL)


def row(part, figure, unit, fwembed, against=None, other=None, kind="bytes", ratio=None):
    if ratio is None and isinstance(other, (int, float)) and isinstance(fwembed, (int, float)) \
            and fwembed:
        ratio = other / fwembed
    return {"part": part, "figure": figure, "unit": unit, "fwembed": fwembed,
            "against": against, "other": other, "kind": kind,
            "ratio": round(ratio, 2) if ratio is not None else None}


def build_rows(r):
    old, new, one = r["linux_6_1"]["total"], r["fwembed"]["total"], r["one_file"]
    what = f"{r['files']} files, {r['bytes'] >> 20} MiB"
    route = f"{upstream(r)} .gen.S"
    rows = [row("build", f"{what}: wall", "s", new["wall_s"], route, old["wall_s"], "host"),
            row("build", f"{what}: CPU", "s", new["cpu_s"], route, old["cpu_s"], "host"),
            row("build", f"{what}: peak RSS", "MiB", round(new["peak_rss_kib"] / 1024, 1),
                route, round(old["peak_rss_kib"] / 1024, 1), "host")]
    if "xz" in r:
        first, noop = r["xz"]["first"], r["xz"]["no_op"]
        rows += [row("build", f"{what}, COMPRESS=xz: make fw peak RSS", "MiB",
                     round(first["peak_rss_kib"] / 1024, 1), "target", 128, "host"),
                 row("build", f"{what}, COMPRESS=xz: no-op make fw" +
                     (" (ran gen)" if noop["ran_gen"] else ""), "s", noop["wall_s"],
                     "target", 5, "host")]
    big, small = one["xxd_gcc"], one["fwembed"]
    what = f"one {one['bytes'] >> 20} MiB file"
    rows += [row("build", f"{what}: wall", "s", small["wall_s"], "xxd -i + gcc -O2",
                 big["wall_s"], "host"),
             row("build", f"{what}: peak RSS", "MiB", round(small["peak_rss_kib"] / 1024, 1),
                 "xxd -i + gcc -O2", round(big["peak_rss_kib"] / 1024, 1), "host")]
    return rows


def incremental_rows(r):
    inc = r["incremental"]
    out = []
    for key, label in (("no_op", "no-op"), ("one_file", "one file changed")):
        out.append(row("incremental", f"{label}: objects re-assembled", "objects",
                       inc[key]["assembled"], kind="count"))
        out.append(row("incremental", f"{label}: vmlinux relinked", "",
                       "yes" if inc[key]["relinked"] else "no", kind="count"))
    return out


def lookup_rows(r):
    """The smallest table (no slower than the scan) and the largest (faster)."""
    results = r["results"]
    out = []
    for size in sorted({min(results, key=int), max(results, key=int)}, key=int):
        for key, label in (("hit_ns", "hit"), ("miss_ns", "miss")):
            out.append(row("lookup", f"{size} entries, {label}", "instr/lookup",
                           results[size]["lookup"][key], f"{upstream(r)} linear scan",
                           results[size]["linear"][key], "guest"))
    return out


def memory_rows(r):
    over, dedup = r["overhead"], r["dedup"]
    n = over["fwembed"]["entries"]
    d, s = dedup["distinct"], dedup["shared"]
    return [row("memory", f"table overhead beyond data and name ({n} entries)", "B/entry",
                over["fwembed"]["overhead_per_entry"], f"{upstream(r)} .gen.S",
                over["linux_6_1"]["overhead_per_entry"]),
            row("memory", f"dedup: {s['names']} names, {s['distinct']} contents", "bytes",
                s["image"], "one copy per name", d["image"])]


def size_rows(r):
    res = r["results"]
    out = []
    for setting in ("xz", "zstd", "auto"):
        if setting in res and "none" in res:
            out.append(row("memory", f"compression {setting}: resident, {res[setting]['entries']}"
                           f" files of {r['firmware_dir']}", "bytes", res[setting]["resident"],
                           "raw", res["none"]["resident"]))
    return out


def boot_rows(r):
    v, b, f = r["builtin_verify"], r["builtin"], r["initramfs"]
    what = f"{r['files']} files, {r['bytes'] >> 20} MiB"
    return [row("boot", f"{what}: kernel start to all delivered", "us", b["delivered_us"],
                "initramfs", f["delivered_us"], "guest"),
            row("boot", f"{what}: request + SHA-256, summed", "us", b["requests_us"],
                "initramfs", f["requests_us"], "guest"),
            # VERIFY hashes an entry on its first request after boot, and
            # then never again: the self-test's second request of each
            # entry, into a buffer, shows what later requests cost.
            row("boot", f"{what}: first request + SHA-256, with VERIFY", "us",
                v["requests_us"], "no VERIFY", b["requests_us"], "guest"),
            row("boot", f"{what}: second request + SHA-256, with VERIFY", "us",
                v["checks_us"], "no VERIFY", b["checks_us"], "guest")] + verify_rows(r, what)


def verify_rows(r, what):
    """VERIFY's boot figure on each board: the generic C SHA-256 of 32-bit ARM
    (versatile) against the Armv8 instructions of virt64."""
    out = []
    for res in (r, r.get("verify_board")):
        if not res:
            continue
        board = res.get("board", "versatile")
        v, b = res["builtin_verify"], res["builtin"]
        out.append(row("boot", f"{what}, {board}: kernel start to all delivered, with VERIFY",
                       "us", v["delivered_us"], "no VERIFY", b["delivered_us"], "guest"))
        if res is not r:
            out.append(row("boot", f"{what}, {board}: first request + SHA-256, with VERIFY",
                           "us", v["requests_us"], "no VERIFY", b["requests_us"], "guest"))
    return out


def scale_rows(r):
    """20,000 files: where the time goes; no alternative builds them at all."""
    what = f"{r['files']} files"
    return [row("scale", f"{what}: generation (make fw)", "s", r["generation_s"], kind="host"),
            row("scale", f"{what}: assembly ({r['objects_assembled']} objects)", "s",
                r["assembly_s"], kind="host"),
            row("scale", f"{what}: link", "s", r["link_s"], kind="host"),
            row("scale", f"{what}: boot, every entry verified ({r['checks_passed']} checks, "
                f"{r['checks_failed']} failed)", "s", r["boot_s"], kind="host")]


def rows(results):
    """All rows, part by part, for the parts that have results."""
    makers = (("build", build_rows), ("boot", incremental_rows), ("lookup", lookup_rows),
              ("memory", memory_rows), ("size", size_rows), ("boot", boot_rows),
              ("scale", scale_rows))
    out = []
    for part, maker in makers:
        if results.get(part) is not None:
            try:
                out += maker(results[part])
            except (KeyError, TypeError, ValueError):
                raise benchlib.BenchError(f"bench/results/{part}.json",
                                          "not in the form this bench writes; run it again") \
                    from None
    return out


def number(value):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.2f}" if value < 100 else f"{value:,.0f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def table(all_rows):
    body = [[r["part"], r["figure"], r["unit"], number(r["fwembed"]), r["against"] or "-",
             number(r["other"]), f"{r['ratio']:.2f}x" if r["ratio"] is not None else "-",
             r["kind"]] for r in all_rows]
    return benchlib.format_table(["part", "figure", "unit", "fwembed", "against", "value",
                                  "ratio", "kind"], body, left=3)


# The parts whose rows the kernels table sets side by side: what the series
# itself changes at run time and in the image, not host build times.
KERNEL_PARTS = (("lookup", lookup_rows), ("memory", memory_rows), ("boot", boot_rows))


def kernel_rows(results_by_kernel):
    """The lookup, memory and boot rows of every kernel with results, one row
    per figure: {"part", "figure", "unit", "against", "kind", "kernels":
    {kernel: {"fwembed", "other", "ratio"}}}, in the first kernel's order.
    "against" names the upstream route without its version: each kernel's
    figure is set against its own."""
    out = {}
    for kernel, results in results_by_kernel.items():
        for part, maker in KERNEL_PARTS:
            if results.get(part) is None:
                continue
            for r in maker(results[part]):
                key = (r["part"], r["figure"], r["unit"])
                entry = out.setdefault(key, {
                    "part": r["part"], "figure": r["figure"], "unit": r["unit"],
                    "against": re.sub(r"^\d+\.\d+ ", "", r["against"] or "-"),
                    "kind": r["kind"], "kernels": {}})
                entry["kernels"][kernel] = {k: r[k] for k in ("fwembed", "other", "ratio")}
    return list(out.values())


def kernel_table(rows, kernels):
    """The kernels' figures side by side: for each kernel, fwembed's value,
    the upstream route's and their ratio; "-" where a kernel has none."""
    header = ["part", "figure", "unit", "against"]
    for kernel in kernels:
        header += [f"{kernel} fwembed", f"{kernel} against", f"{kernel} ratio"]
    body = []
    for r in rows:
        line = [r["part"], r["figure"], r["unit"], r["against"]]
        for kernel in kernels:
            k = r["kernels"].get(kernel)
            line += [number(k["fwembed"]), number(k["other"]),
                     f"{k['ratio']:.2f}x" if k["ratio"] is not None else "-"] if k else \
                ["-", "-", "-"]
        body.append(line)
    return benchlib.format_table(header, body, left=4)
