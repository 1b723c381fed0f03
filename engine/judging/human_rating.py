"""People rating ideas: paper A's Consensual Assessment Technique, one file per rater.

Paper A (Methods, "Creativity evaluation") had five trained judges rate every idea on novelty
(originality relative to the other solutions) and usefulness (practicality, feasibility) on a
10-point scale, 0 when an idea is irrelevant to the task; the ideas were paraphrased first
(source blind) and shown "in a single randomized order that intermixed human and LLM-generated
ideas within each task", the same sequence for all five judges; agreement is ICC(3,5) per task
and scale (Table 4); each idea's mean rating is min-max scaled within its task,
x' = (x - min_T x) / (max_T x - min_T x), and creativity = novelty x usefulness.

This module does the same for people using the dashboard, with no model involved:

* ``idea_items(dataset)``: one item per conversation with status ok (or no status column), a
  task and a non-blank idea; the text is ``paraphrased_idea`` where the dataset has it (what
  paper A's judges read), else ``final_idea``; each item says which (``text_column``).
* ``open_order(dataset)``: the shared order, ``<ratings root>/<dataset slug>/order.json``,
  written once: one shuffle seeded from the dataset's name, the items of each task kept
  together (in the order their task first comes up in the shuffle), the text of each item as
  shown. Once written it is the order; items since gone from the dataset are counted
  (``Order.missing``) and kept in the file, items added since are counted (``Order.unordered``).
* ``rate(...)``: one rating appended at once (``engine.storage.durable.append_line``) to
  ``<dataset slug>/raters/<rater slug>.jsonl``; rating again appends, the last record counts.
  ``rater_ratings`` reads them back (a torn last line is reported, never fatal) and
  ``next_position`` is where a rater resumes: the first item of the order they have not rated.
* ``export_table`` / ``write_export``: an ``ideas_with_ratings_clean.csv``-shaped table
  (``engine.importers.ratings.read_ideas`` reads it) with per-rater ``N1..Nk`` / ``U1..Uk``
  (raters numbered by name, sorted), the scaled means and their product, and ``irrelevant``
  (paper A, "Data collection": left out when most judges gave a 0; here kept with its scores,
  no scaled mean, out of its task's range); ``<name>.raters.json`` beside it says who N1.. is.
* ``agreement(...)``: ICC(3,k), ICC(2,1), ICC(2,k) (Shrout & Fleiss 1979) and Krippendorff's
  alpha per scale (``engine.stats.agreement``) on the items every rater rated; with fewer
  than 3 such items, the counts and why there is no coefficient.

The ratings root is ``$CDL_RATINGS_DIR`` or ``$XDG_DATA_HOME/creativity-dynamics-lab/human_ratings``
(``~/.local/share/...``): people's ratings are kept out of the checkout, where they could mix with
the project's own files, and out of the cache folder, which may be emptied.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from engine.errors import InputError, write_error
from engine.storage.durable import append_line, atomic_write_bytes, read_records
from engine.storage.jsonl import to_json, to_json_line

RATINGS_ENV = "CDL_RATINGS_DIR"
SCALE = tuple(range(0, 11))  # paper A: a 10-point scale, 0 = irrelevant to the task
IRRELEVANT = 0
SCALES = ("novelty", "usefulness")
TEXT_COLUMNS = ("paraphrased_idea", "final_idea")  # paper A's judges read the paraphrase
ORDER_FILE = "order.json"
RATERS_FOLDER = "raters"
MIN_SHARED_ITEMS = 3  # engine.stats.guards.MIN_GROUPS_FOR_INTERVAL: the ICC's minimum
MAX_NAME = 64
_NAME_PUNCTUATION = set(" -_.'")


def ratings_root() -> Path:
    """Where ratings live: ``$CDL_RATINGS_DIR`` if set, else the user's data folder
    (``$XDG_DATA_HOME`` or ``~/.local/share``) / ``creativity-dynamics-lab/human_ratings``."""
    explicit = os.environ.get(RATINGS_ENV)
    if explicit:
        return Path(explicit).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home) / "creativity-dynamics-lab" / "human_ratings"


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


# -- names ----------------------------------------------------------------------------------------
def slug(text: str) -> str:
    """A name as a file name: case folded, every run of characters other than letters and
    digits one ``-``, no ``-`` at either end (``"Ann O'Neil"`` -> ``"ann-o-neil"``)."""
    folded = unicodedata.normalize("NFC", str(text)).casefold()
    return "-".join(part for part in re.split(r"[^\w]|_", folded) if part)


def check_rater_name(name, field: str = "rater") -> str:
    """The rater's name as stored (NFC, outer blanks removed): 1-64 characters, each a letter,
    a digit, a space or one of ``-_.'``, at least one letter or digit; anything else is an
    InputError naming ``field``."""
    if not isinstance(name, str):
        raise InputError(f"a rater's name is text, got {type(name).__name__}", field=field)
    text = unicodedata.normalize("NFC", name).strip()
    if not 1 <= len(text) <= MAX_NAME:
        raise InputError(f"a rater's name has 1 to {MAX_NAME} characters, got {len(text)}", field=field)
    bad = [c for c in text if not (c.isalnum() or c in _NAME_PUNCTUATION)]
    if bad:
        raise InputError(f"a rater's name may hold letters, digits, spaces and - _ . ' only; "
                         f"{bad[0]!r} is not allowed", field=field)
    if not slug(text):
        raise InputError("a rater's name needs at least one letter or digit", field=field)
    return text


def check_score(value, field: str) -> int:
    """A rating on paper A's scale: a whole number 0-10 (0 = irrelevant to the task)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, float, np.floating)):
        raise InputError(f"a rating is a whole number from 0 to 10, got {value!r}", field=field)
    if isinstance(value, (float, np.floating)) and not float(value).is_integer():
        raise InputError(f"a rating is a whole number from 0 to 10, got {value!r}", field=field)
    if int(value) not in SCALE:
        raise InputError(f"a rating is a whole number from 0 to 10 (0 = irrelevant), got {int(value)}",
                         field=field)
    return int(value)


