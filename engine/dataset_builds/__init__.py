"""Datasets built from what the engine made or read: a run folder (``run_folder``), the steered
discussion's run with its final-idea embeddings (``steered``) and paper A's released metrics
(``paper_release``). ``python -m engine dataset`` is their command line."""
