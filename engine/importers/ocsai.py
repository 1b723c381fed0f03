"""OCSAI's fine-tuning files as rated items (massivetexts/ocsai, MIT licence, ``data/ocsai1/``).

Each line of those JSONL files is ``{"prompt": "AUT Prompt:<object>\\nResponse:<response>\\nScore:\\n",
"completion": "<score x 10>"}``: an Alternate Uses response and the human raters' mean
originality on a 1-5 scale, stored as ten times the score (``"27"`` = 2.7). Organisciak, Acar,
Dumas & Berthiaume (2023) built them from nine earlier studies (listed with the shipped copy in
``cached_runs/human_ratings/ocsai1_test/README.md``).

``read_ocsai_jsonl`` returns ``prompt`` (the object), ``response``, ``human`` (the score / 10) and
``row`` (the line); a line in another form is an InputError naming the line and field.

    python -m engine.importers.ocsai RAW.jsonl OUT.csv     # what built the shipped ratings.csv
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd

from engine.errors import InputError
from engine.storage.records import read_jsonl_records

PROMPT = re.compile(r"^AUT Prompt:(?P<object>.*?)\nResponse:(?P<response>.*)\nScore:\s*$", re.DOTALL)
COMPLETION = re.compile(r"^\s*(\d{1,3})\s*$")
SCORE_RANGE = (1.0, 5.0)


def read_ocsai_jsonl(path: str | Path) -> pd.DataFrame:
    path = Path(path)
    rows = []
    for record in read_jsonl_records(path):
        prompt, completion = record.values.get("prompt"), record.values.get("completion")
        match = PROMPT.match(prompt) if isinstance(prompt, str) else None
        if not match or not match.group("object").strip() or not match.group("response").strip():
            raise InputError("expected 'AUT Prompt:<object>\\nResponse:<response>\\nScore:'", path=str(path),
                             row=record.row, field="prompt")
        score = COMPLETION.match(completion) if isinstance(completion, str) else None
        if not score:
            raise InputError(f"expected ten times a score as text, such as '27', got {completion!r}",
                             path=str(path), row=record.row, field="completion")
        human = int(score.group(1)) / 10
        if not SCORE_RANGE[0] <= human <= SCORE_RANGE[1]:
            raise InputError(f"score {human:g} is outside OCSAI's 1-5 scale", path=str(path), row=record.row,
                             field="completion")
        rows.append({"id": f"line-{record.row}", "prompt": match.group("object").strip(),
                     "response": match.group("response").strip(), "human": human, "row": record.row})
    return pd.DataFrame(rows)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m engine.importers.ocsai RAW.jsonl OUT.csv", file=sys.stderr)
        return 2
    frame = read_ocsai_jsonl(argv[0])
    frame[["id", "prompt", "response", "human"]].to_csv(argv[1], index=False)
    print(f"wrote {argv[1]}: {len(frame):,} items, {frame['prompt'].nunique()} prompts")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