# -- items ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Item:
    """One idea to rate: ``item_id`` (the conversation id), its task and the task's prompt,
    the ``text`` shown and the column it came from; ``source`` is the dataset row's (never
    shown to a rater, only exported)."""

    item_id: str
    task: str
    prompt: str
    text: str
    text_column: str
    source: str | None = None


@dataclass(frozen=True)
class ItemList:
    """The ideas of a dataset that can be rated and what was left out (``counts``:
    ``conversations``, ``not_ok`` (status other than ok), ``no_task``, ``no_text``,
    ``paraphrased`` / ``final_idea`` (which text the items show), ``prompt_unknown`` (task id
    shown instead of a prompt))."""

    dataset: str
    items: tuple[Item, ...]
    text_column: str | None  # paraphrased_idea when the dataset has it, else final_idea
    counts: dict

    def by_id(self) -> dict[str, Item]:
        return {item.item_id: item for item in self.items}

    def describe(self) -> str:
        c = self.counts
        if self.text_column is None:
            return f"dataset {self.dataset}: no idea texts (no final_idea or paraphrased_idea column)"
        parts = [f"{len(self.items):,} ideas to rate of {c['conversations']:,} conversations"]
        if self.text_column == "paraphrased_idea":
            parts.append(f"shown as paraphrased (paraphrased_idea, as paper A's judges read them): {c['paraphrased']:,}"
                         + (f"; {c['final_idea']:,} without a paraphrase shown as written (final_idea)"
                            if c["final_idea"] else ""))
        else:
            parts.append("shown as written (final_idea): this dataset has no paraphrases (paper A's judges read "
                         "paraphrases; python -m engine run --judge-paraphrase MODEL makes them)")
        for key, words in (("not_ok", "not finished (status not ok)"), ("no_task", "without a task"),
                           ("no_text", "without an idea text")):
            if c[key]:
                parts.append(f"{c[key]:,} conversations {words} left out")
        if c["prompt_unknown"]:
            parts.append(f"{c['prompt_unknown']:,} ideas of a task the project does not define: the task id "
                         "is shown in place of its prompt")
        return f"dataset {self.dataset}: " + "; ".join(parts)


