"""Raw text summarised by `sumpipe decode INPUT` through the real entry point (`sumpipe.cli.main`): the
reading, splitting, model choice and note of `sumpipe.decode.interactive`, and every kind of bad input giving one
line on stderr and exit status 1 — never a traceback."""

from __future__ import annotations

import json

import pytest


# --------------------------------------------------------------------------------------------
# Good input
# --------------------------------------------------------------------------------------------
def test_summarises_a_file(workdir, cli) -> None:
    code, out, err = cli("decode", "--beam", "4", "--model", "M1", "article.txt", cwd=workdir)
    assert code == 0, err
    words = out.split()
    assert 1 <= len(words) <= 10 and "<unk>" not in words


def test_stdin_json_lines_with_details(workdir, cli, article) -> None:
    data = f"{article}\n\nzebra quixotic walrus police\n".encode()
    code, out, err = cli("decode", "--json", "--per-block", "-m", "M2", "-", cwd=workdir, stdin=data)
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["document"] for r in records] == [1, 2]
    for r in records:
        assert r["model"] == "M2" and len(r["p_gen"]) == len(r["tokens"]) >= 1
        assert len(r["attention"]) == len(r["tokens"])
        assert all(len(row) == len(r["source_tokens"]) for row in r["attention"])
    assert records[1]["source_tokens"] == ["zebra", "quixotic", "walrus", "police"]


def test_per_line_keeps_line_order_and_flags_non_latin_lines(workdir, cli) -> None:
    data = "the cat sat on the mat .\nПривет мир\n\npolice said the man was arrested\n".encode()
    code, out, err = cli("decode", "--per-line", "-", cwd=workdir, stdin=data)
    assert code == 0
    lines = out.split("\n")[:-1]
    assert len(lines) == 4 and lines[0] and lines[1] == lines[2] == "" and lines[3]
    assert "1 with no Latin-script text to summarise (preprocessing keeps ASCII only) (document 2)" in err


# --------------------------------------------------------------------------------------------
# One output per input document, in its place (--per-line, --per-block; text and --json)
# --------------------------------------------------------------------------------------------
GOOD = ["the cat sat on the mat .", "police said the man was arrested on monday ."]
MIXED_LINES = [GOOD[0], "", "\u5317\u4eac\u5e02\u7684\u5929\u6c14", "   ", "!!! ??? ...", GOOD[1], "\t"]
EMPTY_AT = {2: "blank", 3: "latin", 4: "blank", 5: "latin", 7: "blank"}  # 1-based line -> why it is empty


def _note_line(err: str) -> str:
    notes = [line for line in err.splitlines() if "empty summary" in line]
    assert len(notes) == 1, err  # ONE note counts them, not a warning per document
    return notes[0]


@pytest.mark.parametrize("crlf", [False, True])
def test_per_line_gives_one_output_line_per_input_line(workdir, cli, crlf) -> None:
    newline = "\r\n" if crlf else "\n"
    data = (newline.join(MIXED_LINES) + newline).encode()
    code, out, err = cli("decode", "-m", "M1", "--per-line", "-", cwd=workdir, stdin=data)
    assert code == 0, err
    lines = out.split("\n")
    assert lines[-1] == "" and len(lines[:-1]) == len(MIXED_LINES)  # `paste input output` pairs them
    for n, line in enumerate(lines[:-1], start=1):
        assert (line == "") == (n in EMPTY_AT), (n, line)
    note = _note_line(err)
    assert note == ("note: 5 of 7 documents have an empty summary in their place: 3 blank (documents 2, 4, 7); "
                    "2 with no Latin-script text to summarise (preprocessing keeps ASCII only) (documents 3, 5)")
    assert "warning" not in err


def test_per_line_json_gives_one_record_per_input_line(workdir, cli) -> None:
    data = ("\n".join(MIXED_LINES) + "\n").encode()
    code, out, err = cli("decode", "-m", "M1", "--per-line", "--json", "-", cwd=workdir, stdin=data)
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["document"] for r in records] == list(range(1, len(MIXED_LINES) + 1))
    for r in records:
        why = EMPTY_AT.get(r["document"])
        if why is None:
            assert r["summary"] and "error" not in r
        else:
            assert r["summary"] == "" and r["error"].startswith("blank" if why == "blank" else "no Latin-script")
    _note_line(err)


