"""Small Streamlit helpers shared by the pages."""

from __future__ import annotations

import re
import string

import pandas as pd
import streamlit as st

from dashboard.page_data import datasets
from dashboard.widgets import cached, session

PUBLISHED_BADGE = ":orange-badge[published]"
OURS_BADGE = ":blue-badge[computed from this dataset]"
BESIDE_BADGE = ":blue-badge[ours] :orange-badge[published] :gray-badge[row by row]"


# --------------------------------------------------------------------------- user text
# Every ASCII punctuation character may be backslash-escaped in CommonMark, and an escaped
# character is shown literally; escaping all of them disarms links, images, autolinks
# (``http://``, ``www.``), raw HTML, emphasis, headings, lists, tables, LaTeX (``$``),
# entities (``&``) and Streamlit's ``:color[...]`` / ``:icon:`` directives at once; GFM's
# literal autolinks are broken by a word joiner (below).
_MARKDOWN_PUNCTUATION = re.compile("([" + re.escape(string.punctuation) + "])")
# GitHub-flavoured markdown (Streamlit's renderer) also turns URLs and e-mail addresses in
# plain text into links, after escapes are resolved (so backslashes do not stop it): an
# invisible WORD JOINER (U+2060) inside each trigger ("www.", "://", "@") does.
WORD_JOINER = "\u2060"
_AUTOLINK_TRIGGERS = re.compile(r"(?i)(?<=w)(?=ww\.)|(?<=:)(?=//)|(?<=@)")


def escape(value) -> str:
    """``value`` (an error, a file name, a model's reply...) as markdown that shows it as
    typed: st.error/st.warning/st.info/st.success/st.caption/st.markdown render markdown,
    so text from users, files and models goes through here before it is put in one."""
    text = str(value).replace("\r\n", "\n").replace("\r", "\n")
    # leading blanks would make an indented code block, where escapes are shown verbatim
    text = "\n".join(line.lstrip() for line in text.split("\n"))
    text = _AUTOLINK_TRIGGERS.sub(WORD_JOINER, text)
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)


HEADING_KEY = "last_block_heading"


def published(title: str) -> None:
    """Heading of a block of the papers' own numbers, always labelled as published_a. The
    figures and tables shown after it (until the next heading) are exported under it."""
    st.session_state[HEADING_KEY] = ("published", title)
    st.markdown(f"**{escape(title)}** {PUBLISHED_BADGE}")


def ours(title: str) -> None:
    st.session_state[HEADING_KEY] = ("ours", title)
    st.markdown(f"**{escape(title)}** {OURS_BADGE}")


def beside(title: str, paper: str) -> None:
    """Heading of a block that sets our numbers beside the paper's (``paper``: where the
    published ones come from), every column labelled ours / published / ours − published."""
    st.session_state[HEADING_KEY] = ("beside", title, paper)
    st.markdown(f"**{escape(title)}** {BESIDE_BADGE}")


CAVEATS_KEY = "page_caveats"


def start_page() -> None:
    """Forget the previous page's block heading, export context and caveats (called by the app
    before each page)."""
    st.session_state.pop(HEADING_KEY, None)
    st.session_state.pop(CONTEXT_KEY, None)
    st.session_state.pop(CAVEATS_KEY, None)


CONTEXT_KEY = "export_context"


def export_context(**said) -> None:
    """What the next figures and tables of the page rest on (``sample``, ``n``, ``outcome``;
    ``rests_on`` replaces the sidebar selection's provenance for a page that does not use it),
    written on their exports (``dashboard.exports.stamp``). Later calls update it."""
    current = dict(st.session_state.get(CONTEXT_KEY) or {})
    current.update({k: str(v) for k, v in said.items() if v is not None})
    st.session_state[CONTEXT_KEY] = current


def caveat(where, text: str, kind: str = "warning") -> None:
    """Show a caveat about what the sample can carry (``warning``, ``caption``, ``info`` or
    ``error``; the text is escaped) and keep it: every figure and table shown after it on this
    page is exported with it (``dashboard.exports.report.shown_as_items``)."""
    getattr(where, kind)(escape(text))
    caveats = st.session_state.setdefault(CAVEATS_KEY, [])
    if text not in caveats:
        caveats.append(str(text))


