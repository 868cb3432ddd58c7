#!/usr/bin/env python3
"""Checks a sweep's SVG plot against its CSV summary, independently of the C
code that wrote both:

    check_plot.py PLOT.svg SUMMARY.csv

- the SVG parses (xml.etree), is <svg> with width, height and a viewBox of
  that size, and has both axis titles;
- its polylines are exactly the expected series, worked out from the CSV:
  for each level with more than one size, the rows grouped by that level's
  associativity and line and every other level's cache, named as the
  legend names them; each polyline's data-sizes are the series' sizes
  (sorted, each once) and its data-mpki the level's misses per 1,000
  instructions recomputed from the CSV's totals (which must also equal the
  CSV's own <level>_mpki column);
- each polyline's points lie in its chart's plot area, increase in x, and
  every point of a chart sits where a log2 x axis and a linear y axis put
  its size and mpki;
- if rsvg-convert is installed, it renders the SVG to a PNG of the SVG's size.

Exits 0 if everything holds; otherwise prints each failure and exits 1.
"""
import csv
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
LEVELS = ["I1", "D1", "L2", "LL"]
AXIS_TITLES = ["cache size (bytes)", "misses per 1,000 instructions"]
failures = []


def fail(msg):
    failures.append(msg)


def event_level(name):
    """The level whose misses Cachegrind's event name counts, or None."""
    m = re.fullmatch(r"([ID])([12L])m[rw]", name)
    if not m:
        return None
    if m.group(2) == "1":
        return m.group(1) + "1"
    return "L2" if m.group(2) == "2" else "LL"


