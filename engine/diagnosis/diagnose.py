"""Pilot diagnostics: where a few pilot conversations sit against the paper's reference, and
which discussion structure the reference says would move them the right way.

Evidence, all drawn from paper A:

* Which way each feature should go: the sign of its significant coefficient for LLM
  creativity in the trajectory + task model (Table 23: global coherence -, semantic spread +,
  path length -, max distance -, topic switching +). A pilot whose mean sits in the
  unfavourable tail of the reference (beyond the 25th/75th percentile) on such a feature has a
  deficit on it.
* Geometric patterns the paper describes (Results and Fig. 4): *narrow_coherent* (low max
  distance with high global coherence: one concept refined in place) and *scattered*
  (long paths with low local coherence: leaps without connection).
* Which structure moves which feature (Tables 2, 7 and 24: discussion structure is the lever
  for exploration breadth): for each structure, the standardised difference of its mean
  from the average structure, computed within each model of the reference and averaged, and
  the number of models in which it points the needed way.

Like is compared with like. A feature is a cosine geometry of one embedding model's space, and
the turns it measures come from one implementation of the protocol; a pilot is placed against
the reference only when both sides were embedded by the same model and made the same way
(``engine.protocols.implementation``: fidelity, system prompt, turn visibility). The models
come from the tables (``attrs["embedding_model"]`` or an ``embedding_model`` column, set from
dataset manifests and the release file names) or are passed in; the implementations likewise
(``attrs["implementation"]`` or the rows' ``fidelity`` / ``prompts_revision`` columns). When
either differs, or is not recorded, nothing is ranked across them: a cosine from one model has
no rank in another model's distribution. The evidence then shows the pilot's and the
reference's raw values side by side, labelled ``not comparable`` with the reason, no flag and
no recommendation come from it, and ``routes`` says what would be comparable (re-embedding with
the reference's model through an embeddings server, a reference made with the pilot's embedder
and implementation, or prescribe-and-verify, which compares designs under one embedder).
``same_embedding`` overrides the model check when the user knows better (the CLI's
``--same-embedding`` / ``--different-embedding``), and the text says it was asked.

Each feature's pilot position is the mean over the pilot's conversations of their mid-rank
percentiles within the reference, with a 95% t-interval at the pilot's N (clipped to 0-100).
A feature is flagged low (high) when that mean is at or below the 25th (at or above the 75th)
percentile *and* its interval lies wholly below (above) the reference's median; a mean in the
tail whose interval reaches the median is ``unclear`` at this N and not flagged.

Every feature the evidence marks low or high (at the percentile the text prints, to one
decimal) is in ``flags``; the recommendation acts on those that Table 23 links to lower
creativity and says which flagged features it leaves alone; it never proposes the structure
the pilot already ran as a change.

What a pilot can carry (``engine.stats.guards``):

* A diagnosis needs ``MIN_SESSIONS_TO_DIAGNOSE`` (5) successful sessions. Below that the
  evidence keeps the raw numbers and percentiles, every feature is ``not assessed``, there is
  no flag and no recommendation, and the text says "too few sessions to diagnose (2 of 5)".
* Like is compared with like. The features that grow with a conversation's length
  (``LENGTH_DEPENDENT``: path length, max distance, revisits, topic switching) are compared
  only with reference conversations of similar length: ``n_turns`` within a factor
  ``LENGTH_WINDOW`` (1.5) of the pilot's median length, from the compared rows or, when they
  hold fewer than 20 such conversations, from the whole reference. When fewer than 20
  reference conversations are that long, or the pilot's lengths are unknown, those features
  are ``not compared`` (never flagged), and ``compared_with`` and the text say which.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from engine.errors import InputError
from engine.measures.trajectory import PAPER_A, PAPER_A_FEATURES
from engine.stats.guards import MIN_SESSIONS_TO_DIAGNOSE

RUN_CORPUS = "corpus.jsonl"  # what `engine run` writes (engine.runs.run_folder)

# Table 23, LLM column: sign of the significant (p < .05) trajectory + task coefficients.
CREATIVITY_DIRECTION = {"global_coherence": -1, "semantic_spread": +1, "path_length": -1,
                        "max_distance": -1, "topic_switching_rate": +1}
TABLE23_LLM_BETA = {"global_coherence": -0.400, "semantic_spread": 0.227, "path_length": -0.122,
                    "max_distance": -0.276, "topic_switching_rate": 0.095}
FEATURE_LABELS = {name: name.replace("_", " ") for name in PAPER_A_FEATURES}
# the nine that grow with the number of turns (their records in engine.measures.trajectory say so)
LENGTH_DEPENDENT = tuple(f.name for f in PAPER_A if f.grows_with_length)
LENGTH_WINDOW = 1.5
MIN_REFERENCE = 20
TAILS = ("low", "high")  # the flags that count; "typical", "unclear", "not compared", "not assessed" do not
NOT_COMPARABLE = "not comparable"


def too_few_sessions_text(n: int) -> str:
    return f"too few sessions to diagnose ({n} of {MIN_SESSIONS_TO_DIAGNOSE})"


@dataclass
class Diagnosis:
    """The verdict on a pilot and the numbers it rests on."""

    n_pilot: int
    evidence: pd.DataFrame
    flags: list[str]
    recommendation: dict
    reference_description: str
    same_embedding: bool = True
    embedding_note: str = ""
    structure_effects: pd.DataFrame = field(default_factory=pd.DataFrame)
    notes: list[str] = field(default_factory=list)
    nearest_conditions: pd.DataFrame = field(default_factory=pd.DataFrame)
    length_note: str = ""
    implementation_note: str = ""
    not_comparable: list[str] = field(default_factory=list)  # why the sides do not compare
    routes: list[dict] = field(default_factory=list)  # what would be comparable

    @property
    def comparable(self) -> bool:
        """Both sides embedded by one model and made by one implementation."""
        return not self.not_comparable

    @property
    def diagnosed(self) -> bool:
        """False below ``MIN_SESSIONS_TO_DIAGNOSE`` successful sessions or when the sides do
        not compare: raw numbers only."""
        return self.n_pilot >= MIN_SESSIONS_TO_DIAGNOSE and self.comparable

    @property
    def caution(self) -> str:
        """The sentence shown above the evidence (never folded away)."""
        if not self.comparable:
            return ("Not comparable: " + "; ".join(self.not_comparable) + ". The raw values are shown side by "
                    "side, with no percentile, no flag and no recommendation; see the comparable routes.")
        if self.n_pilot < MIN_SESSIONS_TO_DIAGNOSE:
            return (f"{too_few_sessions_text(self.n_pilot).capitalize()}: the raw numbers are shown, with no flag "
                    f"and no recommendation. Run at least {MIN_SESSIONS_TO_DIAGNOSE} successful sessions of the design.")
        return ""

    def to_text(self) -> str:
        lines = [f"Pilot diagnosis: based on {self.n_pilot} pilot conversation"
                 f"{'' if self.n_pilot == 1 else 's'}, against {self.reference_description}."]
        for line in (self.caution, self.length_note, self.embedding_note, self.implementation_note):
            if line:
                lines.append(line)
        lines.append("")
        if self.comparable:
            lines.append("Feature evidence (pilot mean, reference median [10th-90th pct], pilot mean percentile "
                         "[95% interval]):")
        else:
            lines.append("Feature values, side by side and NOT comparable (pilot mean, reference median "
                         "[10th-90th pct]):")
        for row in self.evidence.itertuples():
            values = (f"  {row.feature:<22} {row.pilot_mean:9.3f}   {row.reference_p50:9.3f} "
                      f"[{row.reference_p10:.3f}-{row.reference_p90:.3f}]")
            if np.isfinite(row.percentile):
                interval = ("" if not np.isfinite(row.percentile_low)
                            else f" [{row.percentile_low:.1f}-{row.percentile_high:.1f}]")
                values += f"   {row.percentile:5.1f}{interval}"
            z = "" if not np.isfinite(row.z) else f", z {row.z:+.2f}"
            flag = f"  <- {row.flag}" if row.flag in TAILS or row.flag in ("not compared", "unclear") else ""
            lines.append(values + z + flag)
        lines.append("")
        if not self.diagnosed:
            why = too_few_sessions_text(self.n_pilot) if self.comparable else NOT_COMPARABLE
            lines.append(f"Flags and recommendation: none ({why}).")
            for route in self.routes:
                lines.append(f"Comparable route ({route['route']}): {route['title']}. {route['how']}")
            for note in self.notes:
                lines.append(f"Note: {note}")
            return "\n".join(lines)
        lines.append("Flags: " + (", ".join(self.flags) if self.flags else "none"))
        tails = self.evidence[self.evidence["flag"].isin(TAILS)] if len(self.evidence) else self.evidence
        if len(tails):
            lines.append("  (" + "; ".join(f"{row.feature} at the {row.percentile:.1f}th percentile "
                                            f"[{row.percentile_low:.1f}-{row.percentile_high:.1f}]"
                                            for row in tails.itertuples()) + ")")
        rec = self.recommendation
        lines.append(f"Recommendation: {rec['summary']}")
        for reason in rec.get("reasons", []):
            lines.append(f"  - {reason}")
        if not self.nearest_conditions.empty:
            closest = "; ".join(f"{row.model} + {row.discussion} ({row.distance:.1f})"
                                for row in self.nearest_conditions.head(3).itertuples())
            lines.append("Closest reference conditions (RMS difference of mean percentile ranks over the "
                         f"nine features): {closest}")
        for note in self.notes:
            lines.append(f"Note: {note}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"n_pilot": self.n_pilot, "diagnosed": self.diagnosed, "caution": self.caution,
                "min_sessions": MIN_SESSIONS_TO_DIAGNOSE, "length_note": self.length_note,
                "flags": self.flags, "recommendation": self.recommendation,
                "reference": self.reference_description, "same_embedding": self.same_embedding,
                "embedding_note": self.embedding_note, "implementation_note": self.implementation_note,
                "comparable": self.comparable, "not_comparable": self.not_comparable,
                "routes": self.routes, "notes": self.notes,
                "evidence": self.evidence.replace({np.nan: None}).to_dict(orient="records")}


def diagnose(pilot: pd.DataFrame, reference: pd.DataFrame | None = None, *,
             same_embedding: bool | None = None, pilot_embedding: str | None = None,
             reference_embedding: str | None = None, pilot_implementation: dict | None = None,
             reference_implementation: dict | None = None, same_implementation: bool | None = None,
             structures: tuple[str, ...] = ("instructed", "open", "iterative")) -> Diagnosis:
    """Place a pilot's nine features against the reference and recommend a discussion structure.

    ``pilot``: one row per pilot conversation with the nine feature columns (optional
    ``model``/``discussion``). ``reference``: by default the paper release's trajectory
    sample (``engine.stats.reference.load_reference``). When the pilot's discussion
    structure (one value) is in the reference, it is compared with that structure's rows.
    ``same_embedding``: None (default) decides from the two embedding models; True / False
    overrides that check. The implementations come from the tables unless passed (see the
    module docstring); ``same_implementation`` True / False overrides their check (a feature
    table that records none, made the same way as the reference by the user's word). When the
    sides do not compare, the values are shown, never ranked.
    """
    if not isinstance(pilot, pd.DataFrame):
        raise InputError("the pilot must be a table with one row per conversation")
    missing = [f for f in PAPER_A_FEATURES if f not in pilot.columns]
    if missing:
        raise InputError(f"the pilot lacks feature column {missing[0]!r}; compute the nine features first",
                         field=missing[0])
    from engine.measures.feature_table import check_features
    from engine.protocols.implementation import implementation_of_table

    features = check_features(pilot[list(PAPER_A_FEATURES)], None)
    features.index = pilot.index
    usable = features.notna().any(axis=1)
    n_pilot = int(usable.sum())
    if n_pilot == 0:
        raise InputError("the pilot has no conversation with a computed feature "
                         "(conversations need at least 2 turns, revisit score 6)")
    features = features[usable]
    if reference is None:
        from engine.stats.reference import load_reference

        reference = load_reference()
    pilot_embedding = pilot_embedding or _embedding_of(pilot)
    reference_embedding = reference_embedding or _embedding_of(reference)
    same_embedding, embedding_note = _embedding_decision(same_embedding, pilot_embedding,
                                                         reference_embedding)
    missing = [f for f in PAPER_A_FEATURES if f not in reference.columns]
    if missing:
        raise InputError(f"the reference lacks feature column {missing[0]!r}", field=missing[0])
    reference = reference.dropna(subset=list(PAPER_A_FEATURES))
    if len(reference) < 20:
        raise InputError(f"the reference has {len(reference)} complete conversations; at least 20 are needed")

    notes: list[str] = []
    compared, description = _comparison_rows(pilot[usable], reference)
    pilot_made = pilot_implementation or implementation_of_table(pilot)
    reference_made = reference_implementation or implementation_of_table(compared)
    implementation_note, unlike = _implementation_decision(pilot_made, reference_made, same_implementation)
    if not same_embedding:
        unlike.insert(0, f"the embedding models differ or are not recorded (pilot {pilot_embedding or 'not recorded'}, "
                         f"reference {reference_embedding or 'not recorded'})")
        from engine.stats.embedding_stability import release_stability, stability_sentence

        sentence = stability_sentence(release_stability())  # why no cross-model rank is assumed
        if sentence:
            notes.append(sentence)
    length_rows, length_note = _similar_length(pilot[usable], compared, reference)
    comparable = not unlike
    evidence = _evidence(features, compared, length_rows, comparable=comparable)
    effects = _structure_effects(reference, structures) if comparable else pd.DataFrame()
    current = _single_value(pilot[usable], "discussion")
    nearest, routes = pd.DataFrame(), []
    if not comparable:
        evidence["flag"] = NOT_COMPARABLE
        flags: list[str] = []
        recommendation = {"structure": None, "summary": f"none: {NOT_COMPARABLE} ({'; '.join(unlike)})",
                          "deficits": {}, "scores": {}, "reasons": []}
        routes = comparable_routes(pilot_embedding, reference_embedding, pilot_made, reference_made,
                                   same_embedding)
    elif n_pilot < MIN_SESSIONS_TO_DIAGNOSE:  # raw numbers only: no flag, no recommendation
        evidence["flag"] = "not assessed"
        flags = []
        recommendation = {"structure": None, "summary": f"none: {too_few_sessions_text(n_pilot)}",
                          "deficits": {}, "scores": {}, "reasons": []}
    else:
        flags = _flags(evidence)
        recommendation = _recommend(evidence, effects, current)
        nearest = _nearest_conditions(features, reference)
    if features.isna().any().any():
        counts = features.notna().sum()
        short = counts[counts < n_pilot]
        notes.append("some features are missing for short conversations: " +
                     ", ".join(f"{name} on {n_pilot - int(c)}" for name, c in short.items()))
    return Diagnosis(n_pilot=n_pilot, evidence=evidence, flags=flags, recommendation=recommendation,
                     reference_description=description, same_embedding=same_embedding,
                     embedding_note=embedding_note, structure_effects=effects, notes=notes,
                     nearest_conditions=nearest, length_note=length_note,
                     implementation_note=implementation_note, not_comparable=unlike, routes=routes)


def _embedding_of(frame: pd.DataFrame) -> str | None:
    """The embedding model a table records: ``attrs`` first, then a one-valued column."""
    model = frame.attrs.get("embedding_model")
    if model:
        return str(model)
    value = _single_value(frame, "embedding_model")
    return None if value is None else str(value)


def _embedding_decision(forced: bool | None, pilot: str | None, reference: str | None) -> tuple[bool, str]:
    """Whether one embedding model measured both sides, and the sentence that says why."""
    from engine.stats.reference import same_embedding_model

    models = f"pilot {pilot or 'not recorded'}, reference {reference or 'not recorded'}"
    if forced is not None:
        how = "the same model" if forced else "different models"
        return forced, f"Embedding models: {models}; treated as {how}, as asked."
    same = same_embedding_model(pilot, reference)
    if same:
        return True, f"Embedding models: {models} (the same model)."
    why = "they differ" if same is False else "one is not recorded, so they may differ"
    return False, (f"Embedding models: {models}; {why}. A cosine from one model has no place in another "
                   "model's distribution, so nothing is ranked across them.")


def _implementation_decision(pilot: dict | None, reference: dict | None,
                             forced: bool | None = None) -> tuple[str, list[str]]:
    """The sentence naming both sides' implementations, and what differs (empty: they compare)."""
    from engine.protocols.implementation import describe, differences

    note = f"Made by: pilot {describe(pilot)}; reference {describe(reference)}"
    if forced is not None:
        how = "the same way" if forced else "differently"
        return note + f"; treated as made {how}, as asked.", \
            [] if forced else ["the conversations were made differently (as asked)"]
    unlike = differences(pilot, reference)
    note += "." if not unlike else f". They differ ({'; '.join(unlike)})."
    return note, [f"the conversations were made differently ({'; '.join(unlike)})"] if unlike else []


def comparable_routes(pilot_embedding: str | None, reference_embedding: str | None,
                      pilot_made: dict | None, reference_made: dict | None,
                      same_embedding: bool) -> list[dict]:
    """What would make the comparison like with like, in the order a user would try them."""
    from engine.protocols.implementation import differences

    routes = []
    if not same_embedding:
        model = reference_embedding or "the reference's embedding model"
        routes.append({"route": "a", "title": f"re-embed the pilot with {model}",
                       "how": ("Serve the model behind an OpenAI-compatible embeddings endpoint (vLLM: "
                               f"`vllm serve {model} --task embed`, or any server answering /v1/embeddings) "
                               "and measure the pilot through it: `python -m engine analyze diagnose --pilot "
                               "RUN --embed-base-url http://127.0.0.1:8000/v1 --embed-model "
                               f"{model}` (docs/howto/compare-like-with-like.md). The paper release's "
                               "features were made with Qwen3-Embedding-0.6B.")})
        routes.append({"route": "b", "title": f"a reference measured with the pilot's embedder "
                                              f"({pilot_embedding or 'not recorded'})",
                       "how": ("Pass a dataset folder made with the same embedder and implementation as "
                               "`--reference` (the local datasets in cached_runs/ use all-MiniLM-L6-v2; "
                               "on the Pilot page the comparable ones are listed), or your own runs.")})
    routes.append({"route": "c", "title": "prescribe and verify",
                   "how": ("`python -m engine pilot` compares your candidate designs with each other under "
                           "one embedder and one implementation, and verifies the predicted shift on fresh "
                           "sessions.")})
    if differences(pilot_made, reference_made):
        fidelity = (reference_made or {}).get("fidelity")
        routes.append({"route": "d", "title": "run the pilot the way the reference was made",
                       "how": (f"Run paper A's structures with fidelity = {fidelity} (the reference's); "
                               "engine.protocols.implementation lists what must match." if fidelity else
                               "Use a reference whose implementation is recorded and the same as the pilot's.")})
    return routes


def _single_value(frame: pd.DataFrame, column: str):
    if column not in frame.columns:
        return None
    values = frame[column].dropna().unique()
    return values[0] if len(values) == 1 else None


def _comparison_rows(pilot: pd.DataFrame, reference: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    rows, parts = reference, []
    for column in ("discussion", "model"):
        value = _single_value(pilot, column)
        if value is not None and column in reference.columns and (reference[column] == value).sum() >= 20:
            rows = rows[rows[column] == value]
            parts.append(f"{column} = {value}")
    scope = f" ({', '.join(parts)})" if parts else ""
    return rows, f"{len(rows):,} reference conversations{scope}"


def _similar_length(pilot: pd.DataFrame, compared: pd.DataFrame,
                    reference: pd.DataFrame) -> tuple[pd.DataFrame | None, str]:
    """Reference rows of similar length for the length-dependent features (None: not compared),
    and the sentence that says which."""
    names = ", ".join(FEATURE_LABELS[f] for f in LENGTH_DEPENDENT)
    if "n_turns" not in pilot.columns or pilot["n_turns"].isna().all():
        return None, (f"Not compared: {names} grow with a conversation's length and the pilot's lengths "
                      "are not recorded, so they are not flagged.")
    if "n_turns" not in reference.columns:
        return None, (f"Not compared: {names} grow with a conversation's length and the reference's lengths "
                      "are not recorded, so they are not flagged.")
    length = float(pd.to_numeric(pilot["n_turns"], errors="coerce").median())
    low, high = length / LENGTH_WINDOW, length * LENGTH_WINDOW
    window = f"{low:.0f}-{high:.0f} turns"
    for rows, scope in ((compared, "of the compared rows"), (reference, "of the whole reference")):
        turns = pd.to_numeric(rows["n_turns"], errors="coerce")
        similar = rows[(turns >= low) & (turns <= high)]
        if len(similar) >= MIN_REFERENCE:
            return similar, (f"{names[0].upper()}{names[1:]} grow with a conversation's length: they are compared "
                             f"with the {len(similar):,} reference conversations {scope} of similar length "
                             f"({window}; the pilot's median is {length:.0f} turns).")
    return None, (f"Not compared: {names} grow with a conversation's length and fewer than {MIN_REFERENCE} "
                  f"reference conversations have {window} (the pilot's median is {length:.0f} turns), so they "
                  "are not flagged.")


def _evidence(features: pd.DataFrame, reference: pd.DataFrame, length_rows: pd.DataFrame | None = None,
              *, comparable: bool = True, low: float = 25.0, high: float = 75.0) -> pd.DataFrame:
    """Per feature: the pilot's and the reference's values, and (when the sides compare) the
    pilot's mean percentile within the reference with its 95% t-interval, z and the flag."""
    from scipy import stats as scipy_stats

    rows = []
    for name in PAPER_A_FEATURES:
        values = features[name].dropna().to_numpy(dtype=float)
        if len(values) == 0:
            continue
        scope, compared = reference, f"{len(reference):,} reference conversations"
        if name in LENGTH_DEPENDENT and length_rows is not None:
            scope, compared = length_rows, f"{len(length_rows):,} of similar length"
        ref = np.sort(scope[name].to_numpy(dtype=float))
        mean, sd = float(ref.mean()), float(ref.std(ddof=1))
        percentile = z = p_low = p_high = np.nan
        flag = "typical"
        if comparable:
            ranks = _percentile_ranks(values, ref)  # each pilot conversation's place, then averaged
            percentile = float(ranks.mean())
            if len(ranks) > 1:
                half = float(scipy_stats.t.ppf(0.975, len(ranks) - 1) * ranks.std(ddof=1) / np.sqrt(len(ranks)))
                p_low, p_high = max(0.0, percentile - half), min(100.0, percentile + half)
            z = (values.mean() - mean) / sd if sd > 0 else np.nan
            shown = round(percentile, 1)  # the value the text prints: flags follow it exactly
            if shown <= low or shown >= high:
                clear = (p_high < 50.0) if shown <= low else (p_low > 50.0)
                flag = ("low" if shown <= low else "high") if clear else "unclear"
        else:
            compared = f"{NOT_COMPARABLE}: values side by side only"
        if name in LENGTH_DEPENDENT and length_rows is None:
            flag, compared = "not compared", "not compared: no reference of similar length"
        rows.append({"feature": name, "n": len(values), "pilot_mean": float(values.mean()),
                     "pilot_sd": float(values.std(ddof=1)) if len(values) > 1 else np.nan,
                     "reference_mean": mean, "reference_sd": sd, "reference_n": len(ref),
                     "reference_p10": float(np.percentile(ref, 10)), "reference_p50": float(np.percentile(ref, 50)),
                     "reference_p90": float(np.percentile(ref, 90)), "percentile": percentile,
                     "percentile_low": p_low, "percentile_high": p_high, "z": z,
                     "flag": flag, "compared_with": compared,
                     "creativity_direction": CREATIVITY_DIRECTION.get(name, 0)})
    return pd.DataFrame(rows)


def _percentile_ranks(values: np.ndarray, reference_sorted: np.ndarray) -> np.ndarray:
    """Mid-rank percentile of each value within the sorted reference (ties count half)."""
    below = np.searchsorted(reference_sorted, values, side="left")
    at_or_below = np.searchsorted(reference_sorted, values, side="right")
    return 100.0 * (below + at_or_below) / (2 * len(reference_sorted))


def _nearest_conditions(features: pd.DataFrame, reference: pd.DataFrame) -> pd.DataFrame:
    """Reference (model, discussion) cells ranked by how close their feature profile is to the pilot's.

    Both sides are put in percentile ranks within the pooled reference; the distance is the
    root mean square over features of (pilot mean rank - cell mean rank), in percentile points.
    """
    if not {"model", "discussion"} <= set(reference.columns):
        return pd.DataFrame()
    pilot_profile, cell_profiles = {}, {}
    for name in PAPER_A_FEATURES:
        ordered = np.sort(reference[name].to_numpy(dtype=float))
        values = features[name].dropna().to_numpy(dtype=float)
        if len(values) == 0:
            continue
        pilot_profile[name] = float(_percentile_ranks(values, ordered).mean())
        cell_profiles[name] = pd.Series(_percentile_ranks(reference[name].to_numpy(dtype=float), ordered),
                                        index=reference.index)
    ranks = pd.DataFrame(cell_profiles).join(reference[["model", "discussion"]])
    cells = ranks.groupby(["model", "discussion"])
    means = cells[list(pilot_profile)].mean()
    distance = np.sqrt(((means - pd.Series(pilot_profile)) ** 2).mean(axis=1))
    out = pd.DataFrame({"n": cells.size(), "distance": distance}).reset_index()
    return out.sort_values("distance", kind="stable").reset_index(drop=True)


def _flags(evidence: pd.DataFrame) -> list[str]:
    """The geometric patterns, then every feature in a tail (``low_x`` / ``high_x``)."""
    flag = evidence.set_index("feature")["flag"].to_dict()
    flags = []
    if flag.get("max_distance") == "low" and flag.get("global_coherence") == "high":
        flags.append("narrow_coherent")
    if flag.get("path_length") == "high" and flag.get("local_coherence") == "low":
        flags.append("scattered")
    for name in PAPER_A_FEATURES:
        if flag.get(name) in TAILS:
            flags.append(f"{flag[name]}_{name}")
    return flags


def _structure_effects(reference: pd.DataFrame, structures) -> pd.DataFrame:
    """Standardised effect of each structure on each feature, within model, averaged over models."""
    if "discussion" not in reference.columns:
        return pd.DataFrame()
    rows = reference[reference["discussion"].isin(structures)]
    if rows["discussion"].nunique() < 2:
        return pd.DataFrame()
    models = rows["model"] if "model" in rows.columns else pd.Series("all", index=rows.index)
    sd = rows[list(PAPER_A_FEATURES)].std(ddof=1)
    records = []
    for model, part in rows.groupby(models):
        means = part.groupby("discussion")[list(PAPER_A_FEATURES)].mean()
        if len(means) < 2:
            continue
        centred = (means - means.mean()) / sd
        for structure, values in centred.iterrows():
            for name in PAPER_A_FEATURES:
                records.append({"model": model, "structure": structure, "feature": name, "effect": values[name]})
    table = pd.DataFrame(records)
    summary = table.groupby(["structure", "feature"])["effect"].agg(
        effect="mean", n_models="size", n_positive=lambda v: int((v > 0).sum())).reset_index()
    return summary


def _recommend(evidence: pd.DataFrame, effects: pd.DataFrame, current) -> dict:
    deficits, other = {}, []
    for row in evidence.itertuples():
        direction = CREATIVITY_DIRECTION.get(row.feature, 0)
        if direction < 0 and row.flag == "high":
            deficits[row.feature] = -1
        elif direction > 0 and row.flag == "low":
            deficits[row.feature] = +1
        elif row.flag in TAILS:
            other.append(row)
    aside = ""
    if other:
        aside = ("; flagged but not a deficit: " + ", ".join(
            f"{FEATURE_LABELS[r.feature]} {r.flag} ({r.percentile:.1f}th percentile, "
            + ("the favourable side in Table 23" if CREATIVITY_DIRECTION.get(r.feature) else
               "no significant creativity coefficient in Table 23") + ")" for r in other))
    if not deficits:
        return {"structure": None, "summary": "no change indicated: on the features that go with LLM "
                "creativity (Table 23) the pilot is not in the unfavourable tail of the reference" + aside,
                "deficits": {}, "scores": {}, "reasons": []}
    if effects.empty:
        return {"structure": None, "summary": "the reference has no discussion structures to compare",
                "deficits": deficits, "scores": {}, "reasons": []}
    effect = effects.set_index(["structure", "feature"])
    scores = {}
    for structure in effects["structure"].unique():
        scores[structure] = float(sum(need * effect.loc[(structure, name), "effect"] for name, need in deficits.items()))
    best = max(scores, key=scores.get)
    reasons, supported = [], []
    for name, need in deficits.items():
        row = effect.loc[(best, name)]
        agree = int(row["n_positive"]) if need > 0 else int(row["n_models"] - row["n_positive"])
        if agree * 2 > int(row["n_models"]) and need * row["effect"] > 0:
            supported.append(name)
        moves = "raises" if row["effect"] > 0 else "lowers"
        reasons.append(f"{FEATURE_LABELS[name]} should go {'up' if need > 0 else 'down'} (Table 23 LLM beta "
                       f"{TABLE23_LLM_BETA[name]:+.3f}); in the reference, {best} discussion {moves} it by "
                       f"{abs(row['effect']):.2f} SD relative to the average structure, the needed way in "
                       f"{agree} of {int(row['n_models'])} models")
    if current is not None and current in scores and current != best:
        reasons.append(f"the pilot's current structure, {current}, scores {scores[current]:+.2f} on these "
                       f"deficits against {scores[best]:+.2f} for {best}")
    if not supported:
        # The verdict rests on the same numbers as the reasons: a structure that moves the
        # deficient features the needed way in at most half of the models is not recommended.
        summary = (f"no structure change is supported: even the best-scoring structure ({best}) moves "
                   f"the deficient feature{'s' if len(deficits) > 1 else ''} "
                   f"({', '.join(FEATURE_LABELS[n] for n in deficits)}) the needed way in at most half "
                   "of the reference's models" + aside)
        return {"structure": None, "summary": summary, "deficits": deficits, "scores": scores,
                "reasons": reasons, "supported": supported}
    moved = (f"the deficient feature{'s' if len(supported) > 1 else ''} "
             f"({', '.join(FEATURE_LABELS[n] for n in supported)})")
    if current == best:  # the design the pilot ran is never proposed as a change
        summary = (f"no change to propose: the pilot's own structure, {best} discussion, is the one that moves "
                   f"{moved} in the needed direction most in the paper's reference; another structure would "
                   "do less (Tables 2 and 24)")
        return {"structure": None, "summary": summary + aside, "deficits": deficits, "scores": scores,
                "reasons": reasons, "supported": supported, "current": current}
    summary = (f"try {best} discussion: it moves {moved} "
               "in the needed direction most in the paper's reference (discussion structure is the main "
               "lever for exploration breadth, Tables 2 and 24)")
    unsupported = [n for n in deficits if n not in supported]
    if unsupported:
        summary += (f"; not for {', '.join(FEATURE_LABELS[n] for n in unsupported)}, which it moves the "
                    "needed way in at most half of the models")
    summary += aside
    return {"structure": best, "summary": summary, "deficits": deficits, "scores": scores, "reasons": reasons,
            "supported": supported}


# -- reading a pilot -------------------------------------------------------------------------
@dataclass
class Pilot:
    """A pilot's per-conversation features and where they came from.

    ``embedding_model``: the model the features were computed with here (a run folder or a
    transcript file), or the one a dataset folder's manifest names; else None, and
    ``diagnose`` looks for an ``embedding_model`` column in the table.
    """

    table: pd.DataFrame
    description: str
    embedding_model: str | None = None


def load_pilot(path, embedder_factory=None) -> Pilot:
    """The pilot at ``path``: a feature table (.csv/.tsv/.jsonl/.parquet, checked cell by
    cell), a dataset folder (``conversations.parquet``), a run folder written by
    ``engine run`` (``corpus.jsonl``) or a transcript/corpus file. Turns are embedded with
    ``embedder_factory()`` and measured (Table 19) when no features are given."""
    from pathlib import Path

    from engine.corpus import Corpus
    from engine.measures.feature_table import check_features, read_feature_table, read_parquet_table

    path = Path(path)
    if not path.exists():
        raise InputError("no such file or folder", path=str(path))
    if path.is_dir():
        if (path / RUN_CORPUS).exists():
            from engine.runs.run_folder import read_run_corpus

            corpus = read_run_corpus(path)
            return _pilot_from_corpus(corpus, path, embedder_factory, "run folder")
        if (path / "conversations.parquet").exists():
            from engine.datasets import Dataset

            dataset = Dataset.load(path, with_corpus=False)
            table = check_features(dataset.conversations, path / "conversations.parquet")
            table.attrs.update(dataset.conversations.attrs)  # embedding model, implementation
            model = dataset.manifest.get("embedding_model")
            return _feature_pilot(table, path / "conversations.parquet",
                                  f"dataset folder {path} (embedding model: {model or 'not recorded'})", model)
        raise InputError(f"neither a run folder ({RUN_CORPUS}, written by `engine run`) nor a "
                         "dataset folder (conversations.parquet)", path=str(path))
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        table = read_parquet_table(path)
        if "turns" in table.columns:
            return _pilot_from_corpus(Corpus.from_parquet(path), path, embedder_factory, "corpus")
        return _feature_pilot(check_features(table, path), path, str(path))
    if suffix in (".jsonl", ".ndjson") and _first_line_is_corpus(path):
        return _pilot_from_corpus(Corpus.from_jsonl(path), path, embedder_factory, "corpus")
    table = read_feature_table(path)
    if not any(name in table.columns for name in PAPER_A_FEATURES) and \
            {"turn", "text"} <= set(table.columns):
        from engine.importers.transcripts import read_transcripts

        return _pilot_from_corpus(read_transcripts(path), path, embedder_factory, "transcripts")
    return _feature_pilot(table, path, str(path))


def _feature_pilot(table: pd.DataFrame, path, description: str, model: str | None = None) -> Pilot:
    missing = [name for name in PAPER_A_FEATURES if name not in table.columns]
    if missing:
        raise InputError(f"a pilot table needs the nine feature columns (Table 19) or turns to "
                         f"measure (conversation_id, turn, speaker, text); it lacks {missing[0]!r}",
                         path=str(path), field=missing[0])
    return Pilot(table, description, model)


def load_reference_for_diagnosis(path=None) -> pd.DataFrame:
    """The reference a pilot is placed against: the paper release's trajectory sample (no
    path, or its metrics CSV) or a dataset folder's LLM conversations, with the embedding model
    and implementation its manifest records (``attrs``)."""
    from pathlib import Path

    from engine.stats.reference import load_reference

    if path is None:
        return load_reference()
    path = Path(path)
    if path.is_dir():
        from engine.datasets import Dataset

        return trajectory_rows(Dataset.load(path, with_corpus=False).conversations)
    return load_reference(path)


def trajectory_rows(table: pd.DataFrame) -> pd.DataFrame:
    """A dataset's LLM conversations of paper A's trajectory sample (open, instructed,
    iterative), as the release's reference holds them; columns it lacks filter nothing."""
    from engine.stats.reference import TRAJECTORY_STRUCTURES

    if "source" in table.columns:
        table = table[table["source"] == "llm"]
    if "discussion" in table.columns:
        table = table[table["discussion"].isin(TRAJECTORY_STRUCTURES)]
    return table


def _first_line_is_corpus(path) -> bool:
    from engine.storage.files import first_line

    first = first_line(path)
    return '"__corpus__"' in first or '"turns"' in first


def _pilot_from_corpus(corpus, path, embedder_factory, kind: str) -> Pilot:
    from engine.datasets import dataset_from_corpus

    finished = corpus.filter(lambda c: c.status == "ok" and len(c.turns) > 0)
    if len(finished) == 0:
        raise InputError(f"the {kind} holds no finished conversation with turns", path=str(path))
    if embedder_factory is None:
        raise InputError(f"the {kind} has turns but no features: an embedding model is needed",
                         path=str(path))
    embedder = embedder_factory()
    dataset = dataset_from_corpus(finished, embedder, name=path.stem)
    model = dataset.manifest.get("embedding_model")
    return Pilot(dataset.conversations, f"{kind} {path} ({len(finished)} conversations, features "
                 f"computed here with {model})", model)