def _blank(value) -> bool:
    """None, NaN, pd.NA or text of blanks only."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return True
    return not str(value).strip()


def task_prompt(task: str) -> tuple[str, bool]:
    """(the prompt shown with an idea of ``task``, whether the project defines the task): the
    prompt of ``engine.tasks`` for a known task id, else the id itself."""
    from engine.tasks import TASKS

    known = TASKS.get(task)
    return (known.prompt, True) if known is not None else (task, False)


def idea_items(dataset) -> ItemList:
    """The rateable ideas of ``dataset`` (an ``engine.datasets.Dataset``), in table order."""
    frame = dataset.conversations
    column = next((c for c in TEXT_COLUMNS if c in frame.columns and not frame[c].map(_blank).all()), None)
    if column is None and "final_idea" in frame.columns:
        column = "final_idea"
    counts = {"conversations": len(frame), "not_ok": 0, "no_task": 0, "no_text": 0, "paraphrased": 0,
              "final_idea": 0, "prompt_unknown": 0}
    if column is None or "conversation_id" not in frame.columns:
        return ItemList(dataset.name, (), None, counts)
    items, seen = [], {}
    for row, record in enumerate(frame.to_dict("records"), start=1):
        item_id = str(record["conversation_id"])
        if item_id in seen:
            raise InputError(f"conversation {item_id!r} appears twice (also on row {seen[item_id]})",
                             path=str(dataset.path) if dataset.path else None, row=row, field="conversation_id")
        seen[item_id] = row
        if "status" in frame.columns and str(record.get("status")) != "ok":
            counts["not_ok"] += 1
            continue
        if _blank(record.get("task")):
            counts["no_task"] += 1
            continue
        shown, used = record.get(column), column
        if column == "paraphrased_idea" and _blank(shown):
            shown, used = record.get("final_idea"), "final_idea"
        if _blank(shown):
            counts["no_text"] += 1
            continue
        counts["paraphrased" if used == "paraphrased_idea" else "final_idea"] += 1
        task = str(record["task"])
        prompt, known = task_prompt(task)
        counts["prompt_unknown"] += not known
        source = None if _blank(record.get("source")) else str(record.get("source"))
        items.append(Item(item_id, task, prompt, str(shown).strip(), used, source))
    return ItemList(dataset.name, tuple(items), column, counts)


# -- the shared order -----------------------------------------------------------------------------
def order_seed(dataset_name: str) -> int:
    """The shuffle's seed: the first 63 bits of the SHA-256 of the dataset's name."""
    return int.from_bytes(hashlib.sha256(str(dataset_name).encode("utf-8")).digest()[:8], "big") >> 1


def shared_order(items, seed: int) -> list[str]:
    """Item ids in the order every rater sees: ``items`` (``(item_id, task)`` pairs or Items)
    sorted by id, shuffled once with ``numpy.random.default_rng(seed)``, then the items of each
    task brought together (stable), tasks in the order they first come up in the shuffle
    (paper A: one randomized order, mixed within each task)."""
    pairs = sorted((i.item_id, i.task) if isinstance(i, Item) else (str(i[0]), str(i[1])) for i in items)
    shuffled = [pairs[k] for k in np.random.default_rng(seed).permutation(len(pairs))]
    first = {}
    for _, task in shuffled:
        first.setdefault(task, len(first))
    return [item_id for item_id, task in sorted(shuffled, key=lambda p: first[p[1]])]


@dataclass(frozen=True)
class Order:
    """The shared order of a dataset as ``order.json`` holds it (``item_ids`` and ``items``:
    id -> task, prompt, text, text_column), with what differs from the dataset now:
    ``missing`` ids of the order no longer among its items (kept in the file, not shown),
    ``unordered`` items of the dataset that came after the order was written (not shown)."""

    dataset: str
    seed: int
    created: str
    item_ids: tuple[str, ...]
    items: dict
    path: Path
    missing: tuple[str, ...] = ()
    unordered: tuple[str, ...] = ()
    written: bool = False  # by this call

    @property
    def sequence(self) -> tuple[str, ...]:
        """The ids shown, in order (the order's ids still in the dataset)."""
        gone = set(self.missing)
        return tuple(i for i in self.item_ids if i not in gone)

    def file_position(self, item_id: str) -> int:
        """1-based position of ``item_id`` in ``order.json``."""
        return self.item_ids.index(item_id) + 1

    def describe(self) -> str:
        text = (f"shared order of dataset {self.dataset}: {len(self.sequence):,} ideas, the same for every rater "
                f"(seed {self.seed} from the dataset's name, written {self.created})")
        if self.missing:
            text += (f"; {len(self.missing):,} idea(s) of the order are no longer in the dataset: not shown "
                     f"(kept in {ORDER_FILE})")
        if self.unordered:
            text += f"; {len(self.unordered):,} idea(s) of the dataset came after the order was written: not shown"
        return text


def dataset_slug(dataset_name: str) -> str:
    """A dataset's name as a folder name: case folded, ``_``, ``-`` and ``.`` kept between
    letters and digits, every other run of characters one ``-`` (``"My run 2"`` -> ``"my-run-2"``)."""
    folded = unicodedata.normalize("NFC", str(dataset_name)).casefold()
    return re.sub(r"[^\w.\-]+", "-", folded).strip("-._")


def dataset_folder(dataset_name: str, root: Path | None = None) -> Path:
    """``<ratings root>/<dataset slug>``; two names of one slug are told apart by ``order.json``."""
    name_slug = dataset_slug(dataset_name)
    if not name_slug:
        raise InputError(f"dataset name {dataset_name!r} has no letter or digit", field="dataset")
    return Path(root or ratings_root()) / name_slug


def _order_record(item_list: ItemList, seed: int) -> dict:
    by_id = item_list.by_id()
    ids = shared_order(item_list.items, seed)
    return {"dataset": item_list.dataset, "seed": seed, "created": now(), "text_column": item_list.text_column,
            "item_ids": ids,
            "items": {i: {"task": by_id[i].task, "prompt": by_id[i].prompt, "text": by_id[i].text,
                          "text_column": by_id[i].text_column} for i in ids}}


def read_order(path: Path, dataset_name: str) -> dict:
    """``order.json`` checked: its fields, and that it is this dataset's (two names with one
    slug never share a folder)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"not a readable order file ({type(error).__name__})", path=str(path)) from None
    for key, kind in (("dataset", str), ("seed", int), ("created", str), ("item_ids", list), ("items", dict)):
        if not isinstance(record, dict) or not isinstance(record.get(key), kind):
            raise InputError(f"expected {kind.__name__}", path=str(path), field=key)
    if record["dataset"] != dataset_name:
        raise InputError(f"this folder holds the ratings of dataset {record['dataset']!r}, whose name gives the same "
                         f"folder name as {dataset_name!r}; rename one of the datasets", path=str(path),
                         field="dataset")
    for position, item_id in enumerate(record["item_ids"], start=1):
        entry = record["items"].get(item_id) if isinstance(item_id, str) else None
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("task", "text")):
            raise InputError("an item of the order has no task or text", path=str(path), row=position,
                             field="items")
    return record


def _as_order(record: dict, item_list: ItemList, path: Path, written: bool) -> Order:
    present = set(item_list.by_id())
    ids = tuple(record["item_ids"])
    return Order(record["dataset"], record["seed"], record["created"], ids, record["items"], path,
                 missing=tuple(i for i in ids if i not in present),
                 unordered=tuple(i.item_id for i in item_list.items if i.item_id not in set(ids)), written=written)


def planned_order(item_list: ItemList, root: Path | None = None) -> Order:
    """The order as it is or as it would be written (nothing is written)."""
    path = dataset_folder(item_list.dataset, root) / ORDER_FILE
    if path.exists():
        return _as_order(read_order(path, item_list.dataset), item_list, path, False)
    return _as_order(_order_record(item_list, order_seed(item_list.dataset)), item_list, path, False)


def open_order(item_list: ItemList, root: Path | None = None) -> Order:
    """The dataset's shared order, ``order.json`` written the first time (under a lock, so two
    raters starting at once write it once)."""
    folder = dataset_folder(item_list.dataset, root)
    path = folder / ORDER_FILE
    if path.exists():
        return _as_order(read_order(path, item_list.dataset), item_list, path, False)
    if not item_list.items:
        raise InputError(f"dataset {item_list.dataset} has no idea to rate", field="dataset")
    lock_path = folder / ".order.lock"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise write_error(lock_path, error) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if path.exists():  # another rater wrote it while we waited
            return _as_order(read_order(path, item_list.dataset), item_list, path, False)
        record = _order_record(item_list, order_seed(item_list.dataset))
        atomic_write_bytes(path, (to_json(record, indent=1) + "\n").encode("utf-8"))
        return _as_order(record, item_list, path, True)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


# -- ratings --------------------------------------------------------------------------------------
def rater_file(order: Order, rater: str) -> Path:
    return order.path.parent / RATERS_FOLDER / f"{slug(check_rater_name(rater))}.jsonl"


@dataclass
class RaterRatings:
    """A rater's records (every one, in file order), the last rating of each item, and what
    was reported while reading (a torn last line, ratings of items not in the order)."""

    rater: str
    path: Path
    records: list[dict] = field(default_factory=list)
    latest: dict[str, dict] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _check_record(record: dict, path: Path, row: int) -> dict:
    for key in ("item_id", "rater"):
        if not isinstance(record.get(key), str):
            raise InputError("expected text", path=str(path), row=row, field=key)
    for scale in SCALES:
        try:
            check_score(record.get(scale), scale)
        except InputError as error:
            raise InputError(error.reason, path=str(path), row=row, field=scale) from None
    return record


def _read_file(path: Path, order: Order) -> RaterRatings:
    notes: list[str] = []
    found = RaterRatings("", path)
    if not path.exists():
        return found
    in_order = set(order.item_ids)
    unknown = 0
    for row, record in read_records(path, say=notes.append):
        record = _check_record(record, path, row)
        if not found.rater:
            found.rater = record["rater"]
        elif record["rater"] != found.rater:
            raise InputError(f"holds ratings of {found.rater!r} and of {record['rater']!r}", path=str(path),
                             row=row, field="rater")
        found.records.append(record)
        if record["item_id"] in in_order:
            found.latest[record["item_id"]] = record  # the last rating counts
        else:
            unknown += 1
    if unknown:
        notes.append(f"{unknown} rating(s) of ideas not in the order left out ({path.name})")
    found.notes = notes
    return found


def rater_ratings(order: Order, rater: str) -> RaterRatings:
    """``rater``'s ratings of this order's dataset. A file of the same slug that belongs to a
    different name is an InputError (two names never share a file)."""
    name = check_rater_name(rater)
    path = rater_file(order, name)
    found = _read_file(path, order)
    if found.rater and found.rater != name:
        raise InputError(f"the name {name!r} is too close to the rater {found.rater!r} already here (the same "
                         "file name); use that name if it is you, or another name", field="rater")
    found.rater = name
    return found


def rate(order: Order, rater: str, item_id: str, novelty, usefulness) -> dict:
    """Save one rating now (one fsynced line, whole or not at all) and return its record."""
    name = check_rater_name(rater)
    if item_id not in set(order.sequence):
        raise InputError(f"{item_id!r} is not an idea of the shared order of {order.dataset}", field="item_id")
    record = {"dataset": order.dataset, "item_id": item_id, "novelty": check_score(novelty, "novelty"),
              "usefulness": check_score(usefulness, "usefulness"), "rater": name,
              "position": order.file_position(item_id), "time": now()}
    rater_ratings(order, name)  # refuses a different name on this slug's file
    path = rater_file(order, name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise write_error(path.parent, error) from None
    append_line(path, to_json_line(record))
    return record


def next_position(order: Order, latest: dict) -> int | None:
    """0-based index in ``order.sequence`` of the first idea not yet rated (None: all rated)."""
    return next((k for k, item_id in enumerate(order.sequence) if item_id not in latest), None)


def all_raters(order: Order) -> dict[str, RaterRatings]:
    """Every rater of the order's dataset with at least one record, by name (sorted: the
    export's numbering, ``rater_number``)."""
    folder = order.path.parent / RATERS_FOLDER
    found = {}
    if folder.is_dir():
        for path in sorted(folder.glob("*.jsonl")):
            ratings = _read_file(path, order)
            if ratings.records:
                found[ratings.rater] = ratings
    return {name: found[name] for name in sorted(found, key=rater_sort_key)}


