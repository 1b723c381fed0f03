"""A pilot's diagnosis against the paper release, and prescribe-and-verify."""
