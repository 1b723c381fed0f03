"""Names the command line offers or prints at ``--help``: paper A's discussion structures,
paper B's debate methods and benchmarks, the paper release's embedding models.

Kept apart from ``engine.protocols`` and ``engine.stats`` (which load numpy, pandas,
pydantic, SciPy and statsmodels), so building the CLI's parser loads none of them.
"""

PAPER_A = ("none", "open", "instructed", "iterative", "progressive")
PAPER_B = ("direct", "self_refine", "voting", "homo_mad", "hetero_mad", "creative_mad")
# Beyond the papers: paper A's open discussion steered by its running trajectory features
STEERED = ("steered",)
METHODS = PAPER_A + PAPER_B + STEERED

# paper B's four benchmarks (engine.tasks.benchmark_tasks reads them; a tasks file may name one)
BENCHMARKS = ("liveideabench", "aae", "macgyver", "arena_hard_creative")

RELEASE_EMBEDDING = "Qwen/Qwen3-Embedding-0.6B"  # paper A's nine features in the release
RELEASE_EMBEDDING_4B = "Qwen/Qwen3-Embedding-4B"  # the *_4b columns (Table 26)