def rater_sort_key(name: str) -> tuple[str, str]:
    """Raters are numbered N1, N2, ... by name: case folded, then as written."""
    return name.casefold(), name


def ratings_matrix(order: Order, raters: dict[str, RaterRatings], scale: str) -> pd.DataFrame:
    """Items (the order's sequence) x raters (sorted by name) of the last ratings on ``scale``;
    NaN where a rater has not rated an item."""
    return pd.DataFrame({name: [float(r.latest[i][scale]) if i in r.latest else np.nan for i in order.sequence]
                         for name, r in raters.items()}, index=pd.Index(order.sequence, name="item_id"))


# -- export ---------------------------------------------------------------------------------------
HUMAN_SOURCE = "human_data"  # engine.importers.ratings: the release's mark of a human row


def min_max_within(values: pd.Series, groups: pd.Series) -> pd.Series:
    """Paper A's x' = (x - min_T x) / (max_T x - min_T x) within each group T (task); NaN where
    a task's values are all equal (the scaling is undefined there)."""
    low = values.groupby(groups).transform("min")
    high = values.groupby(groups).transform("max")
    spread = high - low
    return ((values - low) / spread).where(spread > 0)


def irrelevant_by_majority(table: pd.DataFrame, k: int) -> pd.Series:
    """Paper A (Methods, "Data collection") left out the ideas that at least three of its five
    judges rated 0: here, an idea more than half of whose raters gave a 0 on either scale.
    Such an idea keeps its raters' scores but has no scaled mean and is out of its task's range."""
    if table.empty or k == 0:
        return pd.Series(False, index=table.index, dtype=bool)
    said_zero = pd.DataFrame({j: (table[f"N{j}"] == 0) | (table[f"U{j}"] == 0) for j in range(1, k + 1)})
    rated = pd.DataFrame({j: table[f"N{j}"].notna() for j in range(1, k + 1)})
    return (said_zero.fillna(False).astype(int).sum(axis=1) * 2 > rated.sum(axis=1)).astype(bool)


