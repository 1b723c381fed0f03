"""``python -m dashboard.screenshots``: every dashboard page at 1440×900 and 1024×768 in
headless Chromium, into ``docs/screenshots/`` (run from the repository). The same command as
``python -m devtools.screenshots``, which does the work; the options are its own."""

if __name__ == "__main__":
    from devtools.screenshots import main

    raise SystemExit(main())
