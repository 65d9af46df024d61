"""The `pretrain` stage: masked-LM pre-training of the BERT-style encoder on the train sources.

Roy Choudhury 2020 starts from BERT-base; pre-trained weights cannot be downloaded here, so the encoder is
pre-trained on the corpus itself (`sumpipe.train.mlm`: 15 % of the pieces, 80/10/10), or started
from a local Hugging Face checkpoint named by `pretrain.init_from` (`sumpipe.models.hf_bert`) and
adapted to the corpus's pieces by the same training. Reads `<processed>/{train,valid}.parquet`
(sources only) and `<subword>/subword.model`; trains with the shared engine (`sumpipe.train.engine.fit`:
exact resume from `<checkpoints>/pretrain`, best-validation weights kept) and writes to
`<pretrain>/`: `encoder.safetensors` + its card `config.json` (`sumpipe.models.bert.save_encoder`, `EncoderCard`) and
`pretrain_log.csv` (step, epoch, loss, valid_loss, lr; loss = MLM cross-entropy per predicted piece),
and, as it trains, its live curves into `<dvclive>/pretrain/` (`sumpipe.train.live`: DVCLive).
The run's timings go to `<timings>/pretrain/encoder.{json,csv}` (`sumpipe.timings`), outside the outputs.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from sumpipe.config import Params
from sumpipe.errors import SumpipeError
from sumpipe.io.atomic import atomic_folder, file_sha256, read_parquet
from sumpipe.names import SPLITS
from sumpipe.schemas import PROCESSED

LOG_FILE = "pretrain_log.csv"
CHECKPOINT_NAME = "pretrain"


@dataclasses.dataclass(frozen=True)
class PretrainInputs:
    processed_dir: Path
    subword_dir: Path
    out_dir: Path
    checkpoint_dir: Path
    cfg: Any  # PretrainConfig
    timings_dir: Path = Path("timings")
    curves_dir: Path | None = None  # the DVCLive folder (sumpipe.train.live); None: no live curves


def resolve_pretrain_inputs(params: Params) -> PretrainInputs:
    paths = params.paths
    from sumpipe.train.live import pretrain_curves_dir

    return PretrainInputs(Path(paths.processed), Path(paths.subword), Path(paths.pretrain),
                          Path(paths.checkpoints) / CHECKPOINT_NAME, params.pretrain, Path(paths.timings),
                          pretrain_curves_dir(Path(paths.dvclive)))


def check_pretrain_paths(inputs: PretrainInputs) -> None:
    """Before any training time is spent: the output folder's parent takes a file, and the resume
    checkpoint, the folder's lock and the timings can be written (`sumpipe.io.bookkeeping`); one-line errors."""
    from sumpipe.io.atomic import folder_lock_path, require_writable_folder
    from sumpipe.io.bookkeeping import check_lock, check_replaceable_folder
    from sumpipe.timings import check_writable
    from sumpipe.train.checkpoint import check_checkpoint_dir

    require_writable_folder(inputs.out_dir.parent)
    check_checkpoint_dir(inputs.checkpoint_dir)
    check_lock(folder_lock_path(inputs.out_dir), "the lock on writing the encoder folder")
    check_replaceable_folder(inputs.out_dir, "the encoder folder")
    check_writable(inputs.timings_dir, "pretrain", "encoder", throughput=True)


def pretrain_encoder(inputs: PretrainInputs, *, resume: bool = True, progress: bool | None = None) -> dict[str, Any]:
    """Pre-train (or resume) the encoder and write `<pretrain>/`; returns the training summary with this
    run's figures (`run_figures`)."""
    import sumpipe.models
    import sumpipe.subword
    import sumpipe.train
    from sumpipe.models.bert import BertForMaskedLM, save_encoder
    from sumpipe.models.card import EncoderCard
    from sumpipe.subword.pieces import MODEL_FILE, SubwordVocab
    from sumpipe.timings import record_run, write_throughput
    from sumpipe.train.engine import (
        fingerprint_of,
        fit,
        run_figures,
        seed_everything,
        training_device,
        training_summary,
        write_log,
    )
    from sumpipe.train.live import RunCurves
    from sumpipe.train.mlm import MLMTask, source_windows

    cfg = inputs.cfg
    vocab = SubwordVocab.load(inputs.subword_dir)
    files = [inputs.processed_dir / f"{split}.parquet" for split in SPLITS[:2]]  # train, valid: never test
    windows = []
    for path in files:
        sources = read_parquet(path, columns=["source"], contract=PROCESSED)["source"].tolist()
        if not sources:
            raise SumpipeError(f"{path}: no examples to pre-train on")
        windows.append(source_windows(vocab.encode_many(sources), cfg.max_tokens))
    task = MLMTask(windows[0], windows[1], vocab.special_mask(), batch_size=cfg.train.batch_size,
                   seed=cfg.train.seed, mask_prob=cfg.mask_prob, mask_token_prob=cfg.mask_token_prob,
                   random_token_prob=cfg.random_token_prob)

    seed_everything(cfg.train.seed)
    model = BertForMaskedLM(cfg.encoder, len(vocab))
    init = None
    if cfg.init_from:
        from sumpipe.models.hf_bert import load_hf_bert

        init = {"from": cfg.init_from, **load_hf_bert(model, cfg.init_from, vocab.itos, cfg.encoder)}
    subword_file = inputs.subword_dir / MODEL_FILE
    settings = {k: v for k, v in dataclasses.asdict(cfg).items() if k != "train"}
    fingerprint = fingerprint_of(settings, cfg.train, [*files, subword_file],
                                 [sumpipe.models, sumpipe.train, sumpipe.subword])
    curves = None if inputs.curves_dir is None else RunCurves(inputs.curves_dir).phase()
    result = fit(model, task, cfg.train, inputs.checkpoint_dir, fingerprint=fingerprint, resume=resume,
                 progress=progress, description="pretrain", curves=curves)
    device = training_device(cfg.train.device)
    summary = training_summary(result, model, cfg.train, len(windows[0]), len(windows[1]), device)
    with atomic_folder(inputs.out_dir) as unit:  # one unit, like a model folder: never half of two runs
        card = EncoderCard(encoder=model.encoder.cfg, vocab_size=model.encoder.vocab_size,
                           subword_sha256=file_sha256(subword_file), mask_prob=cfg.mask_prob,
                           max_tokens=cfg.max_tokens, init=init, training=summary)
        save_encoder(model.cpu(), unit, card)
        write_log(result.log_rows, unit / LOG_FILE)
    record_run(inputs.timings_dir, "pretrain", "encoder", run_figures(result))
    if result.throughput:  # a run that only found a finished checkpoint keeps the last training's curve
        write_throughput(result.throughput, inputs.timings_dir, "pretrain", "encoder")
    return {**summary, **run_figures(result)}

