#!/usr/bin/env python3
"""Writes one SVG image per workload of a `kinference bench` / `kinference demo` HTML report.

Opens REPORT.html#svg in headless Chromium (the report then draws its ECharts charts as SVG elements instead of
canvases), takes the rendered page (--dump-dom), and for each workload section writes OUTDIR/PREFIX-WORKLOAD.svg:
the section's title, its legend (each router's line swatch with its colour and dash, and its name) and every chart of
the section in the page's two columns, each chart a nested <svg> in a card as the page draws it. The images are text,
so they can be committed where a PNG screenshot cannot (docs/img/, shown in docs/BENCHMARKS.md).

Usage (from the repository root):
  bench/report-svg.py kinference-report/demo.html docs/img --prefix demo-report
  bench/report-svg.py /tmp/shots-bench/kinference-paper.html docs/img

PREFIX defaults to the report's file name without .html. Coordinates are rounded to 1 decimal to keep the files
small. Fails, saying why, when chromium is missing (apt-get install chromium), when the page drew no chart as SVG,
or when a workload section has no chart. Only the standard library is needed.
"""
import argparse
import html
import os
import pathlib
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

INSTALL = "chromium is needed to render the report: apt-get install chromium"
WINDOW = (1400, 3000)  # the browser window: the page is at most 1400 px wide, so its grid has two columns
CARD_PADDING = 7  # the page's .card: 6 px padding and a 1 px border
GAP = 16  # the page's .grid gap
MARGIN = 12
FONT = "system-ui,-apple-system,Segoe UI,Roboto,sans-serif"
GEOMETRY = ("d", "transform", "points", "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry", "width",
            "height")
NUMBER = re.compile(r"-?\d*\.\d+(?:e[-+]?\d+)?|-?\d+e[-+]?\d+")
GEOMETRY_ATTRIBUTE = re.compile(r'(\s(?:%s)=")([^"]*)"' % "|".join(GEOMETRY))


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit(INSTALL)


def rendered_dom(report):
    url = pathlib.Path(report).resolve().as_uri() + "#svg"  # escapes '#', '%' and spaces in the path
    command = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--window-size=%d,%d" % WINDOW, "--virtual-time-budget=15000", "--dump-dom", url]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
    except subprocess.TimeoutExpired:
        sys.exit("chromium did not render %s within 180 s" % report)
    if done.returncode != 0 or "</html>" not in done.stdout:
        sys.exit("chromium failed to render %s (exit %d): %s" % (report, done.returncode, done.stderr[-2000:]))
    return done.stdout


def rounded(match):
    value = round(float(match.group(0)), 1)
    return str(int(value)) if value == int(value) else "%.1f" % value


def compact(svg):
    """The chart's SVG as XML, its coordinates rounded to 1 decimal."""
    svg = GEOMETRY_ATTRIBUTE.sub(lambda m: m.group(1) + NUMBER.sub(rounded, m.group(2)) + '"', svg)
    # an HTML serialisation: the one entity it writes that XML lacks, and '<' or '>' left bare in attribute values
    svg = svg.replace("&nbsp;", "&#160;")
    svg = re.sub(r'\sid="\d+"', "", svg)  # ECharts numbers each chart's background "0": ids not referred to
    return re.sub(r'="([^"]*)"', lambda m: '="%s"' % m.group(1).replace("<", "&lt;").replace(">", "&gt;"), svg)


def size(svg):
    width = re.search(r'<svg\b[^>]*?\swidth="([\d.]+)', svg)
    height = re.search(r'<svg\b[^>]*?\sheight="([\d.]+)', svg)
    if not width or not height:
        sys.exit("a chart's <svg> has no width and height: " + svg[:200])
    return float(width.group(1)), float(height.group(1))


def sections(dom):
    """(workload, legend entries, chart SVGs) of each workload section of the page, in order."""
    heading = re.compile(r"<h2>Workload: (.*?)</h2>")
    starts = list(heading.finditer(dom))
    if not starts:
        sys.exit("the report has no workload section (no <h2>Workload: ...</h2>)")
    out = []
    for i, start in enumerate(starts):
        following = dom.find("<h2>", start.end())
        section = dom[start.end():following if following >= 0 else len(dom)]
        legend = [(bool(m.group(1)), m.group(2), html.unescape(m.group(3))) for m in re.finditer(
            r'<button class="(ours)?[^"]*">(<svg\b.*?</svg>)<span>(.*?)</span></button>', section)]
        charts = []
        for chart in re.finditer(r'<div class="chart"', section):
            begin = section.find("<svg", chart.end())
            end = section.find("</svg>", begin)
            following_chart = section.find('<div class="chart"', chart.end())
            if begin < 0 or end < 0 or 0 <= following_chart < begin:
                charts.append(None)
            else:
                charts.append(section[begin:end + len("</svg>")])
        out.append((html.unescape(start.group(1)), legend, charts))
    return out


def swatch_line(swatch):
    line = re.search(r"<line\b[^>]*>", swatch)
    if not line:
        sys.exit("a legend entry has no line swatch: " + swatch)
    attributes = dict(re.findall(r'([\w-]+)="([^"]*)"', line.group(0)))
    return attributes.get("stroke", "#000"), attributes.get("stroke-width", "2"), attributes.get(
        "stroke-dasharray", "")


def text_width(text, bold):
    return len(text) * (7.8 if bold else 7.5)  # 13 px system-ui, generously: the SVG has no text metrics


