"""Names the command line offers or prints at ``--help``: paper A's discussion structures,
paper B's debate methods and benchmarks, the paper release's embedding models.

Kept apart from ``engine.stats`` (which loads pandas, SciPy and statsmodels), so building
the CLI's parser loads none of them. The method names are read from the built-in methods'
descriptions (``engine.protocols.registry``, light to import); they are the frozen lists of
the papers' own methods, for paper-A-only or paper-B-only analyses and imports. What can be
run, plugins' methods included, is ``engine.protocols.registry.method_names()``.
"""

from engine.protocols.registry import BUILT_IN_METHODS

PAPER_A = tuple(m.name for m in BUILT_IN_METHODS if m.paper == "A")  # none, open, instructed, iterative, progressive
PAPER_B = tuple(m.name for m in BUILT_IN_METHODS if m.paper == "B")  # direct ... creative_mad
METHODS = tuple(m.name for m in BUILT_IN_METHODS)  # the built-ins: PAPER_A + PAPER_B + steered

# paper B's four benchmarks (engine.tasks.benchmark_tasks reads them; a tasks file may name one)
BENCHMARKS = ("liveideabench", "aae", "macgyver", "arena_hard_creative")

RELEASE_EMBEDDING = "Qwen/Qwen3-Embedding-0.6B"  # paper A's nine features in the release
RELEASE_EMBEDDING_4B = "Qwen/Qwen3-Embedding-4B"  # the *_4b columns (Table 26)
