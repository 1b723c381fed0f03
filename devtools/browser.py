"""Drive the real dashboard in headless Chromium (Debian's ``chromium``, through Playwright
with its executable path set: no browser download). Used by the browser test and by
``python -m devtools.screenshots``.

``served_dashboard()`` starts ``streamlit run dashboard/app.py`` on a free localhost port
and stops it (by its own process id) on exit; ``chromium_page(url)`` opens it in the browser
(``dashboard_page(env)`` does both, for a test that drives the app); ``visit_pages()`` clicks
every page in the sidebar navigation, waits for the script to finish, checks for
Streamlit's exception box and saves a screenshot per page. Each takes ``browser=``, an open
Chromium (``launch_chromium``) to open a new context (a new session) in instead of starting
one: the browser tests share one Chromium for the session.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from dashboard import pages

REPO = Path(__file__).resolve().parents[1]
PAGE_TITLES = tuple(pages.titles())  # the sidebar's pages, in its order (``dashboard.pages``)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def served_dashboard(env: dict[str, str] | None = None, timeout: float = 90.0, app: Path | None = None):
    """Yield the URL of a dashboard (or of another Streamlit ``app`` file, e.g. a benchmark's
    reference page) served by ``streamlit run`` on 127.0.0.1."""
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", str(app or REPO / "dashboard" / "app.py"),
               "--server.port", str(port), "--server.address", "127.0.0.1",
               "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    log = open(os.devnull, "wb")
    process = subprocess.Popen(command, cwd=REPO, env={**os.environ, **(env or {})}, stdout=log,
                               stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"streamlit exited with code {process.returncode}")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError(f"streamlit did not answer on {url} within {timeout:.0f} s")
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def launch_chromium(playwright):
    """Headless Debian Chromium started by ``playwright`` (``sync_playwright()``'s object)."""
    return playwright.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)