def compose(title, workload, legend, charts):
    chart_sizes = [size(c) for c in charts]
    column = max(w for w, _ in chart_sizes) + 2 * CARD_PADDING
    width = MARGIN * 2 + 2 * column + GAP
    parts = []
    y = MARGIN + 14
    parts.append('<text x="%d" y="%d" font-size="13" fill="#555">%s</text>' % (MARGIN, y, html.escape(title)))
    y += 28
    parts.append('<text x="%d" y="%d" font-size="18" font-weight="600" fill="#222">Workload: %s</text>'
                 % (MARGIN, y, html.escape(workload)))
    parts.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#ddd"/>' % (MARGIN, y + 6, width - MARGIN, y + 6))
    y += 18
    x = MARGIN
    for ours, swatch, name in legend:
        entry = 8 + 30 + 6 + text_width(name, ours) + 8
        if x > MARGIN and x + entry > width - MARGIN:
            x = MARGIN
            y += 28
        stroke, stroke_width, dash = swatch_line(swatch)
        parts.append('<rect x="%.1f" y="%d" width="%.1f" height="22" rx="4" fill="#fff" stroke="#ddd"/>'
                     % (x, y, entry))
        parts.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="%s"%s/>'
                     % (x + 8, y + 11, x + 38, y + 11, html.escape(stroke), html.escape(stroke_width),
                        ' stroke-dasharray="%s"' % html.escape(dash) if dash else ""))
        parts.append('<text x="%.1f" y="%d" font-size="13"%s fill="#222">%s</text>'
                     % (x + 44, y + 15, ' font-weight="700"' if ours else "", html.escape(name)))
        x += entry + 14
    y += 22 + 12
    row_top = y
    for i, (chart, (chart_width, chart_height)) in enumerate(zip(charts, chart_sizes)):
        if i % 2 == 0 and i > 0:
            row_top += max(h for _, h in chart_sizes[i - 2:i]) + 2 * CARD_PADDING + GAP
        left = MARGIN + (i % 2) * (column + GAP)
        parts.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="6" fill="#fff" stroke="#e3e3e3"/>'
                     % (left + 0.5, row_top + 0.5, column - 1, chart_height + 2 * CARD_PADDING - 1))
        nested = re.sub(r"^<svg\b", '<svg x="%.1f" y="%.1f"' % (left + CARD_PADDING, row_top + CARD_PADDING),
                        compact(chart))
        nested = re.sub(r'^(<svg\b[^>]*?)\sstyle="[^"]*"', r"\1", nested)  # the page's absolute positioning
        parts.append(nested)
    last_row = chart_sizes[len(charts) - 2 + len(charts) % 2:]
    height = row_top + max(h for _, h in last_row) + 2 * CARD_PADDING + MARGIN
    return ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="%d" '
            'height="%d" viewBox="0 0 %d %d" font-family="%s">\n<rect width="100%%" height="100%%" fill="#fff"/>\n%s\n'
            '</svg>\n' % (width, height, width, height, FONT, "\n".join(parts)))


def file_name(text):
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "workload"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", help="the HTML report of kinference bench or kinference demo")
    parser.add_argument("outdir", help="the folder to write PREFIX-WORKLOAD.svg into (created if needed)")
    parser.add_argument("--prefix", help="the files' name before -WORKLOAD (default: the report's name)")
    args = parser.parse_args()
    if not os.path.isfile(args.report):
        sys.exit("no such report: " + args.report)
    prefix = file_name(args.prefix or os.path.splitext(os.path.basename(args.report))[0])
    try:  # before Chromium's seconds of rendering, so an unusable folder is said at once
        os.makedirs(args.outdir, exist_ok=True)
    except OSError as e:
        sys.exit("cannot create the output folder %s: %s" % (args.outdir, e.strerror or e))
    dom = rendered_dom(args.report)
    if re.search(r'<div class="chart"[^>]*>\s*<div[^>]*>\s*<canvas', dom):
        sys.exit("the report drew its charts on canvases, not as SVG: it predates the '#svg' renderer; rerun the"
                 " bench that wrote it")
    title = re.search(r"<h1>(.*?)</h1>", dom)
    title = html.unescape(title.group(1)) if title else os.path.basename(args.report)
    for workload, legend, charts in sections(dom):
        if not charts:
            sys.exit("workload %s of %s has no chart" % (workload, args.report))
        if any(c is None for c in charts):
            sys.exit("workload %s of %s drew no chart in %d of its %d chart cards (no <svg> in them): is the page's"
                     " JavaScript failing in Chromium?" % (workload, args.report, sum(c is None for c in charts),
                                                           len(charts)))
        svg = compose(title, workload, legend, charts)
        try:
            ElementTree.fromstring(svg)
        except ElementTree.ParseError as e:
            sys.exit("the SVG composed for workload %s is not well-formed XML: %s" % (workload, e))
        path = os.path.join(args.outdir, "%s-%s.svg" % (prefix, file_name(workload)))
        try:
            with open(path, "w", encoding="utf-8") as out:
                out.write(svg)
        except OSError as e:
            sys.exit("cannot write %s: %s" % (path, e.strerror or e))
        print("%s: %d charts, %d routers, %.0f KB" % (path, len(charts), len(legend), len(svg.encode()) / 1024))


if __name__ == "__main__":
    main()
