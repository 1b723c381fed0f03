"""Conversation measures: paper A's trajectory features (Table 19), registered measures, paper B's diversity."""