@dataclass(frozen=True)
class Export:
    """The ideas-shaped table (``table``), who is N1.. (``legend``: column -> rater) and what
    the file says about itself (``info``, written as ``<name>.raters.json``)."""

    table: pd.DataFrame
    legend: dict[str, str]
    info: dict


def export_table(order: Order, item_list: ItemList, raters: dict[str, RaterRatings] | None = None) -> Export:
    """One row per idea of the order with at least one rating, in the order's sequence."""
    raters = all_raters(order) if raters is None else raters
    names = sorted(raters, key=rater_sort_key)
    by_id = item_list.by_id()
    legend = {f"{prefix}{k}": name for prefix in ("N", "U") for k, name in enumerate(names, start=1)}
    rows = []
    for item_id in order.sequence:
        values = {f"{s[0].upper()}{k}": raters[name].latest[item_id][s] if item_id in raters[name].latest else None
                  for s in SCALES for k, name in enumerate(names, start=1)}
        if all(v is None for v in values.values()):
            continue
        item, stored = by_id[item_id], order.items[item_id]
        human = item.source == "human"
        rows.append({"file_id": item_id, "question_id": stored["task"], "final_idea": stored["text"],
                     "source": HUMAN_SOURCE if human else item.source, "data_type": "human" if human else "experiment",
                     **values})
    rater_columns = [f"{p}{k}" for p in ("N", "U") for k in range(1, len(names) + 1)]
    table = pd.DataFrame(rows, columns=["file_id", "question_id", "final_idea", "source", "data_type", *rater_columns])
    for column in rater_columns:
        table[column] = pd.to_numeric(table[column]).astype("Int64")
    irrelevant = irrelevant_by_majority(table, len(names))
    unscaled = {}
    for scale, prefix in (("novelty", "N"), ("usefulness", "U")):
        columns = [c for c in rater_columns if c.startswith(prefix)]
        mean = table[columns].astype(float).mean(axis=1).where(~irrelevant)
        scaled = min_max_within(mean, table["question_id"])
        table[f"avg_{scale}_rating"] = scaled
        unscaled[scale] = sorted(table.loc[scaled.isna() & mean.notna(), "question_id"].unique().tolist())
    table["avg_creativity_rating"] = table["avg_novelty_rating"] * table["avg_usefulness_rating"]
    table["irrelevant"] = irrelevant
    info = {"dataset": order.dataset, "items": len(table), "items_in_order": len(order.sequence),
            "written": now(), "columns": legend,
            "raters": [{"number": k, "name": name, "ideas_rated": sum(i in raters[name].latest for i in order.sequence)}
                       for k, name in enumerate(names, start=1)],
            "scale": "0-10 (0 = irrelevant to the task), paper A's Consensual Assessment Technique",
            "averages": "mean over the idea's raters, min-max scaled within task (paper A, Methods); "
                        "creativity = novelty x usefulness; ideas irrelevant by the majority rule left blank",
            "irrelevant": int(irrelevant.sum()), "tasks_not_scaled": unscaled, "missing_from_dataset": len(order.missing),
            "text_column": item_list.text_column, "order_seed": order.seed}
    return Export(table, legend, info)


