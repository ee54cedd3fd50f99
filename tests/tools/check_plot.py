"""Check a comm-bench --plot file against the result files it was drawn from.

    check_plot.py OUT.svg|OUT.png RESULT.json|RESULT.csv...

SVG: gnuplot puts each plotted series in <g id="gnuplot_plot_N"> holding its
key title and one point marker per data point (plus one in the key). The
file must hold exactly the series the inputs define (comm-bench's labels,
one per dtype/op per file), each with one point per measured size, at
strictly increasing x and, where the sizes grow by a constant factor,
evenly spaced x (the axis is log2). PNG: the signature and the 1100x650
size comm-bench asks gnuplot for.
"""

import csv
import json
import pathlib
import re
import struct
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
XLINK_HREF = "{http://www.w3.org/1999/xlink}href"


def expected_series(path):
    """label -> sizes (ascending) of the out-of-place points comm-bench plots from `path`."""
    stem = pathlib.Path(path).stem
    series = {}
    text = pathlib.Path(path).read_text()
    if text.startswith("{"):
        run = json.loads(text)
        for row in run["rows"]:
            if row["out_of_place"] is None or row["size"] <= 0:
                continue
            kind = row["type"] + ("" if row["redop"] == "none" else " " + row["redop"])
            label = f"{run['collective']} {kind}, {run['provider']}, {run['ranks']} ranks ({stem})"
            series.setdefault(label, []).append(row["size"])
    else:
        for row in csv.DictReader(text.splitlines()):
            if not row["busbw_gbps"] or int(row["size"]) <= 0:
                continue
            kind = row["type"] + ("" if row["redop"] == "none" else " " + row["redop"])
            series.setdefault(f"{kind} ({stem})", []).append(int(row["size"]))
    return series


def plotted_series(svg_path):
    """label -> x coordinates of the series' data points, in drawing order."""
    root = ET.parse(svg_path).getroot()
    series = {}
    for group in root.iter(f"{SVG}g"):
        if not re.fullmatch(r"gnuplot_plot_\d+", group.get("id", "")):
            continue
        texts = [t.text for t in group.iter(f"{SVG}text")]
        if len(texts) != 1:
            raise AssertionError(f"{group.get('id')} has {len(texts)} key titles, not 1: {texts}")
        xs = []
        for use in group.iter(f"{SVG}use"):
            if use.get(XLINK_HREF, "").startswith("#gpPt"):
                xs.append(float(re.match(r"translate\(([-0-9.]+),", use.get("transform")).group(1)))
        series[texts[0]] = xs[:-1]  # the last marker is the key's sample
    return series


def check_svg(svg_path, inputs):
    expected = {}
    for path in inputs:
        expected.update(expected_series(path))
    plotted = plotted_series(svg_path)
    if set(plotted) != set(expected):
        raise AssertionError(f"series plotted {sorted(plotted)}, expected {sorted(expected)}")
    for label, sizes in expected.items():
        xs = plotted[label]
        if len(xs) != len(sizes):
            raise AssertionError(f"'{label}': {len(xs)} points plotted, {len(sizes)} measured sizes")
        if any(b <= a for a, b in zip(xs, xs[1:])):
            raise AssertionError(f"'{label}': x does not grow with the size: {xs}")
        factors = {b / a for a, b in zip(sizes, sizes[1:])}
        steps = [b - a for a, b in zip(xs, xs[1:])]
        if len(factors) == 1 and steps and max(steps) - min(steps) > 0.05:
            raise AssertionError(f"'{label}': sizes grow by {factors.pop()} each but x steps are {steps}")
        print(f"{svg_path}: '{label}' with {len(xs)} points")


def check_png(png_path):
    data = pathlib.Path(png_path).read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise AssertionError(f"{png_path} is not a PNG")
    width, height = struct.unpack(">II", data[16:24])
    if (width, height) != (1100, 650):
        raise AssertionError(f"{png_path} is {width}x{height}, not 1100x650")
    print(f"{png_path}: a {width}x{height} PNG of {len(data)} bytes")


def main(out, *inputs):
    if out.lower().endswith(".svg"):
        check_svg(out, inputs)
    else:
        check_png(out)


if __name__ == "__main__":
    main(*sys.argv[1:])
