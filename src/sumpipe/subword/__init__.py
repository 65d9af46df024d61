"""Subword vocabulary (seed 003): a sentencepiece model trained on the train split, and its use."""