def export_csv(export: Export) -> bytes:
    """The ratings as CSV, a cell a spreadsheet would evaluate escaped (``engine.storage.csv_cells``)."""
    from engine.storage.csv_cells import safe_csv

    return safe_csv(export.table).encode("utf-8")


def export_legend_json(export: Export) -> bytes:
    return (to_json(export.info, indent=1) + "\n").encode("utf-8")


def write_export(export: Export, path: str | Path) -> tuple[Path, Path]:
    """The CSV at ``path`` and ``<stem>.raters.json`` beside it, each written whole."""
    path = Path(path)
    legend = path.with_name(f"{path.stem}.raters.json")
    atomic_write_bytes(path, export_csv(export))
    atomic_write_bytes(legend, export_legend_json(export))
    return path, legend


# -- agreement ------------------------------------------------------------------------------------
AGREEMENT_COLUMNS = ("scale", "task", "N items", "k raters", "ICC(3,k)", "ICC(3,k) low", "ICC(3,k) high",
                     "ICC(2,1)", "ICC(2,1) low", "ICC(2,1) high", "ICC(2,k)", "alpha (interval)", "note")


@dataclass(frozen=True)
class Agreement:
    """The raters' agreement per scale (``table``, one row per scale for all tasks, then per
    task when there are several) or why there is none (``reason``), the items every rater
    rated (``shared``), each rater's count (``counts``) and one sentence per row (``texts``)."""

    table: pd.DataFrame
    shared: int
    counts: dict[str, int]
    reason: str
    texts: tuple[str, ...] = ()


