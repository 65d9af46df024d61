"""The NLTK-book regular expression with its quirks fixed (on lowercased ASCII text)."""

from __future__ import annotations

import re

import pytest

from sumpipe.text.tokenize import MAX_TOKEN_CHARS, split_possessive, tokenize, tokenize_lines

# The pattern exactly as printed in the NLTK book, ch. 3.7, to show what was wrong with it.
NLTK_BOOK = re.compile(r"""(?x)
    (?:[A-Z]\.)+
  | \w+(?:-\w+)*
  | \$?\d+(?:\.\d+)?%?
  | \.\.\.
  | [][.,;"'?():-_`]
""")


@pytest.mark.parametrize(("text", "book", "fixed"), [
    ("u.s.a.", ["u", ".", "s", ".", "a", "."], ["u.s.a."]),
    ("12.40", ["12", ".", "40"], ["12.40"]),
    ("82%", ["82"], ["82", "%"]),
    ("$41.1", ["$41.1"], ["$", "41.1"]),
    ("wow!", ["wow"], ["wow", "!"]),
    ("(reuters) --", ["(", "reuters", ")"], ["reuters"]),
])
def test_book_quirks_and_their_fixes(text: str, book: list[str], fixed: list[str]) -> None:
    assert NLTK_BOOK.findall(text) == book
    assert tokenize(text) == fixed


@pytest.mark.parametrize(("text", "tokens"), [
    ("poster-print and analyst/personality", ["poster-print", "and", "analyst/personality"]),
    ("o'neill's don't", ["o'neill's", "don't"]),                 # inner apostrophes stay
    ("editor 's note", ["editor", "'s", "note"]),
    ("he said ... then", ["he", "said", "...", "then"]),
    ("1,000,000 at 10:30 ; #.# and ##-year-old", ["1,000,000", "at", "10:30", ";", "#.#", "and", "##-year-old"]),
    ("# 20 million", ["#", "20", "million"]),
    ("mr. smith and george w. bush met sen. kerry jr.", ["mr.", "smith", "and", "george", "w.", "bush",
                                                          "met", "sen.", "kerry", "jr", "."]),
    ("time inc. , which", ["time", "inc.", ",", "which"]),
    ("u.s.-led anti-u.s. then-sen. obama", ["u.s.-led", "anti-u.s.", "then-sen.", "obama"]),
    ("see ew.com or cnn.com/video .", ["see", "ew.com", "or", "cnn.com/video", "."]),
    ("go to http://www.cnn.com/2008/us/index.html .", ["go", "to", "http://www.cnn.com/2008/us/index.html", "."]),
    ('he said "hi" (loudly) [sic] -- ok', ["he", "said", "hi", "loudly", "sic", "ok"]),
    ("a .45 caliber", ["a", ".45", "caliber"]),
    ("", []),
])
def test_tokens(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_tokenize_lines_joins_tokens_and_drops_empty_lines() -> None:
    assert tokenize_lines("hello ,world!\n -- \n( bye )") == "hello , world !\nbye"


@pytest.mark.parametrize(("text", "expected"), [
    ("amy's", "amy 's"),
    ("amy\u2019s", "amy 's"),
    ("it's bush's", "it 's bush 's"),
    ("'s alone", "'s alone"),      # nothing before the apostrophe: not a possessive
    ("amy'sx", "amy'sx"),
])
def test_split_possessive(text: str, expected: str) -> None:
    assert split_possessive(text) == expected


# --------------------------------------------------------------------------------------------
# Linear time on adversarial text: a hang detector, not a benchmark
# --------------------------------------------------------------------------------------------
# The worst inputs found (a fuzzer over units of 1-6 characters, each repeated to 1 MB, then the flagged
# ones checked at growing lengths). All are dotted chains: the domain look-ahead ("ew.com") used to read
# the rest of the chain again at each of its dots, so 1 MB of "ab." took over an hour; a chain with a
# domain at its end ("ab.ab...ab.com") was as slow, and so were initials and digits between the dots.
WORST = {
    "two-letter labels": "ab.",
    "letter-digit labels": "a1.",
    "hash-mask labels": "a#.",
    "single letters after a word": "w.b",
    "labels, a domain at the end": "ab.",  # + ".com" below
    "three-letter labels": "abc.",
}
MB = 1 << 20
BOUND_S = 10.0  # generous: ~1 s on a busy 2-core machine; the unbounded look-ahead needs ~4,000 s


def _megabyte(unit: str, end: str = "") -> str:
    return (unit * (MB // len(unit) + 1))[: MB - len(end)] + end


def _timed_in_child(code: str, timeout: float) -> float:
    """Seconds `code` (run in a child interpreter, which prints its own timing) took, or fail at `timeout`:
    a regular expression that backtracks does not answer signals, so the bound is the child's lifetime."""
    import subprocess
    import sys

    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                              check=True)
    except subprocess.TimeoutExpired:
        pytest.fail(f"no answer within {timeout:.0f} s: the pattern backtracks")
    return float(done.stdout.split()[-1])


@pytest.mark.parametrize("name", list(WORST))
def test_a_megabyte_of_the_worst_input_is_tokenized_in_linear_time(name: str) -> None:
    text = _megabyte(WORST[name], ".com" if "domain" in name else "")
    code = ("import time\nfrom sumpipe.text.tokenize import tokenize\n"
            f"text = {text[:64]!r} * {len(text) // 64} + {text[len(text) // 64 * 64:]!r}\n"
            "start = time.perf_counter(); tokens = tokenize(text); seconds = time.perf_counter() - start\n"
            "assert ''.join(tokens) == text.replace(' ', '')\n"  # every character kept: only the time was at stake
            "print(seconds)")
    assert _timed_in_child(code, BOUND_S + 5) < BOUND_S, name


def test_the_whole_preprocessing_of_a_megabyte_of_dotted_chains_is_fast() -> None:
    text = _megabyte("ab.")
    code = ("import time\nfrom sumpipe.text.preprocess import preprocess_text\n"
            f"text = {text[:63]!r} * {len(text) // 63} + {text[len(text) // 63 * 63:]!r}\n"
            "start = time.perf_counter(); out = preprocess_text(text); seconds = time.perf_counter() - start\n"
            "assert out.startswith('ab . ab . ab'), out[:40]\n"
            "print(seconds)")
    assert _timed_in_child(code, BOUND_S + 5) < BOUND_S


def test_the_bounded_domain_look_ahead_gives_the_unbounded_tokens_on_every_shorter_chain() -> None:
    """The bound changes nothing for a chain whose domain label is at most MAX_DOMAIN_LABELS labels past a dot:
    random short texts (where the old, unbounded look-ahead is quick) tokenize alike."""
    import random

    from sumpipe.text.tokenize import MAX_DOMAIN_LABELS, TOKEN_PATTERN, TOKEN_RE

    bound = f"{{0,{MAX_DOMAIN_LABELS}}}"
    assert TOKEN_PATTERN.count(bound) == 1
    unbounded = re.compile(TOKEN_PATTERN.replace(bound, "*"), re.ASCII)
    rng = random.Random(32)
    pieces = ["ab", "a", "1", "#", "com", "org", "www", "mr", "u", "s", ".", ".", ".", "-", "/", "'", " ", ",", ":"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 40)))
        assert TOKEN_RE.findall(text) == unbounded.findall(text), text


