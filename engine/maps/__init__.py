"""Embedding maps: 2-D projections of turns (paper A, Fig. 4) and named clusters."""
