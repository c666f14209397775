"""The pure-Python helpers of make bench: data, parsing, tables, the chart.

No kernel build and no timing: the measurements themselves are make bench's.
"""

import lzma
import math
import sys
import xml.etree.ElementTree as ET

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

import benchlib  # noqa: E402  pylint: disable=wrong-import-position
import boot  # noqa: E402  pylint: disable=wrong-import-position
import scale  # noqa: E402  pylint: disable=wrong-import-position
import chart  # noqa: E402  pylint: disable=wrong-import-position
import summary  # noqa: E402  pylint: disable=wrong-import-position


def test_sizes_add_up_within_bounds():
    """Set sizes add up to the total exactly, each between 1 and the largest."""
    sizes = benchlib.sizes_summing_to(7, 1000, 256 << 20, 8 << 20)
    assert len(sizes) == 1000 and sum(sizes) == 256 << 20
    assert min(sizes) >= 1 and max(sizes) <= 8 << 20


def test_sizes_are_deterministic():
    """The same seed gives the same sizes; another seed other sizes."""
    assert benchlib.sizes_summing_to(3, 50, 10000, 1000) == \
        benchlib.sizes_summing_to(3, 50, 10000, 1000)
    assert benchlib.sizes_summing_to(3, 50, 10000, 1000) != \
        benchlib.sizes_summing_to(4, 50, 10000, 1000)


def test_synthetic_data_is_deterministic_and_mixed():
    """Even seeds give random bytes, odd seeds compressible ones, never all zeros."""
    assert benchlib.synthetic(5, 4096) == benchlib.synthetic(5, 4096)
    assert benchlib.synthetic(5, 4096) != benchlib.synthetic(7, 4096)
    random_data, table_data = benchlib.synthetic(4, 65536), benchlib.synthetic(5, 65536)
    assert len(random_data) == len(table_data) == 65536
    assert len(lzma.compress(random_data)) > 65536
    assert len(lzma.compress(table_data)) < 65536 // 4
    assert table_data.count(0) < len(table_data)


def test_write_set_repeats_contents(tmp_path):
    """With repeat=2, files 0 and 2 hold the same bytes and files 0 and 1 do not."""
    folder = benchlib.write_set(tmp_path / "set", [100, 100, 100], 10, repeat=2)
    data = [(folder / benchlib.fw_name(i)).read_bytes() for i in range(3)]
    assert data[0] == data[2] != data[1]


def test_format_table_aligns_columns():
    """Left columns are padded on the right, the others on the left."""
    text = benchlib.format_table(["name", "n"], [["a", 1], ["bcd", 100]])
    assert text.splitlines() == ["name    n", "----  ---", "a       1", "bcd   100"]


CONSOLE = """\
[    0.000000] Booting Linux on physical CPU 0x0
[    1.500000] KTAP version 1
[    1.500100] # fw_builtin_selftest: 2 built-in entries
[    1.500200] 1..4
[    1.700200] # size=10 sha256=%s name="a"
[    1.700300] ok 1 request
[    1.900300] # size=20 sha256=%s name="b"
[    1.900400] ok 2 request
[    1.950000] ok 3 missing_name_is_enoent
[    2.000000] ok 4 into_buf_too_small_fails
[    2.000001] # fw_builtin_selftest: pass:4 fail:0 skip:0 total:4
""" % ("0" * 64, "1" * 64)


def test_selftest_times_from_printk_timestamps():
    """Requests run from the previous result to each size line, checks up to the next."""
    times = boot.selftest_times(CONSOLE.splitlines(), ["a", "b"])
    assert times == {"selftest_end_us": 2000001, "selftest_us": 500001,
                     "requests_us": 400000, "checks_us": 200, "delivered_us": 1999801}


def test_selftest_times_count_loading_messages_as_request():
    """A loader message between result and size line is part of the request."""
    text = CONSOLE.replace("[    1.700200] # size=10",
                           "[    1.600000]  fw_builtin_selftest: firmware: direct-loading "
                           "firmware a\n[    1.700200] # size=10")
    assert boot.selftest_times(text.splitlines(), ["a", "b"])["requests_us"] == 400000


def test_selftest_times_refuses_a_failed_run():
    """A self-test with failures gives no figures."""
    text = CONSOLE.replace("pass:4 fail:0", "pass:3 fail:1")
    try:
        boot.selftest_times(text.splitlines(), ["a", "b"])
    except ValueError as err:
        assert "self-test failed" in str(err)
    else:
        raise AssertionError("a failed self-test was accepted")


