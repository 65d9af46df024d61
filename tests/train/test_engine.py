"""The model-agnostic training engine on a tiny classifier: determinism, exact resume, checkpoints."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from sumpipe.config import TrainConfig
from sumpipe.errors import SumpipeError
from sumpipe.train import checkpoint as ckpt
from sumpipe.train.engine import fit, seed_everything
from tests.train.tiny_task import TinyBatch, TinyTask, config


def tiny_model(seed: int = 3) -> torch.nn.Module:
    seed_everything(seed)
    # dropout makes the run depend on the torch RNG, which the checkpoint must carry across a resume
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Dropout(0.3), torch.nn.Linear(16, 4))


def weights(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def assert_identical(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key


class Killed(Exception):
    """Stands for SIGKILL: the loop stops mid-run and every live object is dropped."""


def run(tmp: Path | None, cfg: TrainConfig, kill_at: int | None = None):
    model = tiny_model()
    seed_everything(cfg.seed)

    def stop(position: ckpt.Position) -> bool:
        if kill_at is not None and position.step == kill_at:
            raise Killed
        return False

    result = fit(model, TinyTask(), cfg, tmp, fingerprint="tiny", should_stop=stop, progress=False)
    return model, result


def test_two_runs_with_the_same_seed_are_identical(tmp_path: Path) -> None:
    a, ra = run(tmp_path / "a", config())
    b, rb = run(tmp_path / "b", config())
    assert_identical(weights(a), weights(b))
    assert [r["loss"] for r in ra.log_rows] == [r["loss"] for r in rb.log_rows]
    c, _ = run(tmp_path / "c", config(seed=6))
    assert not torch.equal(weights(a)["3.weight"], weights(c)["3.weight"])


@pytest.mark.parametrize("kill_at", [7, 10])  # 7: mid-epoch 2 (5 batches an epoch); 10: at an epoch boundary
def test_killed_and_resumed_run_ends_bit_identical(tmp_path: Path, kill_at: int) -> None:
    # best-validation weights can come from any epoch; compare the last checkpoint's weights too
    straight, straight_result = run(tmp_path / "straight", config())
    straight_last = torch.load(tmp_path / "straight" / ckpt.STATE_FILE, weights_only=True)["model"]

    with pytest.raises(Killed):
        run(tmp_path / "resumed", config(), kill_at=kill_at)
    saved = torch.load(tmp_path / "resumed" / ckpt.STATE_FILE, weights_only=True)
    assert saved["position"]["step"] == (6 if kill_at == 7 else 9)  # the last checkpoint (every 3 steps)
    resumed, resumed_result = run(tmp_path / "resumed", config())
    assert resumed_result.resumed_from_step == saved["position"]["step"]
    resumed_last = torch.load(tmp_path / "resumed" / ckpt.STATE_FILE, weights_only=True)["model"]

    assert_identical(straight_last, resumed_last)
    assert_identical(weights(straight), weights(resumed))
    # no timing in the log or the checkpoint: the files DVC hashes are the same bytes
    assert resumed_result.log_rows == straight_result.log_rows
    assert ((tmp_path / "resumed" / ckpt.STATE_FILE).read_bytes()
            == (tmp_path / "straight" / ckpt.STATE_FILE).read_bytes())


def test_log_rows_and_best_checkpoint(tmp_path: Path) -> None:
    model, result = run(tmp_path, config())
    rows = result.log_rows
    assert [r["step"] for r in rows] == [2, 4, 5, 6, 8, 10, 12, 14, 15]  # every 2 steps + epoch ends 5, 10, 15
    assert [r["epoch"] for r in rows if r["valid_loss"] is not None] == [1.0, 2.0, 3.0]
    assert all(r["valid_loss"] is None for r in rows if r["step"] not in (5, 10, 15))
    valid = [r["valid_loss"] for r in rows if r["valid_loss"] is not None]
    assert result.position.best_valid_loss == min(valid)
    assert result.position.done
    # the model handed back holds the best weights, which reproduce the best validation loss
    task = TinyTask()
    model.eval()
    with torch.no_grad():
        total = sum(task.loss(model, task.collate(b, "valid"))[0].item() for b in task.valid_batches())
    assert total / 12 == pytest.approx(result.position.best_valid_loss, rel=1e-6)


def test_max_steps_caps_training_and_still_validates(tmp_path: Path) -> None:
    _, result = run(tmp_path, config(max_steps=7))
    assert result.position.step == 7
    assert result.log_rows[-1]["step"] == 7 and result.log_rows[-1]["valid_loss"] is not None
    assert result.log_rows[-1]["epoch"] == pytest.approx(1.4)
    # a finished run resumed does nothing more
    _, again = run(tmp_path, config(max_steps=7))
    assert again.position.step == 7 and again.resumed_from_step == 7


def test_other_fingerprint_starts_afresh(tmp_path: Path) -> None:
    run(tmp_path, config(max_steps=3))
    model = tiny_model()
    result = fit(model, TinyTask(), config(max_steps=3), tmp_path, fingerprint="other", progress=False)
    assert result.resumed_from_step == 0


def test_checkpoint_loads_with_weights_only_and_holds_everything(tmp_path: Path) -> None:
    run(tmp_path, config(max_steps=4, checkpoint_every=4))
    state = torch.load(tmp_path / ckpt.STATE_FILE, weights_only=True)
    assert {"model", "optimizer", "scheduler", "rng", "position", "fingerprint"} <= state.keys()
    assert {"python", "numpy", "torch", "cuda"} == state["rng"][0].keys()
    assert state["position"]["step"] == 4
    assert state["optimizer"]["state"][0]["step"].item() == 4
    assert state["scheduler"]["last_epoch"] == 4
    assert (tmp_path / ckpt.BEST_FILE).is_file()
    assert not list(tmp_path.glob("*.tmp"))  # atomic writes leave no temporaries behind


@pytest.mark.parametrize("content", [b"", b"not a checkpoint", "truncated"])
def test_unreadable_checkpoint_is_a_one_line_error_and_no_resume_starts_afresh(tmp_path: Path, content) -> None:
    run(tmp_path, config(max_steps=3))
    state = tmp_path / ckpt.STATE_FILE
    state.write_bytes(state.read_bytes()[:200] if content == "truncated" else content)
    with pytest.raises(SumpipeError, match="unreadable checkpoint") as info:
        run(tmp_path, config(max_steps=3))
    assert "\n" not in str(info.value) and "--no-resume" in str(info.value)
    result = fit(tiny_model(), TinyTask(), config(max_steps=3), tmp_path, resume=False, progress=False)
    assert result.resumed_from_step == 0 and result.position.step == 3


@pytest.mark.slow
def test_compiled_training_follows_the_eager_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """`compile_model=True` traces model + loss with dynamo through batches of different shapes
    (source/target lengths, OOV counts) and trains the same weights as eager mode. The backend is
    aot_eager here (no C++ toolchain on CI; inductor runs on the GPU in bench/bench_train.py)."""
    import functools

    import pandas as pd

    from sumpipe.models.batching import encode_examples
    from sumpipe.models.task import SummarizationTask
    from sumpipe.models.transformer import ArchConfig, PointerGeneratorTransformer

    words = "the a cat dog sat ran on in mat park big small red quick and .".split()

    class Vocab:
        itos = ["<unk>", "<pad>", "<s>", "</s>", *words]
        stoi = {w: i for i, w in enumerate(itos)}
        rarity = torch.linspace(0.5, 2.0, len(itos)).numpy()
        unknown_rarity = 2.2

        def oov_rarity(self, word: str) -> float:
            return self.unknown_rarity

        def __len__(self) -> int:
            return len(self.itos)

    vocab = Vocab()
    rng = torch.Generator().manual_seed(0)
    pool = [*words, "zorro", "qux", "quux", "blip"]

    def text(n: int) -> str:
        return " ".join(pool[i] for i in torch.randint(0, len(pool), (n,), generator=rng).tolist())

    df = pd.DataFrame({"id": [str(i) for i in range(12)],
                       "source": [text(3 + 2 * i) for i in range(12)],
                       "reference": [text(2 + i % 5) for i in range(12)]})
    arch = ArchConfig(d_model=16, d_ff=32, n_layers=1, n_heads=2, dropout=0.0, vocab_size=len(vocab),
                      max_source_tokens=40, max_summary_tokens=10)
    examples = encode_examples(df, vocab, 40, 10)
    cfg = config(optimizer="adagrad", lr=0.1, batch_size=4, epochs=1, max_steps=3, log_every=1)

    def train(compile_model: bool) -> dict[str, torch.Tensor]:
        seed_everything(1)
        model = PointerGeneratorTransformer(arch)
        initial["embed.weight"] = model.embed.weight.detach().clone()
        task = SummarizationTask(examples, examples[:4], batch_size=4, seed=3, label_smoothing=0.1,
                                 vocab_size=len(vocab))
        fit(model, task, cfg, None, progress=False, compile_model=compile_model)
        return weights(model)

    shapes = {tuple(len(examples[i].src) for i in b) for b in SummarizationTask(
        examples, [], batch_size=4, seed=3, label_smoothing=0.1, vocab_size=len(vocab)).epoch_batches(0)}
    initial: dict[str, torch.Tensor] = {}
    assert len(shapes) == 3  # three batches, three source-length mixes: recompiles are exercised
    eager = train(False)
    torch._dynamo.reset()
    monkeypatch.setattr(torch, "compile", functools.partial(torch.compile, backend="aot_eager"))
    compiled = train(True)
    torch._dynamo.reset()
    assert eager.keys() == compiled.keys()
    for key in eager:
        torch.testing.assert_close(compiled[key], eager[key], rtol=1e-4, atol=1e-5, msg=key)
    assert not torch.allclose(eager["embed.weight"], initial["embed.weight"])  # it did train


class PlantedValidationTask(TinyTask):
    """TinyTask whose validation loss at the end of epoch e is `curve[e]` (a planted curve)."""

    def __init__(self, curve: list[float]) -> None:
        super().__init__()
        self.curve, self.validations = curve, 0

    def valid_batches(self) -> list[list[int]]:
        self.validations += 1
        return [list(range(12))]

    def loss(self, model: torch.nn.Module, batch: TinyBatch) -> tuple[torch.Tensor, torch.Tensor]:
        total, n = super().loss(model, batch)
        if not model.training:  # validation: the planted value per target
            return torch.tensor(self.curve[self.validations - 1] * 12.0), torch.tensor(12)
        return total, n


@pytest.mark.parametrize(("patience", "stops_after"), [(1, 3), (2, 4), (3, 8), (None, 10)])
def test_early_stopping_stops_after_patience_epochs_without_improvement(tmp_path, patience, stops_after) -> None:
    # best at epoch 2 (0.5), then 0.6, 0.55 (no improvement), 0.4 at epoch 5 (new best), then worse
    curve = [0.9, 0.5, 0.6, 0.55, 0.4, 0.45, 0.47, 0.48, 0.49, 0.5]
    task = PlantedValidationTask(curve)
    result = fit(tiny_model(), task, config(epochs=10, patience=patience), tmp_path, fingerprint="planted",
                 progress=False)
    assert result.position.epoch == stops_after
    assert task.validations == stops_after
    assert result.position.best_valid_loss == pytest.approx(0.5 if stops_after < 5 else 0.4)
    assert result.position.best_step == (2 if stops_after < 5 else 5) * 5  # 5 batches an epoch


def test_early_stopping_count_survives_a_kill(tmp_path) -> None:
    curve = [0.9, 0.5, 0.6, 0.55, 0.4, 0.45, 0.47, 0.48]

    def kill_in_epoch_4(position: ckpt.Position) -> bool:
        if position.step == 17:
            raise Killed
        return False

    with pytest.raises(Killed):
        fit(tiny_model(), PlantedValidationTask(curve), config(epochs=8, patience=2), tmp_path, fingerprint="p",
            should_stop=kill_in_epoch_4, progress=False)
    task = PlantedValidationTask(curve)
    task.validations = 3  # epochs 1-3 were validated before the kill
    result = fit(tiny_model(), task, config(epochs=8, patience=2), tmp_path, fingerprint="p", progress=False)
    assert result.resumed_from_step == 15 and result.position.epoch == 4


class PlantedAccuracyTask(PlantedValidationTask):
    """PlantedValidationTask whose validation accuracy at the end of epoch e is `accuracy[e]`; the loss
    keeps falling, so only the accuracy can stop training."""

    def __init__(self, accuracy: list[float], passes_per_epoch: int = 2) -> None:
        super().__init__([1.0 - 0.01 * e for e in range(len(accuracy))])
        self.accuracy, self.passes, self.passes_per_epoch = accuracy, 0, passes_per_epoch

    def valid_batches(self) -> list[list[int]]:
        self.passes += 1  # with the accuracy metric two passes an epoch: the loss, then the accuracy
        self.validations = -(-self.passes // self.passes_per_epoch)
        return [list(range(12))]

    def token_accuracy(self, model: torch.nn.Module, batch: TinyBatch) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.tensor(self.accuracy[self.validations - 1] * 100.0), torch.tensor(100)


@pytest.mark.parametrize(("patience", "stops_after", "best_epoch"), [(1, 3, 2), (2, 4, 2), (3, 8, 5)])
def test_early_stopping_on_accuracy_stops_when_accuracy_stalls(tmp_path, patience, stops_after, best_epoch) -> None:
    # best accuracy at epoch 2 (0.5), then 0.4, 0.5 (a tie is no improvement), 0.7 at epoch 5, then lower
    accuracy = [0.2, 0.5, 0.4, 0.5, 0.7, 0.6, 0.65, 0.6, 0.6, 0.6]
    task = PlantedAccuracyTask(accuracy)
    result = fit(tiny_model(), task, config(epochs=10, patience=patience, early_stopping_metric="accuracy"),
                 tmp_path, fingerprint="planted-accuracy", progress=False)
    assert result.position.epoch == stops_after
    assert result.position.best_valid_accuracy == pytest.approx(accuracy[best_epoch - 1])
    assert result.position.best_step == best_epoch * 5  # 5 batches an epoch
    # the kept weights' validation loss (the loss itself fell every epoch)
    assert result.position.best_valid_loss == pytest.approx(1.0 - 0.01 * (best_epoch - 1))


def test_loss_metric_ignores_accuracy(tmp_path) -> None:
    task = PlantedAccuracyTask([0.2, 0.5, 0.4, 0.5, 0.7], passes_per_epoch=1)
    result = fit(tiny_model(), task, config(epochs=5, patience=1), tmp_path, fingerprint="p", progress=False)
    assert result.position.epoch == 5 and result.position.best_valid_accuracy is None


def test_accuracy_metric_needs_a_task_with_token_accuracy(tmp_path) -> None:
    with pytest.raises(SumpipeError, match="early_stopping_metric: accuracy .* TinyTask has none"):
        fit(tiny_model(), TinyTask(), config(early_stopping_metric="accuracy"), tmp_path, progress=False)


def no_dropout_model(seed: int = 3) -> torch.nn.Module:
    seed_everything(seed)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))


def test_accumulated_batches_make_the_update_of_one_big_batch(tmp_path: Path) -> None:
    # batches of 4 taken 2 at a time hold exactly the examples of the batches of 8 (same permutation)
    big, small = no_dropout_model(), no_dropout_model()
    fit(big, TinyTask(batch_size=8), config(epochs=1, grad_clip=0.0), None, progress=False)
    result = fit(small, TinyTask(batch_size=4), config(epochs=1, grad_clip=0.0, batch_size=4, accumulate=2),
                 None, progress=False)
    assert result.position.step == 5 and result.position.batch == 0 and result.position.epoch == 1
    for (name, a), b in zip(big.state_dict().items(), small.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6, msg=name)
    untouched = no_dropout_model()
    assert not torch.allclose(untouched[0].weight, small[0].weight)


def test_a_short_last_group_ends_the_epoch() -> None:
    # uneven groups: 10 batches of 4 per epoch, 3 per update -> updates of 3, 3, 3, 1 batches
    model = no_dropout_model()
    result = fit(model, TinyTask(batch_size=4), config(epochs=2, batch_size=4, accumulate=3, log_every=1),
                 None, progress=False)
    assert result.position.step == 8
    assert [r["step"] for r in result.log_rows][:4] == [1, 2, 3, 4]


@pytest.mark.parametrize("kill_at", [2, 5])  # 5 batches of 8 an epoch -> updates of 3 and 2 batches
def test_killed_and_resumed_run_with_accumulation_ends_bit_identical(tmp_path: Path, kill_at: int) -> None:
    cfg = config(batch_size=4, accumulate=3, checkpoint_every=2)
    straight, straight_result = run(tmp_path / "straight", cfg)
    with pytest.raises(Killed):
        run(tmp_path / "resumed", cfg, kill_at=kill_at)
    resumed, resumed_result = run(tmp_path / "resumed", cfg)
    assert resumed_result.resumed_from_step > 0
    assert_identical(weights(straight), weights(resumed))
    assert resumed_result.log_rows == straight_result.log_rows


# --------------------------------------------------------------------------------------------
# A diverging run stops, naming the step, and never saves its weights
# --------------------------------------------------------------------------------------------
class NaNFromStep(TinyTask):
    """The tiny task, whose training loss turns NaN from update `step` on (a diverged run)."""

    def __init__(self, step: int) -> None:
        super().__init__()
        self.nan_from, self.calls = step, 0

    def loss(self, model, batch):
        total, n = super().loss(model, batch)
        if model.training:
            self.calls += 1
            if self.calls >= self.nan_from:
                total = total * float("nan")
        return total, n


@pytest.mark.parametrize(("nan_from", "log_every"), [(3, 2), (1, 5), (4, 1)])
def test_a_non_finite_training_loss_stops_naming_its_step(tmp_path: Path, nan_from: int, log_every: int) -> None:
    model = tiny_model()
    with pytest.raises(SumpipeError, match=rf"the training loss is not finite \(NaN or infinity\) at step {nan_from}:"):
        fit(model, NaNFromStep(nan_from), config(log_every=log_every, checkpoint_every=1), tmp_path,
            fingerprint="nan", progress=False)
    saved = ckpt.load_checkpoint(tmp_path, "nan")  # a checkpoint every step: the last before the NaN, if any
    assert (saved is None) == (nan_from == 1)
    if saved is not None:
        assert saved["position"]["step"] == nan_from - 1
        assert all(bool(torch.isfinite(t).all()) for t in saved["model"].values())


def test_a_huge_learning_rate_stops_with_one_line(tmp_path: Path) -> None:
    """A finite but absurd rate (train.lr 1e30): the weights explode, and training stops instead of saving them."""
    with pytest.raises(SumpipeError, match=r"not finite \(NaN or infinity\) (at|after) step \d+: the weights diverged"):
        fit(tiny_model(), TinyTask(), config(lr=1e30, warmup_steps=1, log_every=1), tmp_path, progress=False)


def test_the_finiteness_check_leaves_the_weights_bit_identical(tmp_path: Path) -> None:
    """The check runs on the device beside each step: two runs, with and without a log at every step,
    end with the same weights (it changes nothing it watches)."""
    a = fit_weights(config(log_every=1))
    b = fit_weights(config(log_every=100))
    assert_identical(a, b)


def fit_weights(cfg: TrainConfig) -> dict[str, torch.Tensor]:
    model = tiny_model()
    seed_everything(cfg.seed)
    fit(model, TinyTask(), cfg, None, progress=False)
    return weights(model)


# ---------------------------------------------------------------------------------- weight averaging
def test_ema_returns_the_moving_average_of_the_updated_weights() -> None:
    # avg_1 = w_1, avg_k = d · avg_(k-1) + (1 - d) · w_k, over the weights after each update
    decay = 0.75
    seen: list[dict[str, torch.Tensor]] = []
    model = tiny_model()

    def record(_: ckpt.Position) -> bool:  # called after every update
        seen.append(weights(model))
        return False

    seed_everything(5)
    fit(model, TinyTask(), config(max_steps=4, ema_decay=decay), None, progress=False, should_stop=record)
    expected = seen[0]
    for later in seen[1:]:
        expected = {k: decay * expected[k] + (1 - decay) * later[k] for k in expected}
    got = weights(model)
    assert not torch.equal(got["3.weight"], seen[-1]["3.weight"])  # the average, not the last weights
    for key in expected:
        torch.testing.assert_close(got[key], expected[key], rtol=1e-6, atol=1e-7)


def test_ema_validates_and_keeps_the_average(tmp_path: Path) -> None:
    model, result = run(tmp_path, config(ema_decay=0.9))
    task = TinyTask()
    model.eval()
    with torch.no_grad():
        total = sum(task.loss(model, task.collate(b, "valid"))[0].item() for b in task.valid_batches())
    assert total / 12 == pytest.approx(result.position.best_valid_loss, rel=1e-6)
    _, plain_result = run(tmp_path / "plain", config())
    assert result.position.best_valid_loss != plain_result.position.best_valid_loss


@pytest.mark.parametrize("kill_at", [7, 10])
def test_killed_and_resumed_run_with_ema_ends_bit_identical(tmp_path: Path, kill_at: int) -> None:
    straight, _ = run(tmp_path / "straight", config(ema_decay=0.9))
    with pytest.raises(Killed):
        run(tmp_path / "resumed", config(ema_decay=0.9), kill_at=kill_at)
    assert "average" in torch.load(tmp_path / "resumed" / ckpt.STATE_FILE, weights_only=True)
    resumed, _ = run(tmp_path / "resumed", config(ema_decay=0.9))
    assert_identical(weights(straight), weights(resumed))
    assert ((tmp_path / "resumed" / ckpt.STATE_FILE).read_bytes()
            == (tmp_path / "straight" / ckpt.STATE_FILE).read_bytes())


def test_check_checkpoint_dir_refuses_a_folder_in_a_files_place_and_keeps_it(tmp_path: Path) -> None:
    (tmp_path / "ck" / ckpt.BEST_FILE / "mine").mkdir(parents=True)
    with pytest.raises(SumpipeError, match=r"best\.safetensors: a folder is in the way of the best weights so far "
                                           r"\(resume checkpoint\); remove it and run again$"):
        ckpt.check_checkpoint_dir(tmp_path / "ck")
    with pytest.raises(SumpipeError, match="a folder is in the way"):
        ckpt.clear_checkpoint(tmp_path / "ck")
    assert (tmp_path / "ck" / ckpt.BEST_FILE / "mine").is_dir()


def test_check_checkpoint_dir_refuses_a_file_in_the_folders_place(tmp_path: Path) -> None:
    (tmp_path / "coverage").write_text("x")
    with pytest.raises(SumpipeError, match=r"coverage: cannot create the resume checkpoint folder \(a file of that "
                                           r"name is in the way\)"):
        ckpt.check_checkpoint_dir(tmp_path / "coverage")


def test_clear_checkpoint_removes_a_link_not_what_it_leads_to(tmp_path: Path) -> None:
    elsewhere = tmp_path / "notes.txt"
    elsewhere.write_text("mine")
    directory = ckpt.check_checkpoint_dir(tmp_path / "ck")
    (directory / ckpt.STATE_FILE).symlink_to(elsewhere)
    ckpt.clear_checkpoint(directory)
    assert list(directory.iterdir()) == [] and elsewhere.read_text() == "mine"
