"""Published anchors for a judge checked against people, transcribed from the papers' text;
shown labelled "published", never mixed with the agreement computed here.

* Organisciak, Acar, Dumas & Berthiaume (2023), "Beyond semantic distance: Automated scoring of
  divergent thinking greatly improves with large language models", Thinking Skills and
  Creativity 49, 101356 (abstract): fine-tuned LLMs (Ocsai) reach up to r = .81 with human
  raters on Alternate Uses responses from nine studies (about 27,000 responses); semantic
  distance systems r = .12 to .26.
* Paper B (Nguyen et al., "Creative Generation via Multi-Agent Debate", appendix G.2): its
  judge agrees with the human majority vote on 81.0% of 120 pairwise comparisons; the human
  annotators agree with each other on 79.0% (pairwise).
* Paper A (Methods, "Creativity evaluation"; Table 4): five trained raters, ICC(3,5) novelty
  mean 0.83 (minimum 0.73), usefulness mean 0.75 (minimum 0.70).
"""

from __future__ import annotations

import pandas as pd

OCSAI = "Organisciak et al. 2023, Thinking Skills and Creativity 49, 101356"
PAPER_B = "paper B, appendix G.2"
PAPER_A = "paper A, Methods and Table 4"


def anchors() -> pd.DataFrame:
    """What each source reports, in its own terms (a correlation, a share of agreeing
    comparisons, an ICC): these are different statistics on different data, never one scale."""
    rows = [
        ("Fine-tuned LLM (Ocsai) vs human raters, Alternate Uses originality", "Pearson r", "up to .81",
         "27,000 responses, 9 studies", OCSAI),
        ("Semantic distance systems vs human raters, Alternate Uses originality", "Pearson r", ".12 to .26",
         "27,000 responses, 9 studies", OCSAI),
        ("LLM judge (Qwen3.5-397B-A17B) vs human majority vote", "share of pairwise verdicts", "81.0%",
         "120 comparisons, 4 benchmarks", PAPER_B),
        ("Human annotators with each other", "share of pairwise verdicts", "79.0%",
         "number of comparisons not given", PAPER_B),
        ("Five trained raters, novelty", "ICC(3,5)", "mean 0.83, minimum 0.73", "6 tasks", PAPER_A),
        ("Five trained raters, usefulness", "ICC(3,5)", "mean 0.75, minimum 0.70", "6 tasks", PAPER_A),
    ]
    return pd.DataFrame(rows, columns=["result", "statistic", "published", "sample", "source"])
