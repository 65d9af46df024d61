"""NMF keyword extraction over references (Sokol 2022 §4.2)."""

from sumpipe.extractive.keywords import extract_keywords
from sumpipe.extractive.methods import Analyzer

SPORT = ["striker scores goal in final", "goal keeper saves penalty in final", "striker goal wins cup final"]
POLITICS = ["senate passes budget vote", "budget vote delayed in senate", "senate budget talks collapse"]


def test_two_topics_and_their_words():
    refs = {"train": ([f"t{i}" for i in range(6)], SPORT + POLITICS),
            "test": (["a", "b", "c"], ["final goal", "senate vote", "the of"])}
    keywords, topics = extract_keywords(refs, Analyzer(), topics=2, words=3)
    tops = {t: set(g["word"]) for t, g in keywords.groupby("topic")}
    assert len(tops) == 2
    sport = next(t for t, w in tops.items() if "final" in w or "goal" in w)
    politics = 1 - sport
    assert tops[politics] & {"senate", "budget", "vote"}
    test = dict(zip(topics[topics["split"] == "test"]["id"], topics[topics["split"] == "test"]["topic"]))
    assert test == {"a": sport, "b": politics, "c": -1}          # no known word: no topic


def test_references_without_content_words():
    keywords, topics = extract_keywords({"train": (["x"], ["the of"])}, Analyzer(), topics=3, words=2)
    assert keywords.empty and topics["topic"].tolist() == [-1]
