"""Text that runs into other text, measured on rendered charts (layout boxes in Chromium).

Plotly draws every title, tick label, legend entry, annotation and data label as an SVG
``<text>``. ``CHECK_JS`` measures each one's box (``getBoundingClientRect``) inside every chart
(``.js-plotly-plot``) or bare ``<svg>`` under a root, and reports:

* ``overlaps``: pairs of texts whose boxes intersect by more than ``MIN_OVERLAP`` pixels both
  ways (touching glyphs of a tick label and its neighbour are not counted);
* ``outside``: texts reaching beyond their chart's own box by more than ``MIN_OVERLAP``
  (a clipped title, a legend cut at the edge).

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
    const titleNode = chart.querySelector('.gtitle');
    results.push({index, title: titleNode ? titleNode.textContent : '', width: Math.round(frame.width),
                  height: Math.round(frame.height), texts: texts.length, overlaps, outside});
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


def problems(results: list[dict]) -> list[str]:
    """One line per chart with overlapping or cut text."""
    out = []
    for chart in results:
        if chart["overlaps"] or chart["outside"]:
            out.append(f"chart {chart['index']} {chart['title']!r} ({chart['width']}x{chart['height']}): "
                       f"overlaps {chart['overlaps'][:4]}, outside {chart['outside'][:4]}")
    return out