def test_per_line_on_a_file_without_a_final_newline_and_with_line_separators(workdir, cli, tmp_path) -> None:
    # U+2028 and form feed are no line ends for `wc -l` and `paste`: they must not split a document either
    path = tmp_path / "in.txt"
    path.write_text(f"{GOOD[0]}\u2028{GOOD[1]}\n\n{GOOD[1]}\x0cand more", encoding="utf-8")
    code, out, err = cli("decode", "-m", "M1", "--per-line", str(path), cwd=workdir)
    assert code == 0, err
    lines = out.split("\n")[:-1]
    assert len(lines) == 3 and lines[0] and lines[1] == "" and lines[2]


def test_per_block_gives_one_output_block_per_input_block(workdir, cli) -> None:
    blocks = [GOOD[0] + "\n" + GOOD[1], "\u5317\u4eac\n\u4e0a\u6d77", GOOD[1], "!!!\n???", GOOD[0]]
    data = ("\n\n\n" + "\n\n".join(blocks[:3]) + "\n \n\n\t\n" + "\n\n".join(blocks[3:]) + "\n\n").encode()
    code, out, err = cli("decode", "-m", "M1", "--per-block", "-", cwd=workdir, stdin=data)
    assert code == 0, err
    outputs = out.split("\n\n")  # each summary, then one blank line: an empty one is an empty entry
    assert outputs[-1] == "" and len(outputs[:-1]) == len(blocks)
    assert [bool(o) for o in outputs[:-1]] == [True, False, True, False, True]
    assert all("\n" not in o for o in outputs[:-1])
    assert "2 of 5 documents have an empty summary" in _note_line(err)
    code, out, err = cli("decode", "-m", "M1", "--per-block", "--json", "-", cwd=workdir, stdin=data)
    records = [json.loads(line) for line in out.splitlines()]
    assert [("error" in r) for r in records] == [False, True, False, True, False]


def test_api_and_command_line_agree_on_the_empty_ones(workdir, cli) -> None:
    import sumpipe

    summaries = sumpipe.load("M1", project=workdir, device="cpu").summarize(MIXED_LINES)
    assert len(summaries) == len(MIXED_LINES)
    code, out, _ = cli("decode", "-m", "M1", "--per-line", "--json", "-", cwd=workdir,
                       stdin=("\n".join(MIXED_LINES) + "\n").encode())
    records = [json.loads(line) for line in out.splitlines()]
    assert [s.error for s in summaries] == [r.get("error") for r in records]
    assert summaries[1].error == "blank: nothing to summarise"
    assert summaries[2].error.startswith("no Latin-script text")


def test_only_unreadable_lines_is_one_error_line(workdir, cli, assert_one_line_error) -> None:
    data = "\n\u5317\u4eac\n!!!\n".encode()
    assert_one_line_error(cli("decode", "-m", "M1", "--per-line", "-", cwd=workdir, stdin=data),
                          "none of the 3 documents has Latin-script text")


def test_default_model_is_the_best_by_rouge_l(workdir, cli) -> None:
    metrics = workdir / "metrics"
    metrics.mkdir(exist_ok=True)
    (metrics / "rouge.json").write_text(json.dumps(
        {"M1": {"rougeL": 20.0}, "M2": {"rougeL": 21.5}, "lead3": {"rougeL": 30.0}}))
    try:
        code, out, _ = cli("decode", "--json", "article.txt", cwd=workdir)
        assert code == 0 and json.loads(out)["model"] == "M2"
    finally:
        (metrics / "rouge.json").unlink()
    code, out, _ = cli("decode", "--json", "article.txt", cwd=workdir)
    assert json.loads(out)["model"] == "M1"                        # fallback without metrics


