"""Subword vocabulary (Roy Choudhury 2020): a sentencepiece model trained on the train split, and its use."""
