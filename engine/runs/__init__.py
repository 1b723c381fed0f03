"""Running sessions: grids, conditions, the runner (in memory or a resumable run folder)."""
