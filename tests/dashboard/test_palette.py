"""dashboard.figures.palette: one colour per level, the same in every chart."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.figures import charts, palette
from engine.names import METHODS, PAPER_A, PAPER_B
from engine.protocols import registry


# the built-ins that name their colour in their description (``Method.colour``): the papers'
# eleven and the steered discussion, Okabe–Ito's and Tol's colours
NAMING = [m.name for m in registry.BUILT_IN_METHODS if m.colour]


def test_every_method_gets_a_distinct_colour_and_the_named_ones_keep_theirs():
    assert set(PAPER_A + PAPER_B) <= set(NAMING)
    assert len({palette.colour(m, "method").lower() for m in METHODS}) == len(METHODS)
    for described in registry.BUILT_IN_METHODS:
        if described.colour:
            assert palette.colour(described.name, "method") == palette.NAMED[described.colour]
    assert palette.colour("open", "method") == "#0072B2"  # Okabe–Ito's blue, as before


def test_method_colours_stay_apart_in_normal_vision():
    rgb = [np.array([int(palette.colour(m, "method")[i:i + 2], 16) / 255 for i in (1, 3, 5)]) for m in NAMING]
    closest = min(np.linalg.norm(a - b) for i, a in enumerate(rgb) for b in rgb[i + 1:])
    assert closest > 0.15


def test_same_method_same_colour_in_two_different_charts():
    """Before the palette, colours went by position in each chart: 'iterative' was the 2nd
    colour in a chart of (instructed, iterative) and the 3rd in one of (instructed, open, iterative)."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"discussion": ["instructed", "open", "iterative"] * 4,
                          "model": ["m1"] * 6 + ["m2"] * 6, "path_length": rng.random(12)})
    boxes = charts.distributions_by_group(frame[frame["discussion"] != "open"], ["path_length"], group="discussion")
    bars = charts.group_means_with_ci(frame, "path_length", x="model", colour="discussion")
    box_colour = {t.name: t.marker.color for t in boxes.data}
    bar_colour = {t.name: t.marker.color for t in bars.data}
    assert box_colour["iterative"] == bar_colour["iterative"] == palette.METHOD["iterative"]
    assert box_colour["instructed"] == bar_colour["instructed"]


def test_unknown_levels_are_stable_and_missing_is_grey():
    assert palette.colour("some-new-model", "model") == palette.colour("some-new-model", "model")
    assert palette.colour("some-new-model") in palette.SEQUENCE
    assert palette.colour(None) == palette.colour("(none)") == palette.MISSING


def _deuteranope(hex_colour: str) -> np.ndarray:
    """sRGB seen by a deuteranope (Machado, Oliveira & Fernandes 2009, severity 1.0)."""
    rgb = np.array([int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    matrix = np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                       [-0.011820, 0.042940, 0.968881]])
    simulated = np.clip(matrix @ linear, 0, 1)
    return np.where(simulated <= 0.0031308, 12.92 * simulated, 1.055 * simulated ** (1 / 2.4) - 0.055)


def test_method_colours_stay_apart_for_a_deuteranope():
    """No two method colours collapse under simulated deuteranopia (distance in sRGB units)."""
    seen = [_deuteranope(palette.colour(m, "method")) for m in NAMING]
    closest = min(np.linalg.norm(a - b) for i, a in enumerate(seen) for b in seen[i + 1:])
    assert closest > 0.15


# ------------------------------------------------------------------ perceptual distance
from itertools import combinations  # noqa: E402

from dashboard.figures import colour_difference, compare_runs, style  # noqa: E402


def _apart(colours) -> list[tuple[str, str]]:
    """Pairs of distinct colours closer than the thresholds (normal vision or a simulation)."""
    distinct = list(dict.fromkeys(c.upper() for c in colours))
    return [(a, b) for a, b in combinations(distinct, 2) if not colour_difference.apart(a, b)]


def test_the_palette_and_every_fixed_table_keep_the_thresholds():
    assert _apart(palette.DISTINCT + (palette.MISSING,)) == []
    assert len(palette.DISTINCT) == 12
    for table in (palette.SOURCE, palette.TASK, palette.MODEL,
                  {m: palette.colour(m, "method") for m in METHODS}):
        assert _apart([*table.values(), palette.MISSING]) == [], table


def test_many_clusters_get_apart_colours_then_shared_ones_with_their_own_symbol():
    """20 clusters, 12 colours kept apart: the first 12 levels take them (greedy max–min),
    the other 8 each share one, drawn with the next symbol."""
    levels = [f"{i}: words" for i in range(20)]
    looks = style.series_styles(levels, "cluster")
    colours = [looks[level].colour for level in levels]
    assert _apart(colours) == []
    assert len(set(colours[:12])) == 12 and set(colours[12:]) <= set(colours[:12])
    marks = [(looks[level].colour, looks[level].symbol) for level in levels]
    assert len(set(marks)) == 20  # a shared colour never with the same symbol
    assert sum(1 for a, b in combinations(levels, 2) if looks[a].colour == looks[b].colour) == 8