@contextlib.contextmanager
def open_chromium():
    """Yield a headless Debian Chromium of its own Playwright, closed on exit (one at a time per
    thread: Playwright's sync API allows one running instance)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def chromium_page(url: str, *, width: int = 1280, height: int = 900, browser=None):
    """Yield a page of headless Chromium opened at ``url`` (a served dashboard), its first
    script run finished. In ``browser`` (an open Chromium) when given: a new context, closed
    on exit; otherwise a Chromium of its own, closed on exit."""
    if browser is not None:
        context = browser.new_context(viewport={"width": width, "height": height})
        try:
            page = context.new_page()
            page.goto(url, wait_until="domcontentloaded")
            wait_until_idle(page)
            yield page
        finally:
            context.close()
        return
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        own = launch_chromium(playwright)
        try:
            with chromium_page(url, width=width, height=height, browser=own) as page:
                yield page
        finally:
            own.close()


@contextlib.contextmanager
def dashboard_page(env: dict[str, str] | None = None, *, width: int = 1280, height: int = 900, browser=None):
    """``served_dashboard(env)`` opened in ``chromium_page``: yield the page."""
    with served_dashboard(env=env) as url, chromium_page(url, width=width, height=height, browser=browser) as page:
        yield page


def wait_until_idle(page, timeout_ms: int = 120_000) -> None:
    """Wait for the app to finish its script run (no running indicator, main block shown)."""
    page.wait_for_selector("[data-testid='stMain']", timeout=timeout_ms)
    idle = ("() => !document.querySelector(\"[data-testid='stStatusWidget'] [data-testid='stStatusWidgetRunningIcon']\")"
            " && !document.querySelector(\"[data-testid='stSkeleton']\")"
            " && !document.querySelector(\"[data-testid='stSpinner']\")"
            " && !document.querySelector(\"[data-testid='stApp'][data-test-script-state='running']\")")
    for _ in range(2):  # twice: a spinner (st.cache_data) can appear just after a first idle look
        page.wait_for_timeout(400)
        page.wait_for_function(idle, timeout=timeout_ms)
        page.wait_for_timeout(600)


def page_slug(title: str) -> str:
    """A page title as a file name: "Quality–Diversity" -> "quality_diversity"."""
    import re

    return re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")


def _grow(page, width: int, height: int) -> None:
    """The window as tall as the page (it scrolls inside Streamlit's main block), same width."""
    tall = page.evaluate("() => { const m = document.querySelector(\"[data-testid='stMain']\"); "
                         "return m ? m.scrollHeight : document.body.scrollHeight; }")
    page.set_viewport_size({"width": width, "height": max(height, min(int(tall) + 40, 16000))})
    page.wait_for_timeout(800)


def resize(page, width: int, height: int) -> None:
    """The window ``width`` wide and as tall as the page is at that width (at least ``height``):
    Streamlit lays the page out again and every chart redraws at its new width."""
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_timeout(1200)
    wait_until_idle(page)
    _grow(page, width, height)


def visit_pages(url: str, out_dir: Path, *, width: int = 1400, height: int = 1000,
                titles: tuple[str, ...] = PAGE_TITLES, full_page: bool = True, inspect=None,
                at_first_chart: bool = False, browser=None) -> dict[str, dict]:
    """Open every page (or those of ``titles``), return per page: exception texts, headline
    text and screenshot path; ``inspect(page)`` adds its answer under ``"inspected"``;
    ``at_first_chart`` scrolls the page's first chart to the top of the window before the
    screenshot (pages without a chart are shot from their top); ``browser``: an open Chromium
    to use (``chromium_page``)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict] = {}
    with chromium_page(url, width=width, height=height, browser=browser) as page:
        for title in titles:
            link = page.locator("[data-testid='stSidebarNav'] a", has_text=title).first
            link.click()
            page.wait_for_function(
                "(t) => { const h = document.querySelector(\"[data-testid='stMain'] h1\"); "
                "return h && h.innerText.trim().length > 0 && h.innerText.includes(t.split(' ')[0]); }",
                arg=title if title != "Data" else "Data", timeout=120_000)
            wait_until_idle(page)
            exceptions = [e.inner_text() for e in page.locator("[data-testid='stException']").all()]
            heading = page.locator("[data-testid='stMain'] h1").first.inner_text()
            shot = out_dir / f"{page_slug(title)}.png"
            if full_page:
                _grow(page, width, height)
            elif at_first_chart:
                page.evaluate("() => { const c = document.querySelector(\"[data-testid='stPlotlyChart']\"); "
                              "if (c) c.scrollIntoView({block: 'start'}); }")
                page.wait_for_timeout(800)
            page.screenshot(path=str(shot))
            results[title] = {"exceptions": exceptions, "heading": heading, "screenshot": shot,
                              "text": page.locator("[data-testid='stMain']").inner_text()}
            if inspect is not None:  # every chart drawn: the window as tall as the page, same width
                if not full_page:
                    _grow(page, width, height)
                results[title]["inspected"] = inspect(page)
            if full_page or inspect is not None:
                page.set_viewport_size({"width": width, "height": height})
    return results


# What "the page has settled" is read from: Streamlit's script state and spinners, then the
# drawn content (plots that finished drawing, tables, text length, page height). A page has
# settled when the script is not running and none of these changed for ``quiet_s`` seconds.
_PAGE_STATE = """() => {
  const main = document.querySelector("[data-testid='stMain']");
  const running = !!document.querySelector("[data-testid='stStatusWidget'] [data-testid='stStatusWidgetRunningIcon']")
    || !!document.querySelector("[data-testid='stSkeleton']") || !!document.querySelector("[data-testid='stSpinner']")
    || !!document.querySelector("[data-testid='stApp'][data-test-script-state='running']");
  const h1 = main ? main.querySelector('h1') : null;
  return {running: running, heading: h1 ? h1.innerText : '',
          shape: [document.querySelectorAll('.js-plotly-plot').length,
                  document.querySelectorAll('.js-plotly-plot .main-svg').length,
                  document.querySelectorAll("[data-testid='stDataFrame']").length,
                  main ? main.innerText.length : -1, main ? main.scrollHeight : -1]};
}"""


def settle_time(page, action, *, heading: str | None = None, quiet_s: float = 1.0,
                timeout_s: float = 300.0) -> float:
    """Seconds from ``action()`` (e.g. a click on a page link) until the page last changed
    before it stayed idle for ``quiet_s`` (script not running, no spinner, the same plots
    drawn, tables, text and height). ``heading``: the page's h1 must contain it (so the
    previous page's idle state does not count)."""
    start = time.perf_counter()
    action()
    last, changed = None, time.perf_counter()
    while True:
        state = page.evaluate(_PAGE_STATE)
        now = time.perf_counter()
        key = (state["running"], state["heading"], tuple(state["shape"]))
        if key != last:
            last, changed = key, now
        ready = not state["running"] and (heading is None or heading in state["heading"])
        if ready and now - changed >= quiet_s:
            return changed - start
        if now - start > timeout_s:
            raise TimeoutError(f"the page did not settle within {timeout_s:.0f} s (last state {state})")
        page.wait_for_timeout(50)


def nav_link(page, title: str):
    """The sidebar navigation link of the page ``title``."""
    return page.locator("[data-testid='stSidebarNav'] a", has_text=title).first


def drag_on_map(page, tool: str, path, *, steps: int = 8) -> None:
    """Pick ``tool`` (Plotly's ``lasso`` or ``select``, the box) in the first chart's toolbar
    and drag along ``path``: points as fractions of the plot area's width and height from its
    centre, the first where the button goes down, the last where it comes up."""
    page.locator(".js-plotly-plot").first.hover()  # the toolbar shows on hover
    page.locator(f".js-plotly-plot .modebar-btn[data-val='{tool}']").first.click()
    box = page.locator(".js-plotly-plot .nsewdrag").first.bounding_box()
    cx, cy, w, h = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, box["width"], box["height"]
    (fx, fy), *rest = path
    page.mouse.move(cx + fx * w, cy + fy * h)
    page.mouse.down()
    for fx, fy in rest:
        page.mouse.move(cx + fx * w, cy + fy * h, steps=steps)
    page.mouse.up()


def selection_counts(page) -> tuple[int, int]:
    """``(turns, conversations)`` of the Trajectories page's "N turns of M conversations in the
    selection", once it shows (after a click, box or lasso on the map)."""
    import re

    page.wait_for_function(
        "() => document.querySelector(\"[data-testid='stMain']\").innerText.includes('in the selection')",
        timeout=120_000)
    wait_until_idle(page)
    text = page.locator("[data-testid='stMain']").inner_text()
    found = re.search(r"([\d,]+) turns\s+of\s+([\d,]+) conversations\s+in the selection", text)
    assert found, text[:2000]
    return int(found.group(1).replace(",", "")), int(found.group(2).replace(",", ""))


# boxes and a lasso on the Trajectories map, as fractions of the plot area from its centre
FIRST_BOX = [(-0.3, -0.3), (0.05, 0.1)]
SECOND_BOX = [(-0.05, -0.2), (0.35, 0.3)]
LASSO = [(-0.35, -0.1), (0.0, -0.35), (0.3, -0.05), (0.1, 0.3), (-0.25, 0.25), (-0.35, -0.1)]


def selection_settle_times(page, methods=("pca", "umap")) -> dict[tuple[str, str], tuple[float, int]]:
    """``{(projection, "box" | "lasso"): (settle seconds, turns selected)}`` on the Trajectories
    map of the dashboard open in ``page``. Per projection the map is drawn first (its fit is not
    timed), a first box is drawn untimed (the selection's own caches filled), then a second box
    elsewhere and a lasso are timed by ``settle_time`` from the drag until the page stayed idle."""
    nav_link(page, "Trajectories").click()
    page.wait_for_selector(".js-plotly-plot .nsewdrag", timeout=600_000)
    wait_until_idle(page, timeout_ms=600_000)
    measured = {}
    for method in methods:
        if method != "pca":
            page.locator("[data-testid='stRadio'] label", has_text=method).first.click()
            page.wait_for_function("(name) => document.querySelector(\"[data-testid='stMain']\")"
                                   ".innerText.includes(name)", arg=method.upper(), timeout=600_000)
            wait_until_idle(page, timeout_ms=600_000)
            page.wait_for_selector(".js-plotly-plot .nsewdrag", timeout=600_000)
        page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
        drag_on_map(page, "select", FIRST_BOX, steps=10)
        selection_counts(page)
        for tool, name, path in (("select", "box", SECOND_BOX), ("lasso", "lasso", LASSO)):
            seconds = settle_time(page, lambda: drag_on_map(page, tool, path, steps=10), heading="Trajectories")
            measured[(method, name)] = (seconds, selection_counts(page)[0])
    return measured
