"""Names the command line offers or prints at ``--help``: paper A's discussion structures,
paper B's debate methods and benchmarks, the paper release's embedding models.

Kept apart from ``engine.stats`` (which loads pandas, SciPy and statsmodels), so building
the CLI's parser loads none of them, and importing nothing of the engine. The method names
are the frozen lists of the papers' own methods, for paper-A-only or paper-B-only analyses
and imports; the methods' descriptions (``engine.protocols.registry``: ``paper_a_methods()``,
``paper_b_methods()``) give the same lists, which ``tests/engine/protocols`` checks. Every
built-in method is ``engine.protocols.registry.BUILT_IN_NAMES``; what can be run, plugins'
methods included, ``engine.protocols.registry.method_names()``.
"""

# paper A's five discussion structures (appendix A.1.2, Table 6), in the paper's order
PAPER_A = ("none", "open", "instructed", "iterative", "progressive")
# paper B's six methods (section 6), in the paper's order
PAPER_B = ("direct", "self_refine", "voting", "homo_mad", "hetero_mad", "creative_mad")

# paper B's four benchmarks (engine.tasks.benchmark_tasks reads them; a tasks file may name one)
BENCHMARKS = ("liveideabench", "aae", "macgyver", "arena_hard_creative")

RELEASE_EMBEDDING = "Qwen/Qwen3-Embedding-0.6B"  # paper A's nine features in the release
RELEASE_EMBEDDING_4B = "Qwen/Qwen3-Embedding-4B"  # the *_4b columns (Table 26)