def test_prints_readable_text_and_says_which_model_on_stderr(workdir, cli, article) -> None:
    code, readable_out, err = cli("decode", "-m", "M1", "article.txt", cwd=workdir)
    code_tokens, tokens_out, _ = cli("decode", "-m", "M1", "--tokens", "article.txt", cwd=workdir)
    assert code == code_tokens == 0
    from sumpipe.decode.readable import readable

    # the same summary: the tokenized form (lowercase, spaces around punctuation) made readable
    assert tokens_out == tokens_out.lower()
    assert readable_out.strip() == readable(tokens_out.strip(), article) != tokens_out.strip()
    assert err == ("note: model M1 seed 1 (its only seed) (transformer, input first400) trained on pydoc; "
                   "no test ROUGE yet (`dvc repro` writes metrics/rouge.json)\n")


def test_a_model_trained_with_several_seeds_answers_with_its_best_validation_seed(workdir, cli) -> None:
    # M2 has seeds 1 and 2; seed 2's validation loss is the lower: chosen on validation, never on test.
    metrics = workdir / "metrics"
    metrics.mkdir(exist_ok=True)
    (metrics / "rouge.json").write_text(json.dumps(
        {"M2": {"rouge1": 22.468, "rouge1_sd": 0.481, "n_seeds": 2, "seeds": {"1": {"rouge1": 22.1},
                                                                            "2": {"rouge1": 22.8}}},
         "lead3": {"rouge1": 21.4}}))
    try:
        code, out, err = cli("decode", "--json", "-m", "M2", "article.txt", cwd=workdir)
        code_1, out_1, err_1 = cli("decode", "--json", "-m", "M2", "--train-seed", "1", "article.txt", cwd=workdir)
    finally:
        (metrics / "rouge.json").unlink()
    assert code == code_1 == 0
    assert (json.loads(out)["model"], json.loads(out)["seed"], json.loads(out_1)["seed"]) == ("M2", 2, 1)
    assert err.startswith("note: model M2 seed 2 (lowest validation loss of 2 seeds; --train-seed picks another) ")
    assert err.endswith("test ROUGE-1 22.47 ± 0.48 over 2 seeds (seed 2: 22.80), Lead-3 21.40 (metrics/rouge.json)\n")
    assert err_1.startswith("note: model M2 seed 1 (--train-seed) ") and "(seed 1: 22.10)" in err_1


def test_a_seed_that_was_not_trained_is_a_one_line_error(workdir, cli, assert_one_line_error) -> None:
    assert_one_line_error(cli("decode", "-m", "M2", "--train-seed", "5", "article.txt", cwd=workdir),
                          "--train-seed 5: models/M2 has no such seed (trained: 1, 2)")


def test_note_gives_the_model_s_test_rouge_beside_lead_3(workdir, cli) -> None:
    metrics = workdir / "metrics"
    metrics.mkdir(exist_ok=True)
    (metrics / "rouge.json").write_text(json.dumps({"M1": {"rouge1": 25.256}, "lead3": {"rouge1": 21.4}}))
    try:
        code, _, err = cli("decode", "-m", "M1", "article.txt", cwd=workdir)
    finally:
        (metrics / "rouge.json").unlink()
    assert code == 0 and err.endswith("trained on pydoc; test ROUGE-1 25.26, Lead-3 21.40 (metrics/rouge.json)\n")


def test_model_given_as_a_directory(workdir, cli) -> None:
    code, out, _ = cli("decode", "--json", "-m", str(workdir / "models" / "M2"), "article.txt", cwd=workdir)
    assert code == 0 and json.loads(out)["model"] == "M2"


def test_invalid_utf8_is_a_one_line_error_naming_the_byte_offset(workdir, cli, tmp_path, assert_one_line_error) -> None:
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("The caf\xe9 owner said the man was arrested.".encode("latin-1"))
    assert_one_line_error(cli("decode", "-m", "M1", str(bad), cwd=workdir),
                          f"{bad}: not UTF-8 text (byte 0xe9 at offset 7)")