def _agreement_row(scale: str, task: str, matrix: pd.DataFrame) -> tuple[dict, str]:
    from engine.stats.agreement import icc, krippendorff_alpha, panel_agreement

    row = dict.fromkeys(AGREEMENT_COLUMNS)
    row.update({"scale": scale, "task": task, "N items": len(matrix), "k raters": matrix.shape[1], "note": ""})
    notes = []
    try:
        found = icc(matrix.to_numpy(float))
        for kind in ("ICC(3,k)", "ICC(2,1)"):
            row[kind] = found.values[kind]
            row[f"{kind} low"], row[f"{kind} high"] = found.intervals[kind]
        row["ICC(2,k)"] = found.values["ICC(2,k)"]
    except InputError as error:
        notes.append(f"ICC: {error.reason}")
    try:
        row["alpha (interval)"] = krippendorff_alpha(matrix.to_numpy(float)).alpha
    except InputError as error:
        notes.append(f"alpha: {error.reason}")
    row["note"] = "; ".join(notes)
    text = panel_agreement(matrix.to_numpy(float), judge="human raters")["text"]
    return row, f"{scale}" + (f", task {task}" if task != "all" else "") + f": {text}"


def agreement(order: Order, raters: dict[str, RaterRatings] | None = None) -> Agreement:
    """Agreement of the raters on the ideas every one of them rated (paper A's ICC(3,k) of
    Table 4, with ICC(2,1), ICC(2,k) and alpha); fewer than 2 raters or 3 shared ideas: the
    counts and the reason."""
    raters = all_raters(order) if raters is None else raters
    counts = {name: sum(i in r.latest for i in order.sequence) for name, r in raters.items()}
    empty = pd.DataFrame(columns=list(AGREEMENT_COLUMNS))
    if len(raters) < 2:
        return Agreement(empty, 0, counts, f"{len(raters)} rater(s) so far: agreement needs two raters of the "
                                           "same ideas")
    shared = [i for i in order.sequence if all(i in r.latest for r in raters.values())]
    said = ", ".join(f"{name} {n}" for name, n in counts.items())
    if len(shared) < MIN_SHARED_ITEMS:
        return Agreement(empty, len(shared), counts,
                         f"{len(shared)} idea(s) rated by all {len(raters)} raters ({said} rated): agreement needs at "
                         f"least {MIN_SHARED_ITEMS}")
    tasks = {i: order.items[i]["task"] for i in shared}
    rows, texts = [], []
    for scale in SCALES:
        matrix = ratings_matrix(order, raters, scale).loc[shared]
        groups = [("all", matrix)]
        if len(set(tasks.values())) > 1:
            groups += [(task, part) for task, part in matrix.groupby(pd.Series(tasks), sort=True)]
        for task, part in groups:
            if len(part) < MIN_SHARED_ITEMS:
                row = dict.fromkeys(AGREEMENT_COLUMNS)
                row.update({"scale": scale, "task": task, "N items": len(part), "k raters": part.shape[1],
                            "note": f"fewer than {MIN_SHARED_ITEMS} shared ideas in this task"})
                rows.append(row)
                continue
            row, text = _agreement_row(scale, task, part)
            rows.append(row)
            texts.append(text)
    table = pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))
    for column in AGREEMENT_COLUMNS[4:12]:
        table[column] = pd.to_numeric(table[column])
    return Agreement(table, len(shared), counts, "", tuple(texts))
