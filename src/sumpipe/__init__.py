"""sumpipe: a reproducible text-summarization research pipeline."""

__version__ = "0.1.0"