def selection_provenance() -> str:
    """Dataset, N and filters of the current selection, for an export's provenance line."""
    dataset = session.current_dataset()
    if dataset is None:
        return ""
    selections = session.current_selections()
    key = (dataset.name, cached.frame_fingerprint(dataset.conversations), cached.selection_key(selections))
    return cached.kept("selection_provenance", key, lambda: _provenance(dataset, selections))


def _provenance(dataset, selections: dict[str, list[str]]) -> str:
    frame = datasets.apply_filters(dataset.conversations, selections)
    filters = [f"{column} = {', '.join(map(str, chosen))}" for column, chosen in selections.items() if chosen]
    return ", ".join([f"dataset {dataset.name}", f"{len(frame):,} of {len(dataset.conversations):,} "
                      "conversations selected", *filters])


def percent_table(table: pd.DataFrame, digits: int = 1) -> pd.DataFrame:
    return table.astype(float).round(digits)


# --------------------------------------------------------------------------- shown = exportable
SHOWN_KEY = "shown_items"


def _remember(kind: str, key: str | None, value, said: dict | None = None) -> None:
    """Keep what a page showed (figure or table) so the Export page can offer it too, with
    the heading it was shown under, the selection, what it rests on (sample, N, outcome) and
    the caveats the page showed before it."""
    if key is None:
        return
    page = st.session_state.get("current_page_title", "")
    heading = st.session_state.get(HEADING_KEY)
    context = {**(st.session_state.get(CONTEXT_KEY) or {}), **{k: str(v) for k, v in (said or {}).items()
                                                                 if v is not None}}
    # a page whose numbers do not rest on the sidebar's selection says what they rest on
    # (``export_context(rests_on=...)``: the Compare runs page names the compared runs)
    selection = context.pop("rests_on", None) or selection_provenance()
    provenance = {"heading": heading, "selection": selection, "context": context,
                  "caveats": list(st.session_state.get(CAVEATS_KEY, []))}
    st.session_state.setdefault(SHOWN_KEY, {})[key] = (kind, page, value, provenance)


def chart(where, figure, key: str, *, show_key: bool = True, outcome=None, sample=None, n=None, **kwargs):
    """``where.plotly_chart`` full width, remembered for export with what it rests on
    (``outcome``, ``sample``, ``n``; else the page's ``export_context``). A chart that names
    conditions by code (``charts.condition_key``) gets its key, code -> condition in words,
    right under it (``show_key=False`` when the page shows one key for several charts)."""
    _remember("figure", key, figure, {"outcome": outcome, "sample": sample, "n": n})
    kwargs.setdefault("width", "stretch")
    event = where.plotly_chart(figure, key=key, **kwargs)
    if show_key:
        condition_key(where, figure, key=f"{key}_codes")
    return event


def condition_key(where, figure, key: str) -> None:
    """The key of a figure's condition codes as a small table (nothing when it has none)."""
    from dashboard.figures.charts import condition_key as rows_of

    rows = rows_of(figure)
    if rows:
        where.dataframe(pd.DataFrame(rows, columns=["code", "condition"]), key=key, hide_index=True,
                        width="stretch", height=38 + 35 * len(rows),
                        column_config={"code": st.column_config.TextColumn("code", width="small")})


def table(where, frame: pd.DataFrame, key: str, *, outcome=None, sample=None, n=None, **kwargs):
    """``where.dataframe``, remembered for export (with ``outcome``, ``sample``, ``n`` as ``chart``)."""
    _remember("table", key, frame, {"outcome": outcome, "sample": sample, "n": n})
    return where.dataframe(frame, key=key, **kwargs)


def shown_items() -> dict:
    """``{key: (kind, page, figure_or_table, provenance)}`` of everything shown in this session;
    provenance = ``{"heading": (ours|published, title) or None, "selection": text, "caveats":
    [the caveats the page showed before it]}``."""
    return dict(st.session_state.get(SHOWN_KEY, {}))
