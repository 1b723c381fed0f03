"""``python -m engine``: the command-line interface (see ``engine.cli``)."""

from engine.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