def test_incremental_counts():
    """Only generated objects count, and the vmlinux link is seen."""
    out = ("  AS      drivers/base/firmware_loader/builtin/generated/blob-1.o\n"
           "  AS      arch/arm/kernel/entry.o\n  LD      vmlinux\n")
    assert boot.incremental_counts(out) == {"assembled": 1, "relinked": True}
    assert boot.incremental_counts("") == {"assembled": 0, "relinked": False}


def test_scale_reads_the_harness_summary_line():
    """The scale part takes entries, boot time and verdicts from the harness's
    last line, whether or not some entries are installed."""
    for line in ("x86_64: 20000 firmware entries, boot took 14.9 s; 20006 checks passed, "
                 "0 failed; console log: build/bench-scale/console.log",
                 "x86_64: 20000 firmware entries and 1 installed, boot took 9.0 s; "
                 "20007 checks passed, 2 failed; console log: c.log"):
        found = scale.SUMMARY_RE.search("  PASS  ...\n" + line + "\n")
        assert found and found.group(1) == "20000"
    assert scale.SUMMARY_RE.search(line).groups() == ("20000", "9.0", "20007", "2")


LOOKUP = {"results": {"4": {"linear": {"hit_ns": 300, "miss_ns": 400},
                            "lookup": {"hit_ns": 300, "miss_ns": 200}},
                      "1024": {"linear": {"hit_ns": 30000, "miss_ns": 60000},
                               "lookup": {"hit_ns": 1000, "miss_ns": 1500}}}}


def test_summary_rows_take_the_smallest_and_largest_lookup_tables():
    """The lookup rows compare 6.1's scan with the lookup at the fewest and the
    most entries: the targets are no slower at one end, faster at the other."""
    rows = summary.rows({"lookup": LOOKUP})
    assert [(r["figure"], r["fwembed"], r["other"], r["ratio"]) for r in rows] == [
        ("4 entries, hit", 300, 300, 1.0), ("4 entries, miss", 200, 400, 2.0),
        ("1024 entries, hit", 1000, 30000, 30.0), ("1024 entries, miss", 1500, 60000, 40.0)]
    assert "30.00x" in summary.table(rows)


def test_rows_compare_with_the_route_of_the_kernel_measured():
    """Results measured on 6.12 are set against 6.12's own scan; results
    that name no kernel are 6.1's."""
    rows = summary.rows({"lookup": dict(LOOKUP, kernel="6.12")})
    assert {r["against"] for r in rows} == {"6.12 linear scan"}
    assert {r["against"] for r in summary.rows({"lookup": LOOKUP})} == {"6.1 linear scan"}


def test_results_files_carry_the_kernel_but_the_default():
    assert benchlib.results_path("lookup", "6.1").name == "lookup.json"
    assert benchlib.results_path("lookup", "6.12").name == "lookup-6.12.json"


def test_kernel_rows_set_each_kernels_figures_side_by_side():
    """One row per figure, with each kernel's value, its upstream route's and
    the ratio; a figure only one kernel has shows "-" for the other."""
    newer = {"kernel": "6.12", "results": {
        "1024": {"linear": {"hit_ns": 33000, "miss_ns": 66000},
                 "lookup": {"hit_ns": 1100, "miss_ns": 1650}}}}
    rows = summary.kernel_rows({"6.1": {"lookup": LOOKUP}, "6.12": {"lookup": newer}})
    by_figure = {r["figure"]: r for r in rows}
    hit = by_figure["1024 entries, hit"]
    assert hit["against"] == "linear scan"
    assert hit["kernels"] == {"6.1": {"fwembed": 1000, "other": 30000, "ratio": 30.0},
                              "6.12": {"fwembed": 1100, "other": 33000, "ratio": 30.0}}
    assert set(by_figure["4 entries, hit"]["kernels"]) == {"6.1"}
    lines = [line.split() for line in summary.kernel_table(rows, ["6.1", "6.12"]).splitlines()]
    assert ["lookup", "1024", "entries,", "miss", "instr/lookup", "linear", "scan", "1,500",
            "60,000", "40.00x", "1,650", "66,000", "40.00x"] in lines
    assert ["lookup", "4", "entries,", "hit", "instr/lookup", "linear", "scan", "300", "300",
            "1.00x", "-", "-", "-"] in lines


BOOT = {"files": 64, "bytes": 4 << 20, "board": "versatile",
        "builtin_verify": {"delivered_us": 600, "requests_us": 300, "checks_us": 110},
        "builtin": {"delivered_us": 400, "requests_us": 150, "checks_us": 100},
        "initramfs": {"delivered_us": 420, "requests_us": 160, "checks_us": 5},
        "verify_board": {
            "board": "virt64",
            "builtin_verify": {"delivered_us": 220, "requests_us": 120, "checks_us": 90},
            "builtin": {"delivered_us": 200, "requests_us": 100, "checks_us": 90}},
        "incremental": {"no_op": {"assembled": 0, "relinked": False},
                        "one_file": {"assembled": 1, "relinked": True}}}


