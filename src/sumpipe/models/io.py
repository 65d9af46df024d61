"""Self-contained model directories: weights, architecture and vocabulary, never pickled.

    <model_dir>/model.safetensors   the weights (safetensors; tied tensors stored once)
    <model_dir>/vocab.parquet       the model's vocabulary (a word-vocabulary family: id, token,
                                    count, rarity; another family stores its own, see
                                    `sumpipe.models.vocabulary.VocabularyKind`)
    <model_dir>/config.json         the model card (`sumpipe.models.card.ModelCard`): family,
                                    architecture, input selection, data set, training summary,
                                    and the SHA-256 of the weights file
    <model_dir>/SHA256SUMS          the SHA-256 of every other file (config.json, the vocabulary,
                                    the training log), `sha256sum -c` format; the weights are
                                    covered through config.json's `weights_sha256`
    <model_dir>/train_log.csv       the training log (written by the train stage as an extra file)

The file names are constants of `sumpipe.models.card` (`CARD_FILE`, `WEIGHTS_FILE`, `MANIFEST_FILE`),
which readers that must not load torch import too, and `sumpipe.names.TRAIN_LOG_FILE`.

The folder is written as one unit (`sumpipe.io.atomic_folder`: built in a temporary folder, renamed
into place under a lock), so a reader sees one writer's complete set or the previous one. Loading
trusts nothing before checking it: the card is parsed with its size bounds, every file is checked
against SHA256SUMS (a permuted vocabulary or an edited card is refused), and the weights' shapes in
the safetensors header are compared with the architecture the card describes before any tensor is
allocated (a card claiming a billion words is refused, not obeyed).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_model
from torch.overrides import TorchFunctionMode

from sumpipe.errors import ConfigError, SumpipeError
from sumpipe.inputs import read_capped
from sumpipe.io.atomic import atomic_folder, file_sha256, write_json, write_text
from sumpipe.io.weights import checked_safetensors, safetensors_shapes, write_weights
from sumpipe.models.card import CARD_FILE, CARD_FORMAT, MANIFEST_FILE, WEIGHTS_FILE, ModelCard, read_card
from sumpipe.models.registry import Family, get_family


def save_pretrained(model: torch.nn.Module, model_dir: str | os.PathLike, vocab: Any, card: ModelCard,
                    extras: dict[str, Callable[[Path], Any]] | None = None) -> Path:
    """Write weights, vocabulary (the family's `VocabularyKind.save`), the card and SHA256SUMS into
    `model_dir` as one unit (see the module docstring); the card's `weights_sha256` is filled in here.
    `extras`: file name -> a writer called with the path, for files that belong to the same unit
    (the training log)."""
    family = get_family(card.family)
    model_dir = Path(model_dir)
    with atomic_folder(model_dir) as unit:
        write_weights(model, unit / WEIGHTS_FILE, format=CARD_FORMAT)
        family.vocabulary.save(vocab, unit, card.arch)
        for name, write in (extras or {}).items():
            write(unit / name)
        card = dataclasses.replace(card, weights_sha256=file_sha256(unit / WEIGHTS_FILE))
        write_json(card_json(card, family), unit / CARD_FILE)
        write_manifest(unit)
    return model_dir


def card_json(card: ModelCard, family: Family) -> dict[str, Any]:
    """The card as config.json holds it: an arch key at the value the family's `legacy_arch` gives a card
    that lacks it is left out, since loading fills it back in. So an option added at its old behaviour
    changes no model folder, and the artifacts of every pipeline trained before it stay byte-identical."""
    data = card.to_json()
    legacy = family.legacy_arch
    data["arch"] = {k: v for k, v in data["arch"].items() if k not in legacy or legacy[k] != v}
    return data


def write_manifest(model_dir: Path) -> None:
    """SHA256SUMS over every file of `model_dir` but the weights (config.json vouches for those)."""
    names = sorted(p.name for p in model_dir.iterdir() if p.is_file() and p.name not in (MANIFEST_FILE, WEIGHTS_FILE))
    write_text("".join(f"{file_sha256(model_dir / name)}  {name}\n" for name in names), model_dir / MANIFEST_FILE)


def verify_manifest(model_dir: Path) -> None:
    """Every file SHA256SUMS lists is there and unchanged, config.json among them; one-line errors."""
    path = model_dir / MANIFEST_FILE
    if not path.is_file():
        raise SumpipeError(f"{model_dir}: incomplete model directory, {MANIFEST_FILE} is missing (written by an "
                           "older sumpipe or half-copied: retrain it, e.g. `dvc repro`)")
    expected = {}
    for lineno, line in enumerate(read_capped(path, 1 << 20, "a checksum list").decode("utf-8", "replace")
                                  .splitlines(), start=1):
        digest, _, name = line.partition("  ")
        if len(digest) != 64 or not name or "/" in name or name in (".", ".."):
            # the line itself is not quoted: SHA256SUMS may be a link to any file (/etc/shadow)
            raise SumpipeError(f"{path}: not a checksum list (line {lineno} is not `<sha256>  <file name>`)")
        expected[name] = digest
    if CARD_FILE not in expected:
        raise SumpipeError(f"{path}: does not cover {CARD_FILE}")
    for name, digest in expected.items():
        file = model_dir / name
        if not file.is_file():
            raise SumpipeError(f"{model_dir}: incomplete model directory, {name} is missing")
        if file_sha256(file) != digest:
            raise SumpipeError(f"{file}: does not match {MANIFEST_FILE} (edited, corrupt or from another training run)")


def expected_shapes(family: Any, card: ModelCard) -> dict[str, tuple[int, ...]]:
    """The tensor shapes the card's architecture has, from the model built on the meta device (shapes
    only: no memory is allocated, however large the card's sizes)."""
    with torch.device("meta"), _ShapesOnly():
        model = family.build(card.arch, card.spec)
    return {name: tuple(t.shape) for name, t in model.state_dict().items()}


class _ShapesOnly(TorchFunctionMode):
    """Skip `normal_` on a model built on the meta device for its shapes: torch runs it there through
    its Python reference, which imports torch._dynamo, a second of start-up for numbers never read
    (`layers.sinusoidal_table` skips its arithmetic there for the same reason). A mode is
    thread-local, unlike patching `nn.init`."""

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        if func in (torch.nn.init.normal_, torch.Tensor.normal_):
            return args[0] if args else kwargs["tensor"]  # nn.init passes it by keyword
        return func(*args, **kwargs)


def check_shapes(model_dir: Path, family: Any, card: ModelCard) -> None:
    """The weights file holds exactly the tensors the card's architecture needs, in their shapes
    (tied tensors are stored once, so a name the file leaves out must be a tied one)."""
    found = safetensors_shapes(model_dir / WEIGHTS_FILE)
    needed = expected_shapes(family, card)
    misfit = f"{model_dir / WEIGHTS_FILE}: does not fit the architecture in {CARD_FILE}"
    unexpected = sorted(set(found) - set(needed))
    if unexpected:
        raise SumpipeError(f"{misfit} (unexpected {unexpected[:3]})")
    for name, shape in found.items():
        if needed[name] != shape:
            raise SumpipeError(f"{misfit} (size mismatch for {name}: the file has {list(shape)}, "
                               f"{CARD_FILE} implies {list(needed[name])})")


def check_finite(model: torch.nn.Module, where: Path) -> None:
    """Refuse weights holding NaN or infinity (a diverged training run): such a model decodes every input
    to an empty or garbage summary with exit status 0. One pass over the weights."""
    for name, tensor in model.state_dict().items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise SumpipeError(f"{where}: tensor {name!r} holds NaN or infinite values (a diverged training run); "
                               "retrain the model")


def read_typed_card(model_dir: Path) -> tuple[Family, ModelCard]:
    """(its family, the card with `arch` validated into the family's arch type); the family module is
    imported (torch included). A bad family or arch is a one-line SumpipeError naming the file and key."""
    card = read_card(model_dir)
    try:
        family = get_family(card.family)
        arch = family.arch_from({**family.legacy_arch, **card.arch}, "arch")  # an older card lacks newer keys
        return family, dataclasses.replace(card, arch=arch)
    except ConfigError as exc:
        raise SumpipeError(f"{model_dir / CARD_FILE}: {exc}") from None


def load_pretrained(model_dir: str | os.PathLike, device: str | torch.device = "cpu") -> tuple[Any, Any, ModelCard]:
    """(model in eval mode on `device`, its vocabulary, its ModelCard).

    Every problem (missing directory or file, an old or corrupt config.json, mismatched files) is a
    one-line SumpipeError naming the file.
    """
    model_dir = Path(model_dir)
    if not model_dir.is_dir():
        raise SumpipeError(f"{model_dir}: no such model directory (train it first, e.g. `dvc repro`)")
    for name in (CARD_FILE, WEIGHTS_FILE):
        if not (model_dir / name).is_file():
            raise SumpipeError(f"{model_dir}: incomplete model directory, {name} is missing")
    family, card = read_typed_card(model_dir)
    verify_manifest(model_dir)
    if card.weights_sha256 != file_sha256(model_dir / WEIGHTS_FILE):
        raise SumpipeError(f"{model_dir / WEIGHTS_FILE}: does not match {CARD_FILE} (corrupt or half-written)")
    check_shapes(model_dir, family, card)
    model = family.build(card.arch, card.spec)
    misfit = f"{model_dir / WEIGHTS_FILE}: does not fit the architecture in {CARD_FILE}"
    try:
        # Into the CPU model, then one move: loading onto `device` would copy GPU -> CPU -> GPU. The
        # file normally is the one save_pretrained wrote (its hash matched), so its shapes can be wrong;
        # a file that is no safetensors at all (hash rewritten by hand) is never unpickled, only refused.
        missing, unexpected = load_model(model, checked_safetensors(model_dir / WEIGHTS_FILE), strict=False)
    except SafetensorError as exc:  # a file whose hash config.json vouches for, yet no safetensors
        raise SumpipeError(f"{model_dir / WEIGHTS_FILE}: not a readable safetensors file ({exc})") from None
    except RuntimeError as exc:  # load_state_dict: tensors of the wrong shape
        details = [line.strip() for line in str(exc).splitlines() if "size mismatch" in line]
        raise SumpipeError(f"{misfit} ({details[0] if details else 'shape mismatch'})") from None
    if missing or unexpected:
        raise SumpipeError(f"{misfit} (missing {sorted(missing)[:3]}, unexpected {sorted(unexpected)[:3]})")
    check_finite(model, model_dir / WEIGHTS_FILE)
    vocab = family.vocabulary.load(model_dir, card.arch)
    return model.to(device).eval(), vocab, card
