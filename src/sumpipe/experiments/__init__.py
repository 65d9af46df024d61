"""Experiments with their own DVC pipelines under experiments/ (seed 004's numerals)."""
