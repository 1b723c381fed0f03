"""Text that runs into other text, measured on rendered charts (layout boxes in Chromium).

Plotly draws every title, tick label, legend entry, annotation and data label as an SVG
``<text>``. ``CHECK_JS`` measures each one's box (``getBoundingClientRect``) inside every chart
(``.js-plotly-plot``) or bare ``<svg>`` under a root, and reports:

* ``overlaps``: pairs of texts whose boxes intersect by more than ``MIN_OVERLAP`` pixels both
  ways (touching glyphs of a tick label and its neighbour are not counted);
* ``outside``: texts reaching beyond their chart's own box by more than ``MIN_OVERLAP``
  (a clipped title, a legend cut at the edge);
* ``legends``: for each drawn legend (its background box), whether it lies inside the figure's
  paper (the chart's outer SVG) and what of the axes it covers: tick labels (``.xtick``,
  ``.ytick``), axis titles (``.g-xtitle``, ``.g-y2title``...), a plot area (the subplots'
  ``.nsewdrag`` rectangles) or a colour bar; ``legend_problems`` lists those that fail.

Used by the browser tests of the pages (``overlaps_on_page``) and of the exported slides
(``svg_overlaps``: the slide's SVG opened in Chromium).
"""

from __future__ import annotations

MIN_OVERLAP = 3  # pixels, both directions

CHECK_JS = """
(args) => {
  const [selector, minOverlap] = args;
  const charts = Array.from(document.querySelectorAll(selector));
  const results = [];
  charts.forEach((chart, index) => {
    const frame = chart.getBoundingClientRect();
    if (frame.width < 2 || frame.height < 2) return;
    if (chart.closest('details:not([open])')) return;  // inside a closed expander: not shown
    const texts = [];
    chart.querySelectorAll('text').forEach((node) => {
      const content = (node.textContent || '').trim();
      if (!content) return;
      const style = window.getComputedStyle(node);
      if (style.display === 'none' || style.visibility === 'hidden' || parseFloat(style.opacity) === 0) return;
      let hidden = false;
      for (let p = node.parentElement; p && p !== chart; p = p.parentElement) {
        const s = window.getComputedStyle(p);
        if (s.display === 'none' || s.visibility === 'hidden' || parseFloat(s.opacity) === 0) { hidden = true; break; }
        if (p.classList && (p.classList.contains('hoverlayer') || p.classList.contains('modebar'))) { hidden = true; break; }
      }
      if (hidden) return;
      const box = node.getBoundingClientRect();
      if (box.width < 1 || box.height < 1) return;
      let group = node.parentElement ? (node.parentElement.getAttribute('class') || node.parentElement.tagName) : '';
      texts.push({text: content.slice(0, 60), group, box: {x: box.left, y: box.top, w: box.width, h: box.height}});
    });
    const overlaps = [];
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        const a = texts[i].box, b = texts[j].box;
        const dx = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
        const dy = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
        if (dx > minOverlap && dy > minOverlap) overlaps.push([texts[i].text, texts[j].text, Math.round(dx), Math.round(dy)]);
      }
    }
    const outside = texts.filter((t) => t.box.x < frame.left - minOverlap || t.box.y < frame.top - minOverlap
        || t.box.x + t.box.w > frame.right + minOverlap || t.box.y + t.box.h > frame.bottom + minOverlap)
      .map((t) => t.text);
    const rect = (node) => { const b = node.getBoundingClientRect(); return {x: b.left, y: b.top, w: b.width, h: b.height}; };
    const meets = (a, b) => Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x) > 1
      && Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y) > 1;
    const paperNode = chart.querySelector('svg.main-svg');
    const paper = paperNode ? rect(paperNode) : {x: frame.left, y: frame.top, w: frame.width, h: frame.height};
    const axisParts = [];
    chart.querySelectorAll('g.xtick text, g.ytick text').forEach((n) => axisParts.push(['tick label', n]));
    chart.querySelectorAll('g[class^="g-x"] text, g[class^="g-y"] text').forEach((n) => {
      if ((n.parentElement.getAttribute('class') || '').endsWith('title')) axisParts.push(['axis title', n]); });
    chart.querySelectorAll('.draglayer .nsewdrag').forEach((n) => axisParts.push(['plot area', n]));
    chart.querySelectorAll('g.colorbar').forEach((n) => axisParts.push(['colour bar', n]));
    const legends = [];
    chart.querySelectorAll('g.legend, g[class^="legend"]').forEach((legend) => {
      if (!(legend.getAttribute('class') || '').match(/^legend[0-9]*$/)) return;
      const bg = legend.querySelector('rect.bg');
      if (!bg) return;
      const box = rect(bg);
      if (box.w < 2 || box.h < 2) return;
      const inside = box.x >= paper.x - 1 && box.y >= paper.y - 1 && box.x + box.w <= paper.x + paper.w + 1
        && box.y + box.h <= paper.y + paper.h + 1;
      const covers = [];
      axisParts.forEach(([kind, node]) => {
        const part = rect(node);
        if (part.w >= 1 && part.h >= 1 && meets(box, part)) covers.push(kind + ' ' + ((node.textContent || '').trim().slice(0, 30)));
      });
      legends.push({box: {x: Math.round(box.x - paper.x), y: Math.round(box.y - paper.y), w: Math.round(box.w),
                          h: Math.round(box.h)}, inside, covers});
    });
    const titleNode = chart.querySelector('.gtitle');
    results.push({index, title: titleNode ? titleNode.textContent : '', width: Math.round(frame.width),
                  height: Math.round(frame.height), texts: texts.length, overlaps, outside, legends,
                  annotations: chart.querySelectorAll('g.annotation').length});
  });
  return results;
}
"""


def overlaps_on_page(page, selector: str = ".js-plotly-plot") -> list[dict]:
    """Per chart of a Playwright page: title, size, number of texts, overlapping pairs,
    texts outside the chart."""
    return page.evaluate(CHECK_JS, [selector, MIN_OVERLAP])


def svg_overlaps(svg: bytes | str, *, width: int, height: int) -> dict:
    """The same measure on one SVG image (a slide), opened in headless Chromium."""
    from playwright.sync_api import sync_playwright

    from devtools.browser import CHROMIUM_ARGS, chromium_path

    text = svg.decode("utf-8") if isinstance(svg, bytes) else svg
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.set_content(f"<html><body style='margin:0'>{text}</body></html>")
            found = page.evaluate(CHECK_JS, ["body > svg", MIN_OVERLAP])
        finally:
            browser.close()
    return found[0] if found else {"overlaps": [], "outside": [], "texts": 0}


def legend_problems(results: list[dict]) -> list[str]:
    """One line per chart whose legend reaches outside the figure's paper or covers an axis's
    tick labels or title, a plot area or a colour bar."""
    out = []
    for chart in results:
        for legend in chart.get("legends", []):
            if not legend["inside"] or legend["covers"]:
                out.append(f"chart {chart['index']} {chart['title']!r} ({chart['width']}x{chart['height']}): legend at "
                           f"{legend['box']} inside paper {legend['inside']}, covers {legend['covers'][:4]}")
    return out


def problems(results: list[dict]) -> list[str]:
    """One line per chart with overlapping or cut text."""
    out = []
    for chart in results:
        if chart["overlaps"] or chart["outside"]:
            out.append(f"chart {chart['index']} {chart['title']!r} ({chart['width']}x{chart['height']}): "
                       f"overlaps {chart['overlaps'][:4]}, outside {chart['outside'][:4]}")
    return out