def mpki(misses, ir, decimals=4):
    """misses * 1000 / ir, rounded half up exactly; 0 when ir is 0."""
    if ir == 0:
        return "0." + "0" * decimals
    q, r = divmod(misses * 1000 * 10**decimals, ir)
    if 2 * r >= ir:
        q += 1
    return "%d.%0*d" % (q // 10**decimals, decimals, q % 10**decimals)


def size_text(v):
    for unit, suffix in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if v % unit == 0:
            return "%d%s" % (v // unit, suffix)
    return str(v)


def cache(row, level):
    if row[level + "_size"] == "":
        return None
    return tuple(int(row["%s_%s" % (level, f)]) for f in ("size", "assoc", "line"))


def expected_series(rows, events):
    """{(level, legend): (sizes, mpki strings)} from the CSV rows."""
    ir_name = "Ir"
    series = {}
    for level in LEVELS:
        present = [r for r in rows if cache(r, level)]
        if len({cache(r, level)[0] for r in present}) < 2:
            continue
        varies = {l: len({cache(r, l) for r in rows}) > 1 for l in LEVELS}
        line_varies = {l: len({cache(r, l)[2] for r in rows if cache(r, l)}) > 1 for l in LEVELS}
        groups = {}
        for r in present:
            c = cache(r, level)
            key = (c[1], c[2]) + tuple(cache(r, l) for l in LEVELS if l != level)
            groups.setdefault(key, []).append(r)
        for members in groups.values():
            c = cache(members[0], level)
            name = "%s %d-way" % (level, c[1])
            if line_varies[level]:
                name += " %dB lines" % c[2]
            for l in LEVELS:
                if l == level or not varies[l]:
                    continue
                o = cache(members[0], l)
                if o is None:
                    name += ", no " + l
                    continue
                name += ", %s %s %d-way" % (l, size_text(o[0]), o[1])
                if line_varies[l]:
                    name += " %dB lines" % o[2]
            by_size = {}
            for r in members:
                by_size.setdefault(cache(r, level)[0], r)
            sizes = sorted(by_size)
            values = []
            for s in sizes:
                r = by_size[s]
                misses = sum(int(r[e]) for e in events if event_level(e) == level)
                values.append(mpki(misses, int(r[ir_name])))
            series[(level, name)] = (sizes, values)
    return series


def check_csv(rows, events, header):
    for r in rows:
        for level in LEVELS:
            column = level + "_mpki"
            if column not in header:
                continue
            misses = sum(int(r[e]) for e in events if event_level(e) == level)
            want = mpki(misses, int(r["Ir"])) if cache(r, level) else ""
            if r[column] != want:
                fail("CSV %s: %s is %r, its totals give %r" % (r["label"], column, r[column], want))


def check_linear(points, what):
    """points: (value, coordinate) of one chart: coordinate = a + b * value."""
    values = sorted({v for v, _ in points})
    if len(values) < 2:
        return
    lo = [c for v, c in points if v == values[0]][0]
    hi = [c for v, c in points if v == values[-1]][0]
    slope = (hi - lo) / (values[-1] - values[0])
    off = [(c, lo + slope * (v - values[0])) for v, c in points
           if abs(c - (lo + slope * (v - values[0]))) > 0.5]
    if off:
        fail("%s: %d of %d points off the axis (one at %.2f, where the axis puts %.2f)"
             % ((what, len(off), len(points)) + off[0]))
    return slope


def check_svg(path, expected):
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as err:
        fail("%s does not parse: %s" % (path, err))
        return None
    if root.tag != SVG + "svg":
        fail("the root element is %s, not svg" % root.tag)
        return None
    try:
        width, height = int(root.get("width")), int(root.get("height"))
        if [float(v) for v in root.get("viewBox").split()] != [0, 0, width, height]:
            fail("viewBox %r is not 0 0 %d %d" % (root.get("viewBox"), width, height))
    except (TypeError, ValueError):
        fail("svg width, height or viewBox missing or not numbers")
        return None
    texts = ["".join(t.itertext()) for t in root.iter(SVG + "text")]
    for title in AXIS_TITLES:
        if expected and title not in texts:
            fail("no axis title %r" % title)
    found = set()
    for chart in root.iter(SVG + "g"):
        lines = chart.findall(SVG + "polyline")
        if not lines:
            continue
        area = chart.find(SVG + "rect[@class='plot-area']")
        if area is None:
            fail("a chart with polylines has no plot-area rect")
            continue
        x0, y0 = float(area.get("x")), float(area.get("y"))
        x1, y1 = x0 + float(area.get("width")), y0 + float(area.get("height"))
        xs, ys = [], []
        for line in lines:
            key = (line.get("data-level"), line.get("data-series"))
            name = "%s series %r" % key
            if key in found:
                fail("%s drawn twice" % name)
            found.add(key)
            if key not in expected:
                fail("%s is not a series of the CSV" % name)
                continue
            sizes, values = expected[key]
            if line.get("data-sizes", "").split() != [str(s) for s in sizes]:
                fail("%s: data-sizes %r, the CSV gives %r" % (name, line.get("data-sizes"), sizes))
            if line.get("data-mpki", "").split() != values:
                fail("%s: data-mpki %r, the CSV gives %r" % (name, line.get("data-mpki"), values))
            try:
                points = [tuple(float(c) for c in p.split(",")) for p in line.get("points", "").split()]
            except ValueError:
                fail("%s: points %r are not x,y pairs" % (name, line.get("points")))
                continue
            if len(points) != len(sizes) or any(len(p) != 2 for p in points):
                fail("%s: %d points for %d sizes" % (name, len(points), len(sizes)))
                continue
            if any(not (x0 <= x <= x1 and y0 <= y <= y1) for x, y in points):
                fail("%s: a point outside the plot area %s" % (name, (x0, y0, x1, y1)))
            if any(b[0] <= a[0] for a, b in zip(points, points[1:])):
                fail("%s: x does not increase" % name)
            xs += [(math.log2(s), p[0]) for s, p in zip(sizes, points)]
            ys += [(float(v), p[1]) for v, p in zip(values, points)]
        level = lines[0].get("data-level")
        slope = check_linear(xs, level + " chart, x against log2(size)")
        if slope is not None and slope <= 0:
            fail("%s chart: x does not grow with the size" % level)
        slope = check_linear(ys, level + " chart, y against mpki")
        if slope is not None and slope >= 0:
            fail("%s chart: y does not go up with mpki" % level)
    for key in sorted(set(expected) - found):
        fail("no polyline for the %s series %r" % key)
    if not expected and not any("No cache level" in t for t in texts):
        fail("no level varies, and the SVG does not say so")
    return width, height


def check_png(path, size):
    tool = shutil.which("rsvg-convert")
    if tool is None:
        print("check_plot: rsvg-convert not installed, PNG rendering not checked")
        return
    with tempfile.TemporaryDirectory() as tmp:
        png = os.path.join(tmp, "plot.png")
        run = subprocess.run([tool, "-o", png, path], capture_output=True, text=True)
        if run.returncode != 0:
            fail("rsvg-convert failed: %s" % run.stderr.strip())
            return
        with open(png, "rb") as f:
            head = f.read(24)
        if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
            fail("rsvg-convert wrote no PNG")
            return
        if struct.unpack(">II", head[16:24]) != size:
            fail("the PNG is %dx%d, the SVG %dx%d" % (struct.unpack(">II", head[16:24]) + size))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check_plot.py PLOT.svg SUMMARY.csv")
    svg_path, csv_path = sys.argv[1:]
    with open(csv_path, newline="") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        rows = list(reader)
    if "LL_line" not in header or "Ir" not in header:
        sys.exit("check_plot: %s is not a sweep summary (no LL_line or Ir column)" % csv_path)
    events = [c for c in header[header.index("LL_line") + 1:] if not c.endswith("_mpki")]
    check_csv(rows, events, header)
    expected = expected_series(rows, events)
    size = check_svg(svg_path, expected)
    if size is not None and not failures:
        check_png(svg_path, size)
    for msg in failures:
        print("check_plot: " + msg)
    if failures:
        sys.exit(1)
    print("check_plot: %s: %d series, as %s says" % (svg_path, len(expected), csv_path))


if __name__ == "__main__":
    main()
