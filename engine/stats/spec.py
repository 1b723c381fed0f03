"""Regression specifications as data (paper A, Tables 1, 7, 20, 21, 23, 29).

A :class:`RegressionSpec` names an outcome, predictor blocks (see ``engine.stats.design``)
and an estimator; it can be read from YAML or a dict so that users and the dashboard
define models without code. ``hierarchical_specs`` returns the paper's ladder.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from engine.errors import InputError

ESTIMATORS = ("ols_hc3", "ols", "ols_cluster", "mixedlm")
DEFAULT_STAR_LEVELS = (0.05, 0.01, 0.001)
# the levels paper A's printed stars follow in its regression ladders (Tables 7, 15, 20, 21)
PAPER_LADDER_STAR_LEVELS = (0.10, 0.05, 0.01)


@dataclass
class RegressionSpec:
    """One regression: ``outcome ~ blocks`` fitted by ``estimator``.

    * ``estimator``: ``ols_hc3`` (OLS, HC3 robust SEs, the paper's default), ``ols``
      (classical SEs), ``ols_cluster`` (SEs clustered by ``cluster``, paper A A.5) or
      ``mixedlm`` (REML, random intercepts for ``group``; Tables 20/21 Model 5).
    * ``zscore``: standardise the outcome and numeric predictors within the sample used.
    * ``reference``: reference level per factor column (default: first level sorted).
    * ``columns``: block-column renames, e.g. ``{"task": "question_id"}``.
    * ``star_levels``: p thresholds for one, two and three stars (Table 20 uses .10/.05/.01).
    """

    name: str
    outcome: str
    blocks: list[str]
    estimator: str = "ols_hc3"
    group: str = "task"
    zscore: bool = True
    cluster: str | None = None
    reference: dict[str, str] = field(default_factory=dict)
    columns: dict[str, str] = field(default_factory=dict)
    star_levels: tuple[float, float, float] = DEFAULT_STAR_LEVELS

    def __post_init__(self) -> None:
        where = f"specification {self.name!r}"
        if not isinstance(self.name, str) or not self.name:
            raise InputError("a specification needs a non-empty name", field="name")
        if not isinstance(self.outcome, str) or not self.outcome:
            raise InputError(f"{where}: outcome must be a column name", field="outcome")
        if isinstance(self.blocks, str):
            self.blocks = [b.strip() for b in self.blocks.split(",") if b.strip()]
        if not isinstance(self.blocks, (list, tuple)) or not all(isinstance(b, str) for b in self.blocks):
            raise InputError(f"{where}: blocks must be a list of block names", field="blocks")
        self.blocks = list(dict.fromkeys(self.blocks))
        if self.estimator not in ESTIMATORS:
            raise InputError(f"{where}: estimator {self.estimator!r} is not one of {list(ESTIMATORS)}",
                             field="estimator")
        if self.estimator == "ols_cluster" and not self.cluster:
            raise InputError(f"{where}: estimator ols_cluster needs 'cluster' (the column whose "
                             "values define the clusters)", field="cluster")
        if self.estimator != "mixedlm" and not self.blocks:
            raise InputError(f"{where}: an OLS specification needs at least one block", field="blocks")
        if not isinstance(self.group, str) or not self.group:
            raise InputError(f"{where}: group must be a column name", field="group")
        if self.cluster is not None and (not isinstance(self.cluster, str) or not self.cluster):
            raise InputError(f"{where}: cluster must be a column name", field="cluster")
        if not isinstance(self.zscore, bool):
            raise InputError(f"{where}: zscore must be true or false, got {self.zscore!r}",
                             field="zscore")
        self.star_levels = _star_levels(self.star_levels, where)
        for attribute in ("reference", "columns"):
            value = getattr(self, attribute)
            if not isinstance(value, dict) or not all(
                    isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
                raise InputError(f"{where}: {attribute} must be a mapping of column names to "
                                 "names", field=attribute)

    @classmethod
    def from_dict(cls, data: dict) -> "RegressionSpec":
        """A specification from a plain mapping (unknown keys are an error, not ignored)."""
        if not isinstance(data, dict):
            raise InputError(f"a specification must be a mapping, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(map(str, set(data) - known))
        if unknown:
            raise InputError(f"unknown specification key(s) {unknown}; known keys are {sorted(known)}",
                             field=unknown[0])
        for required in ("name", "outcome"):
            if required not in data:
                raise InputError(f"a specification needs {required!r}", field=required)
        values = dict(data)
        values.setdefault("blocks", [])
        return cls(**values)

    @classmethod
    def from_yaml(cls, path: str | Path) -> "RegressionSpec":
        """Read one specification from a YAML mapping (see :func:`load_specs` for several)."""
        specs = load_specs(path)
        if len(specs) != 1:
            raise InputError(f"holds {len(specs)} specifications; use load_specs for a list",
                             path=str(path))
        return specs[0]

    def to_dict(self) -> dict:
        data = asdict(self)
        data["star_levels"] = list(self.star_levels)
        return data


def _star_levels(value, where: str) -> tuple[float, float, float]:
    """Three decreasing p values in (0, 1), or an InputError saying what was given."""
    problem = (f"{where}: star_levels must be a list of three decreasing p values in (0, 1), "
               f"got {value!r}")
    if not isinstance(value, (list, tuple)) or len(value) != 3 or not all(
            isinstance(p, (int, float)) and not isinstance(p, bool) for p in value):
        raise InputError(problem, field="star_levels")
    levels = tuple(float(p) for p in value)
    if not all(0 < p < 1 for p in levels) or not levels[0] > levels[1] > levels[2]:
        raise InputError(problem, field="star_levels")
    return levels


def load_specs(path: str | Path) -> list[RegressionSpec]:
    """Specifications from YAML: one mapping, a list, or ``{specs: [...]}``."""
    from engine.storage.yaml_safe import load_yaml

    path = Path(path)
    data = load_yaml(path)
    if isinstance(data, dict) and "specs" in data:
        data = data["specs"]
    items = data if isinstance(data, list) else [data]
    if not items or data is None:
        raise InputError("holds no specification", path=str(path))
    specs = []
    for position, item in enumerate(items, start=1):
        try:
            specs.append(RegressionSpec.from_dict(item))
        except InputError as error:
            raise InputError(f"specification {position}: {error.reason}", path=str(path),
                             field=error.field) from None
    return specs


def parse_star_levels(text) -> tuple[float, float, float]:
    """``"conventional"`` (.05/.01/.001), ``"tenths"`` (.10/.05/.01) or three decreasing p values
    (``".1,.05,.01"`` or a sequence)."""
    named = {"conventional": DEFAULT_STAR_LEVELS, "tenths": PAPER_LADDER_STAR_LEVELS}
    if isinstance(text, str) and text in named:
        return named[text]
    try:
        levels = tuple(float(p) for p in (text.split(",") if isinstance(text, str) else text))
    except (TypeError, ValueError):
        levels = ()
    if len(levels) != 3 or not all(0 < p < 1 for p in levels) or not levels[0] > levels[1] > levels[2]:
        raise InputError(f"stars must be 'conventional', 'tenths' or three decreasing p values in (0, 1), "
                         f"got {text!r}", field="stars")
    return levels


def hierarchical_specs(outcome: str = "creativity", sample: str = "llm",
                       star_levels=PAPER_LADDER_STAR_LEVELS) -> list[RegressionSpec]:
    """The hierarchical ladder of paper A, Table 1 (Tables 20 and 21 in full), with stars at
    Tables 20/21's levels (.10/.05/.01) unless ``star_levels`` says otherwise.

    LLM: trajectory, + task, + model, + discussion (OLS, HC3), then a mixed model with task
    random intercepts and trajectory + model + discussion fixed effects. Human: trajectory,
    + task, then the mixed model with trajectory fixed effects.
    """
    if sample == "llm":
        ladder = [("trajectory", ["trajectory"]), ("+task", ["trajectory", "task"]),
                  ("+model", ["trajectory", "task", "model"]),
                  ("+discussion", ["trajectory", "task", "model", "discussion"])]
        mixed = ["trajectory", "model", "discussion"]
    elif sample == "human":
        ladder = [("trajectory", ["trajectory"]), ("+task", ["trajectory", "task"])]
        mixed = ["trajectory"]
    else:
        raise InputError(f"sample must be 'llm' or 'human', got {sample!r}", field="sample")
    specs = [RegressionSpec(name=f"{sample}: {label}", outcome=outcome, blocks=blocks, star_levels=star_levels)
             for label, blocks in ladder]
    specs.append(RegressionSpec(name=f"{sample}: mixed effects", outcome=outcome, blocks=mixed,
                                estimator="mixedlm", group="task", star_levels=star_levels))
    return specs


def discussion_specs(outcome: str = "creativity", star_levels=PAPER_LADDER_STAR_LEVELS) -> list[RegressionSpec]:
    """Table 7's ladder: discussion; + model; + task; + model × discussion (Model 4, primary).

    The paper fits these on three-agent teams with "different" personas, raw (not z-scored)
    creativity, reference discussion = none and model = Mixed; filter the rows first.
    """
    ladder = [("discussion", ["discussion"]), ("+model", ["discussion", "model"]),
              ("+task", ["discussion", "model", "task"]),
              ("+interaction", ["discussion", "model", "task", "model_x_discussion"])]
    return [RegressionSpec(name=f"table 7: {label}", outcome=outcome, blocks=blocks, zscore=False,
                           reference={"discussion": "none", "model": "Mixed"}, star_levels=star_levels)
            for label, blocks in ladder]


def token_control_spec(outcome: str = "creativity") -> RegressionSpec:
    """Table 29: discussion effects controlling for model, task and total token count (``tokens``)."""
    return RegressionSpec(name="table 29: token control", outcome=outcome,
                          blocks=["discussion", "model", "task", "tokens"], zscore=False,
                          reference={"discussion": "progressive"})