def test_a_utf8_character_cut_by_the_size_cap_is_dropped_not_an_error() -> None:
    from sumpipe.decode.interactive import decode_text
    from sumpipe.errors import SumpipeError

    data = "caf\xe9 au lait".encode()[:4]  # "caf" + the first byte of the two-byte "\xe9"
    assert decode_text(data, "utf-8-sig", "x", truncated=True) == "caf"
    with pytest.raises(SumpipeError, match="^x: not UTF-8 text \\(byte 0xc3 at offset 3\\)"):
        decode_text(data, "utf-8-sig", "x")


def test_a_50_mb_file_is_cut_not_tokenised_in_full(workdir, cli, tmp_path, article) -> None:
    big = tmp_path / "big.txt"
    with big.open("w") as f:
        for _ in range(50 * 1024 * 1024 // len(article) + 1):
            f.write(article + "\n")
    code, out, err = cli("decode", "-m", "M1", str(big), cwd=workdir)
    assert code == 0, err
    assert out.strip()


# --------------------------------------------------------------------------------------------
# Bad input: one line, exit 1
# --------------------------------------------------------------------------------------------
def test_missing_file(workdir, cli, assert_one_line_error) -> None:
    assert_one_line_error(cli("decode", "nope.txt", cwd=workdir), "nope.txt: no such file")


def test_directory(workdir, cli, assert_one_line_error) -> None:
    assert_one_line_error(cli("decode", "models", cwd=workdir), "models: is a directory")


@pytest.mark.parametrize("content", [b"", b"  \n\t \n"])
def test_empty_or_whitespace_file(workdir, cli, tmp_path, content, assert_one_line_error) -> None:
    path = tmp_path / "empty.txt"
    path.write_bytes(content)
    assert_one_line_error(cli("decode", str(path), cwd=workdir), "is empty")


def test_empty_stdin(workdir, cli, assert_one_line_error) -> None:
    assert_one_line_error(cli("decode", "-", cwd=workdir, stdin=b""), "stdin: is empty")


def test_binary_file(workdir, cli, tmp_path, assert_one_line_error) -> None:
    path = tmp_path / "blob.bin"
    path.write_bytes(bytes(range(256)) * 10)
    assert_one_line_error(cli("decode", str(path), cwd=workdir), "binary")


def test_utf16_with_a_byte_order_mark_is_decoded(workdir, cli, tmp_path, article) -> None:
    path = tmp_path / "utf16.txt"
    path.write_bytes(article.encode("utf-16"))                    # BOM + UTF-16-LE, as Notepad saves it
    code, out, _ = cli("decode", "-m", "M1", str(path), cwd=workdir)
    plain = tmp_path / "utf8.txt"
    plain.write_text(article, encoding="utf-8")
    assert code == 0 and out == cli("decode", "-m", "M1", str(plain), cwd=workdir)[1]


def test_utf16_without_a_byte_order_mark_counts_as_binary(workdir, cli, tmp_path, article,
                                                          assert_one_line_error) -> None:
    path = tmp_path / "utf16.txt"
    path.write_bytes(article.encode("utf-16-le"))
    assert_one_line_error(cli("decode", str(path), cwd=workdir), "give UTF-8 text")


NON_LATIN = ["Привет, мир. Это статья о погоде.", "你好，世界。这是一篇文章。", "مرحبا بالعالم"]


@pytest.mark.parametrize("text", NON_LATIN)
def test_non_latin_script(workdir, cli, tmp_path, text, assert_one_line_error) -> None:
    path = tmp_path / "foreign.txt"
    path.write_text(text, encoding="utf-8")
    assert_one_line_error(cli("decode", "-m", "M1", str(path), cwd=workdir), "no Latin-script text")


def test_unknown_model_lists_the_trained_ones(workdir, cli, assert_one_line_error) -> None:
    result = cli("decode", "-m", "M9", "article.txt", cwd=workdir)
    assert_one_line_error(result, "unknown model 'M9'")
    assert "M1, M2" in result[2]


def test_no_trained_models(cli, tmp_path, article, assert_one_line_error) -> None:
    (tmp_path / "a.txt").write_text(article)
    assert_one_line_error(cli("decode", "a.txt", cwd=tmp_path), "no trained models")


# --------------------------------------------------------------------------------------------
# Many documents stream out, a chunk at a time, and a failure says how far it got
# --------------------------------------------------------------------------------------------
def _stream(workdir, documents, monkeypatch, fail_on_call=None):
    """Run summarize_input over `documents` two at a time; return the events (summarize calls and
    printed lines) in order, and the warnings."""
    import sumpipe.decode.batches as batches
    from sumpipe.decode.interactive import summarize_input
    from sumpipe.decode.summarizer import Summarizer, open_project

    events: list[str] = []
    warnings: list[str] = []
    real = batches.summarize

    def summarize(*args, **kwargs):
        events.append("summarize")
        if fail_on_call is not None and events.count("summarize") == fail_on_call:
            from sumpipe.errors import SumpipeError

            raise SumpipeError("the model failed")
        return real(*args, **kwargs)

    monkeypatch.setattr(batches, "summarize", summarize)
    summarizer = Summarizer.open(open_project(workdir), "M1", device="cpu")
    n = summarize_input(documents, summarizer, {}, as_json=False, one_line=True,
                        echo=lambda line: events.append(f"print {line[:20]}"), warn=warnings.append,
                        note="note: model", chunk=2)
    return n, events, warnings


def test_documents_are_printed_as_each_chunk_is_done(workdir, article, monkeypatch) -> None:
    docs = ["\u5317\u4eac", article, article, article, article]  # the first has no Latin-script text
    n, events, warnings = _stream(workdir, docs, monkeypatch)
    assert n == 4
    assert [e.split()[0] for e in events] == ["summarize", "print", "print",   # the held document, then its chunk
                                              "summarize", "print", "print", "summarize", "print"]
    assert events[1] == "print "  # document 1: an empty summary, in its place
    assert warnings[0] == "note: model" and "(document 1)" in warnings[-1]


def test_a_failure_after_some_output_says_where_it_stopped(workdir, article, monkeypatch) -> None:
    from sumpipe.errors import SumpipeError

    with pytest.raises(SumpipeError, match=r"the model failed \(stopped at document 3 of 5; the 2 before it were"):
        _stream(workdir, [article] * 5, monkeypatch, fail_on_call=2)


def test_block_adjacent_from_the_command_line(workdir, cli) -> None:
    for flag in ("--block-adjacent", "--no-block-adjacent"):
        code, out, err = cli("decode", "--json", "-m", "M1", "--min-length", "6", flag, "article.txt", cwd=workdir)
        assert code == 0, err
        tokens = json.loads(out)["tokens"]
        if flag == "--block-adjacent":
            assert len(tokens) >= 6 and all(a != b for a, b in zip(tokens, tokens[1:]))


def test_the_note_of_an_ensemble_names_its_seeds_and_their_scores_alone(workdir, cli) -> None:
    metrics = workdir / "metrics"
    metrics.mkdir(exist_ok=True)
    (metrics / "rouge.json").write_text(json.dumps(
        {"M2": {"rouge1": 22.468, "rouge1_sd": 0.481, "n_seeds": 2, "seeds": {"1": {"rouge1": 22.1},
                                                                            "2": {"rouge1": 22.8}}}}))
    try:
        code, _, err = cli("decode", "-m", "M2", "--ensemble", "article.txt", cwd=workdir)
    finally:
        (metrics / "rouge.json").unlink()
    assert code == 0
    assert err == ("note: model M2, an ensemble of 2 seeds (1, 2) (transformer, input first400) trained on pydoc; "
                   "its seeds alone: test ROUGE-1 22.47 ± 0.48 over 2 seeds (metrics/rouge.json)\n")


# --------------------------------------------------------------------------------------------
# The domain note, the progress bar
# --------------------------------------------------------------------------------------------
NEWS = ("The French Interior Ministry announced Monday it has deported two Muslims and plans to expel three more "
        "in a crackdown after the killing of seven people by a suspected Islamic extremist.")


@pytest.fixture(scope="module")
def news_project(tmp_path_factory, make_model_dir):
    """A project folder with M1 (the tiny vocabulary) and the vocab stage's statistics: the tiny corpus's 36
    tokens (conftest's TINY_WORDS), 31 of them in the 20-word vocabulary (5 outside, 14 %). Returns (folder,
    an in-domain text of the vocabulary's words)."""
    from sumpipe.vocab.vocabulary import Vocabulary

    root = tmp_path_factory.mktemp("project")
    folder = make_model_dir(root / "models" / "M1" / "seed-1", training_seed=1, best_valid_loss=4.5)
    vocab = Vocabulary.load(folder / "vocab.parquet")
    (root / "metrics").mkdir()
    assert vocab.counts.sum() == 31
    (root / "metrics" / "vocab.json").write_text(json.dumps({"train_tokens": 36}))
    in_domain = " ".join(w for w in vocab.itos[4:] if w != ".") + " ."
    return root, in_domain


def test_a_news_text_gets_the_domain_note_and_an_in_domain_text_does_not(news_project, cli, tmp_path) -> None:
    root, in_domain = news_project
    (tmp_path / "news.txt").write_text(NEWS)
    (tmp_path / "own.txt").write_text(in_domain)
    code, out, err = cli("decode", "--project", str(root), "news.txt", cwd=tmp_path)
    assert code == 0 and out.strip(), err
    model_line, note = err.splitlines()
    assert model_line.startswith("note: model M1 seed 1")
    # 32 tokens, 7 in the vocabulary (the x2, a x2, monday, after, "."): 25 outside
    assert note.startswith("note: the input has 78 % of its words outside M1's vocabulary (its training texts: "
                           "14 %): M1 was trained on Python docstrings (pydoc), expect a poor summary; for news, "
                           "train experiments/cnn")
    code, out, err = cli("decode", "--project", str(root), "own.txt", cwd=tmp_path)
    assert code == 0 and len(err.splitlines()) == 1 and err.startswith("note: model M1")


def test_the_domain_note_comes_once_for_several_documents(news_project, cli, tmp_path) -> None:
    root, in_domain = news_project
    code, out, err = cli("decode", "--project", str(root), "--per-line", "-", cwd=tmp_path,
                         stdin=f"{NEWS}\n{NEWS}\n{NEWS}\n".encode())
    assert code == 0 and len(out.splitlines()) == 3
    assert [line.split(" ")[:3] for line in err.splitlines()] == [["note:", "model", "M1"], ["note:", "the", "input"]]


def test_without_the_training_figure_the_threshold_is_absolute(workdir, cli) -> None:
    # workdir has no metrics/vocab.json: the training share is unknown, 35 % decides
    (workdir / "news.txt").write_text(NEWS)
    code, _, err = cli("decode", "-m", "M1", "news.txt", cwd=workdir)
    assert code == 0 and "(its training texts: unknown)" in err.splitlines()[1]


def test_several_documents_get_a_progress_bar_on_stderr(workdir, article, capsys) -> None:
    from sumpipe.decode.interactive import progress_bar, summarize_input
    from sumpipe.decode.summarizer import Summarizer, open_project

    summarizer = Summarizer.open(open_project(workdir), "M1", device="cpu")
    printed: list[str] = []
    n = summarize_input([article] * 5, summarizer, {"batch_size": 2}, as_json=False, one_line=True,
                        echo=printed.append, warn=printed.append, chunk=4, progress=True)
    err = capsys.readouterr().err
    assert n == 5 and len(printed) == 5 and "decode:" in err and "5/5" in err
    batches: list[int] = []                               # the bar moves after each batch, not each chunk
    summarizer.summarize([article] * 5, batch_size=2, progress=batches.append)
    assert batches == [2, 2, 1]
    assert progress_bar(1) is None and progress_bar(5, False) is None
    assert progress_bar(5) is None                        # stderr is no terminal here: no bar