@pytest.mark.parametrize(("labels", "joined"), [(3, True), (34, True), (35, False)])
def test_a_host_name_is_one_token_up_to_the_label_bound(labels: int, joined: bool) -> None:
    """`xy.ab.ab....ab.com`: one token while at most MAX_DOMAIN_LABELS (32) labels lie between the first dot
    and the domain, i.e. for host names of up to 34 labels."""
    text = "xy." + ".".join(["ab"] * (labels - 2)) + ".com"
    tokens = tokenize(text)
    assert (tokens == [text]) is joined, tokens


def test_a_token_longer_than_the_cap_is_cut_to_it() -> None:
    """A 5 MB line without a space was one 200,000-character "word", copied four times into an
    800 KB summary. Tokens up to the cap are untouched (the default corpus's longest is a 148-character URL)."""
    url = "https://example.com/" + "a" * 200
    assert tokenize(f"see {url} now") == ["see", url, "now"]
    giant = "x" * 5_000
    assert tokenize(f"a {giant} b .") == ["a", "x" * MAX_TOKEN_CHARS, "b", "."]
    assert tokenize_lines(f"{giant}\nthe end .") == f"{'x' * MAX_TOKEN_CHARS}\nthe end ."
    assert tokenize("y" * MAX_TOKEN_CHARS) == ["y" * MAX_TOKEN_CHARS]