def test_verify_rows_compare_first_and_second_requests_without_verify():
    """VERIFY's rows set its first request, and its second, against the same
    kernel without VERIFY."""
    rows = {r["figure"]: r for r in summary.rows({"boot": BOOT})}
    first = rows["64 files, 4 MiB: first request + SHA-256, with VERIFY"]
    second = rows["64 files, 4 MiB: second request + SHA-256, with VERIFY"]
    assert (first["fwembed"], first["against"], first["other"], first["ratio"]) == \
        (300, "no VERIFY", 150, 0.5)
    assert (second["fwembed"], second["other"], second["ratio"]) == (110, 100, 0.91)


def test_verify_rows_name_each_board():
    """VERIFY's boot figure, all delivered with it against without, comes
    once per board, each board's from its own two kernels."""
    rows = {r["figure"]: r for r in summary.rows({"boot": BOOT})}
    versatile = rows["64 files, 4 MiB, versatile: kernel start to all delivered, with VERIFY"]
    virt64 = rows["64 files, 4 MiB, virt64: kernel start to all delivered, with VERIFY"]
    first = rows["64 files, 4 MiB, virt64: first request + SHA-256, with VERIFY"]
    assert (versatile["fwembed"], versatile["other"], versatile["ratio"]) == (600, 400, 0.67)
    assert (virt64["fwembed"], virt64["other"], virt64["ratio"]) == (220, 200, 0.91)
    assert (first["fwembed"], first["other"]) == (120, 100)


def test_boot_table_shows_verify_on_both_boards():
    """boot.py's own table has a VERIFY/no VERIFY line per board and figure."""
    def times(us):
        return {"delivered_us": us, "requests_us": us // 2, "checks_us": 10,
                "selftest_end_us": us + 10}
    results = dict(BOOT, builtin_verify=times(600), builtin=times(400), initramfs=times(420),
                   verify_board={"board": "virt64", "builtin_verify": times(220),
                                 "builtin": times(200)})
    lines = [line.split() for line in boot.table(results).splitlines()]
    assert ["versatile:", "kernel", "start", "to", "all", "delivered", "600", "400",
            "1.50x"] in lines
    assert ["virt64:", "kernel", "start", "to", "all", "delivered", "220", "200",
            "1.10x"] in lines


def chart_rows():
    """Two lookup rows (one table size) and one row below 1x."""
    rows = summary.rows({"lookup": {"results": {"1024": LOOKUP["results"]["1024"]}}})
    rows.append(summary.row("x", "a < b & c", "s", 2.0, "y", 1.0, "host"))
    return rows


def test_chart_is_well_formed_svg(tmp_path):
    """The SVG parses as XML, with one bar per ratio and names escaped."""
    _, svg = chart.write(chart_rows(), "t", tmp_path / "bench")
    root = ET.parse(svg).getroot()
    bars = [e for e in root.iter() if e.get("id", "").startswith("bar-")]
    assert len(bars) == 3
    texts = "".join(e.text or "" for e in root.iter() if e.tag.endswith("text"))
    assert "x: a < b & c (s, vs y)" in texts


def test_chart_bars_run_from_1x_to_each_ratio():
    """Each bar starts at 1x and ends at its row's ratio; one below 1x points left."""
    axes = chart.figure(chart_rows(), "t").axes[0]
    spans = [(p.get_x(), p.get_x() + p.get_width()) for p in axes.patches
             if (p.get_gid() or "").startswith("bar-")]
    assert [(round(a, 6), round(b, 6)) for a, b in spans] == [(1, 30.0), (1, 40.0), (1, 0.5)]
    assert math.isclose(axes.get_xlim()[0], chart.LOW) and axes.get_xscale() == "log"


def test_chart_is_written_as_png_and_svg_reproducibly(tmp_path):
    """PNG and SVG are written, and a second run gives the same bytes (no date, fixed ids)."""
    first = chart.write(chart_rows(), "t", tmp_path / "one")
    second = chart.write(chart_rows(), "t", tmp_path / "two")
    assert first[0].read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]


def test_chart_changes_with_the_figures(tmp_path):
    """Other ratios draw another chart: the files depend on the rows."""
    rows = chart_rows()
    other = [dict(r, ratio=r["ratio"] * 2) for r in rows]
    assert chart.write(rows, "t", tmp_path / "one")[1].read_bytes() != \
        chart.write(other, "t", tmp_path / "two")[1].read_bytes()
