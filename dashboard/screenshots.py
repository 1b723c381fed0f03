"""Regenerate the README screenshot (and one per page) from the running app in Chromium.

    python -m dashboard.screenshots [--out-dir docs/screenshots] [--readme docs/screenshot.png]
                                    [--page "Design levers"]
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from dashboard.browser import PAGE_TITLES, REPO, chromium_path, served_dashboard, visit_pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=None, help="keep every page's screenshot here")
    parser.add_argument("--readme", type=Path, default=REPO / "docs" / "screenshot.png")
    parser.add_argument("--page", default="Design levers", choices=PAGE_TITLES)
    args = parser.parse_args(argv)
    if chromium_path() is None:
        print("chromium is not installed (make browser)")
        return 2
    import tempfile

    with tempfile.TemporaryDirectory() as scratch, served_dashboard() as url:
        out_dir = args.out_dir or Path(scratch)
        results = visit_pages(url, out_dir)
        broken = {t: r["exceptions"] for t, r in results.items() if r["exceptions"]}
        if broken:
            print(f"pages with exceptions: {broken}")
            return 1
        args.readme.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(results[args.page]["screenshot"], args.readme)
    print(f"wrote {args.readme} ({args.page})" + (f" and {len(results)} pages into {args.out_dir}" if args.out_dir else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
