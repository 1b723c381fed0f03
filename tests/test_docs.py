"""The manual's links: every relative link in the README, ARCHITECTURE.md and docs/ names a file
that exists, and every ``#anchor`` a heading of that file (GitHub's heading ids)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$", re.MULTILINE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def manual(root: Path) -> list[Path]:
    return [p for p in (root / "README.md", root / "ARCHITECTURE.md") if p.is_file()] + \
        sorted((root / "docs").rglob("*.md"))


def heading_id(heading: str) -> str:
    """GitHub's id of a heading: lower case, punctuation dropped, each space a hyphen."""
    text = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower())
    return text.replace(" ", "-")


def broken_links(root: Path) -> list[str]:
    """``file: target`` for each relative link whose file or heading is not there."""
    found = []
    for page in manual(root):
        text = FENCE.sub("", page.read_text(encoding="utf-8"))
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                found.append(f"{page.relative_to(root).as_posix()}: {target}")
            elif anchor and file.suffix == ".md":
                ids = {heading_id(h) for h in HEADING.findall(FENCE.sub("", file.read_text(encoding="utf-8")))}
                if anchor not in ids:
                    found.append(f"{page.relative_to(root).as_posix()}: {target}")
    return found


def test_heading_ids_are_githubs():
    assert heading_id("What a cluster buys (bench_scale --ray)") == "what-a-cluster-buys-bench_scale---ray"
    assert heading_id("How to add a feature / a method / a backend / a page") == \
        "how-to-add-a-feature--a-method--a-backend--a-page"
    assert heading_id("The shipped data: OCSAI's test set") == "the-shipped-data-ocsais-test-set"
    assert heading_id("`local_smollm2_paper_b_benchmarks`") == "local_smollm2_paper_b_benchmarks"


def test_link_checker_sees_a_missing_file_and_a_missing_heading(tmp_path):
    (tmp_path / "docs" / "howto").mkdir(parents=True)
    (tmp_path / "README.md").write_text("[a](docs/howto/a.md#two) [b](docs/b.md) [web](https://x.org/y)\n"
                                        "```\n[not a link](nowhere.md)\n```\n")
    (tmp_path / "docs" / "howto" / "a.md").write_text("# One\n\n## Two words\n[up](../../README.md)\n")
    assert broken_links(tmp_path) == ["README.md: docs/howto/a.md#two", "README.md: docs/b.md"]


def test_every_link_of_the_manual_resolves():
    assert broken_links(REPO) == []
