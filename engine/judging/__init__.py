"""LLM judges: paper A's ratings, paper B's quality, the consensus bias check, paraphrase."""
