"""Statistics of paper A ("Multi-agent AI systems outperform human teams in creativity").

One module per job:

* ``spec``: :class:`RegressionSpec` (data, YAML) and the Table 1 ladder ``hierarchical_specs``
* ``design``: blocks -> design matrix, with errors for people
* ``regression``: ``fit`` (OLS + HC3 / clustered, REML mixed model, Nakagawa R²)
* ``effects``: ``simple_effects`` of discussion within model from an interaction fit (Table 8)
* ``compare``: ``compare_results`` (Table 23)
* ``collinearity``: ``vif``
* ``condition_diversity``: ``diversity_by_condition``, paper B's inter-session diversity per
  full condition and task (section 3.2)
* ``manipulability``: ``manipulability`` and ``interaction_share`` (Tables 2, 24, 25)
* ``groups``: ``group_comparison``, ``top_share``, ``group_effect_robustness`` (Fig. 1, A.5)
* ``reference``: the paper release's location and trajectory sample (N = 3,574)
* ``ratings``: ``minmax_within_task``, ``creativity_product``, ``creativity_additive``, ``icc3k``
* ``guards``: what a sample can carry: regression N/k rules, intervals inside a score's range,
  Welch tests with consistent Hedges' g intervals, Holm; the thresholds as named constants
"""

from engine.stats.collinearity import vif
from engine.stats.compare import compare_results
from engine.stats.design import BLOCKS, build_design
from engine.stats.effects import simple_effects
from engine.stats.groups import (cohens_d, group_comparison, group_effect_robustness, mean_ci,
                                 top_share, top_within_groups)
from engine.stats.manipulability import MANIPULABILITY_COLUMNS, interaction_share, manipulability
from engine.stats.ratings import creativity_additive, creativity_product, icc3k, minmax_within_task
from engine.stats.reference import (default_release_path, generating_cluster, load_reference,
                                    trajectory_sample)
from engine.stats.regression import RegressionResult, fit, stars
from engine.stats.spec import (ESTIMATORS, RegressionSpec, discussion_specs, hierarchical_specs, load_specs,
                               token_control_spec)

__all__ = [
    "BLOCKS", "ESTIMATORS", "MANIPULABILITY_COLUMNS", "RegressionResult", "RegressionSpec",
    "build_design", "cohens_d", "compare_results", "creativity_additive", "creativity_product",
    "discussion_specs", "fit", "group_comparison", "group_effect_robustness", "hierarchical_specs", "icc3k",
    "interaction_share", "load_specs", "manipulability", "mean_ci", "minmax_within_task",
    "simple_effects", "stars", "token_control_spec", "top_share", "top_within_groups", "vif", "default_release_path", "generating_cluster", "load_reference", "trajectory_sample",
]