def test_the_reported_pink_and_teal_pairs_never_meet_in_one_chart(monkeypatch):
    """Before: cluster levels hashed to Okabe–Ito purple and Tol rose (ΔE00 12), green and
    Tol teal (9.6). Tol's rose and teal are no longer drawn; a fixed teal (a plugin's) is
    moved off an earlier level's green in a chart with both."""
    assert "#CC6677" not in palette.SEQUENCE and "#44AA99" not in palette.SEQUENCE
    for n in (8, 12, 20, 30):
        looks = style.series_styles([f"cluster {i}" for i in range(n)], "cluster")
        assert _apart([s.colour for s in looks.values()]) == [], n
    monkeypatch.setitem(palette.MODEL, "green-model", palette.OKABE_ITO["green"])
    monkeypatch.setitem(palette.MODEL, "teal-model", palette.TOL_MUTED["teal"])
    mixed = style.chart_colours(["green-model", "teal-model", "gpt-4.1"], "model")
    assert mixed["green-model"] == palette.OKABE_ITO["green"] and mixed["gpt-4.1"] == palette.MODEL["gpt-4.1"]
    assert mixed["teal-model"] != palette.TOL_MUTED["teal"] and _apart(mixed.values()) == []


def test_compared_datasets_never_share_a_hue_family():
    """Before: local_smollm2 in Okabe–Ito blue beside local_smollm2_fidelity or _paper_b in sky
    (hue angles 15° apart). Now any two, three... of the cached datasets' names and the five
    together are drawn in colours of hue families at least 30° apart."""
    names = ["local_smollm2", "local_smollm2_fidelity", "local_smollm2_paper_b", "local_smollm2_steered",
             "paper_release"]
    for size in (2, 3, 5):
        for chosen in combinations(names, size):
            colours = [s.colour for s in compare_runs.run_styles(chosen).values()]
            assert len(set(colours)) == size
            assert not any(colour_difference.same_hue_family(a, b) for a, b in combinations(colours, 2)), chosen
            assert _apart(colours) == []
    assert style.chart_colours(["llm", "human"], "source") == {"llm": palette.SOURCE["llm"],
                                                               "human": palette.SOURCE["human"]}


# ------------------------------------------------------------------ colours that never run out
def _register_methods(monkeypatch, count: int) -> list[str]:
    """The built-ins and ``count`` methods naming no colour, as plugins would add them."""
    from engine.protocols.method import Method
    from engine.registry import GROUPS, Registry, Source

    fresh = Registry("method", GROUPS["methods"], accepts=Method)
    for described in registry.BUILT_IN_METHODS:
        fresh.register(described)
    added = [f"extra_{i}" for i in range(count)]
    for name in added:
        fresh.register(Method(name=name, run=lambda session: None, calls=lambda c, r: 1),
                       source=Source(plugin="many"))
    monkeypatch.setattr(registry, "METHODS_REGISTRY", fresh)
    return added


def test_a_new_method_gets_a_colour_apart_from_the_built_ins(monkeypatch):
    """With the twelve built-ins of today, the thirteenth method."""
    [extra] = _register_methods(monkeypatch, 1)
    colour = palette.colour(extra, "method")
    assert palette.HEX.match(colour) and palette.has_fixed_colour(extra, "method")
    assert _apart([colour, *(palette.colour(m, "method") for m in METHODS), palette.MISSING]) == []
    assert colour_difference.lab(colour)[0] <= palette.LIGHTEST  # not too light on the white page
    looks = style.series_styles([*METHODS, extra], "method")
    assert len({s.colour for s in looks.values()}) == len(METHODS) + 1
    assert _apart([s.colour for s in looks.values()]) == []
    assert all(looks[m].colour == palette.colour(m, "method") for m in METHODS)  # theirs, unmoved


def test_forty_more_methods_each_get_a_colour_and_every_chart_keeps_the_rules(monkeypatch):
    first = palette.colour(_register_methods(monkeypatch, 1)[0], "method")
    added = _register_methods(monkeypatch, 40)
    own = {m: palette.colour(m, "method") for m in (*METHODS, *added)}
    assert len(set(own.values())) == len(METHODS) + 40 and all(palette.HEX.match(c) for c in own.values())
    assert own["extra_0"] == first  # a method's colour does not depend on those registered after it
    assert all(own[m] == palette.colour(m, "method") for m in METHODS)  # the built-ins keep theirs
    # while the colour space allows, each new colour keeps the thresholds against all before it:
    # on the 16-step grid, 25 more after the twelve named ones
    assert _apart([palette.MISSING, *own.values()][:1 + len(NAMING) + 25]) == []
    for levels in ([*METHODS, *added], added[:12], [*added[::-1]][:20]):
        looks = style.series_styles(levels, "method")
        assert _apart([s.colour for s in looks.values()]) == []
        assert len({(s.colour, s.symbol) for s in looks.values()}) == len(levels)  # shared: own symbol
