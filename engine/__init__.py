"""creativity-dynamics lab: run, measure and analyse creative multi-agent discussions.

Data flows one way: protocols or importers -> Corpus -> embed -> features / diversity
-> stats / projection -> dashboard, CLI and exports. Nothing here imports Streamlit.
"""

__version__ = "0.1.0"
