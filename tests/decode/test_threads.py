"""The Python API called from several threads at once (a web server's worker threads sharing one
summarizer): every call gets the summary a call alone gets, the weights load once, and torch's thread
count is what it was before (each call sets its own while it decodes)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor


def test_one_summarizer_from_several_threads_at_once(workdir, article) -> None:
    import torch

    import sumpipe

    texts = [article, "the cat sat on the mat .", "police said the man was arrested on monday .", "", article[:60]]
    alone = [s.tokenized for s in sumpipe.load("M1", project=workdir, device="cpu").summarize(texts)]
    before = torch.get_num_threads()
    summarizer = sumpipe.load("M1", project=workdir, device="cpu")  # weights not loaded yet: the threads race for it
    import sumpipe.decode.batches as batches

    loaded = []
    real_load = batches.load_model

    def counted(*args, **kwargs):
        loaded.append(threading.get_ident())
        return real_load(*args, **kwargs)

    barrier = threading.Barrier(4)

    def call(i: int) -> list[str]:
        barrier.wait()
        out = []
        for k in range(2):
            j = (i + k) % len(texts)
            out.append((j, summarizer.summarize([texts[j]], strict=False, threads=1 + i % 2)[0].tokenized))
        return out

    batches.load_model = counted
    try:
        with ThreadPoolExecutor(4) as pool:
            results = [r for part in pool.map(call, range(4)) for r in part]
    finally:
        batches.load_model = real_load
    assert all(tokens == alone[j] for j, tokens in results)
    assert summarizer._loaded is not None and summarizer.weights() is summarizer.weights()
    assert torch.get_num_threads() == before  # no thread count left behind by interleaved calls
    assert len(loaded) == 1  # the threads that raced for the weights loaded them once


def test_interleaved_thread_blocks_restore_the_count_from_before_the_first() -> None:
    import torch

    from sumpipe.device import torch_threads

    before = torch.get_num_threads()
    a, b = torch_threads(1), torch_threads(2)
    a.__enter__()
    b.__enter__()  # b saw 1, the count a set
    a.__exit__(None, None, None)
    b.__exit__(None, None, None)  # b ends last: the count from before a, not a's 1
    assert torch.get_num_threads() == before
