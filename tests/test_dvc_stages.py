"""dvc.yaml: every stage's deps cover each sumpipe module whose code its command runs.

DVC re-runs a stage only when a dep changes, so a package missing from the list means a changed
decoder or model could leave stale predictions (the decode stage runs the models, their vocabularies
and, for raw text, the preprocessing and input selection). The code a command runs is found
statically: what its module imports at top level and what the command function, and the functions
of its module it calls, import; followed transitively, imports inside functions (the lazy ones)
included, so the answer errs on the safe side (`NOT_RUN` names the few lazy imports a stage is known
not to reach). The top-level modules (src/sumpipe/*.py: config,
io, errors, ...) are shared plumbing, left out of every stage's deps by convention; a change there
that alters outputs needs a `dvc repro --force`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from sumpipe.cli import app
from sumpipe.extractive.methods import BUILTIN as EXTRACTIVE_MODULES
from sumpipe.models.registry import BUILTIN

SRC = Path(__file__).resolve().parents[1] / "src"
STAGES = yaml.safe_load((SRC.parent / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
# The real-text experiments run the same commands from their own folder: their deps name the
# code as ../../src/sumpipe/..., held to the same rule.
EXPERIMENTS = ("gigaword", "cnn")
EXPERIMENT_STAGES = {(name, stage): body for name in EXPERIMENTS for stage, body in yaml.safe_load(
    (SRC.parent / "experiments" / name / "dvc.yaml").read_text(encoding="utf-8"))["stages"].items()}


def _file(module: str) -> Path | None:
    path = SRC / module.replace(".", "/")
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(nodes) -> list[str]:
    """Names of the sumpipe modules that the import statements among `nodes` load."""
    names = []
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("sumpipe"):
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names]  # `from pkg import module`
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names if alias.name.startswith("sumpipe")]
    return names


def _tree(module: str) -> ast.Module:
    return ast.parse(_file(module).read_text(encoding="utf-8"))


def imported_modules(roots: list[str]) -> set[str]:
    """`roots` and every sumpipe module they import, transitively (function-level imports too)."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen or _file(name) is None:
            continue
        seen.add(name)
        todo += _imports(ast.walk(_tree(name)))
        if name == "sumpipe.models.registry":  # it imports the family modules by name (`BUILTIN`)
            todo += list(BUILTIN.values())
        if name == "sumpipe.extractive.methods":  # likewise the extractive methods' modules
            todo += list(EXTRACTIVE_MODULES.values())
    return seen


def _functions_reached(tree: ast.Module, name: str) -> list[ast.FunctionDef]:
    """The module-level function `name` and those of its module it calls, transitively."""
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    reached: dict[str, ast.FunctionDef] = {}
    todo = [name]
    while todo:
        current = todo.pop()
        if current in reached or current not in functions:
            continue
        reached[current] = functions[current]
        todo += [n.func.id for n in ast.walk(functions[current])
                 if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    return list(reached.values())


def files_run_by(command: str) -> set[str]:
    """The files of src/sumpipe/<package>/ whose code `sumpipe <command>` runs: what its module's
    top-level statements and the functions the command reaches in its module import, transitively."""
    callback = next(c.callback for c in app.registered_commands if c.name == command)
    tree = _tree(callback.__module__)
    roots = _imports(tree.body)
    for function in _functions_reached(tree, callback.__name__):
        roots += _imports(ast.walk(function))
    files = (_file(name).relative_to(SRC.parent) for name in imported_modules(roots) | {callback.__module__})
    # src/sumpipe/<package>/<module>.py; the top-level modules and the io package (io.py, split by concern)
    # are the foundation every stage runs, and are not listed, except those that choose the output's bytes
    own = {f.as_posix() for f in files
           if (len(f.parts) > 3 and f.parts[2] not in FOUNDATION_PACKAGES) or f.as_posix() in BYTES_CHOSEN}
    return own.union(*(files_run_by(job) for job in JOBS_OF.get(command, ())))


FOUNDATION_PACKAGES = {"io"}
# The commands a stage's pool runs, each in a process of its own (no import reaches them): `sumpipe predict`
# runs `sumpipe decode` and `sumpipe extractive` (sumpipe.decode.pool)
JOBS_OF = {"predict": ("decode", "extractive")}
BYTES_CHOSEN = {"src/sumpipe/numerics.py"}  # the CPU kernels torch loads: a stage that pins them lists it


def _stage_body(stage: dict) -> dict:
    return stage.get("do", stage)  # foreach stages keep their definition under `do`


# Code the import closure reaches but the stage never runs: lazy imports inside functions it does not
# call. Each entry says why; anything else uncovered fails.
NOT_RUN = {
    "train": {"src/sumpipe/selection/select.py":
              "train looks its input selection up by name (selection/methods.py); selecting is extract's work",
              "src/sumpipe/extractive": "the extractive methods are selection methods too, never run by train"},
    "evaluate": {"src/sumpipe/selection/select.py": "evaluate only lists the baseline selections by name",
                 "src/sumpipe/extractive": "an extractive selection is never a baseline: evaluate only reads the flag",
                 "src/sumpipe/vocab": "the 3-gram table is loaded by a selection method's fit, never by evaluate",
                 "src/sumpipe/numerics.py": "evaluate reads each model's vocab_size (models/, whose Linear imports "
                                            "PORTABLE); it pins no kernels and multiplies nothing"},
}


def _uncovered(files: set[str], deps: list[str]) -> list[str]:
    return sorted(f for f in files if not any(f == d or f.startswith(d.rstrip("/") + "/") for d in deps))


def _check_code_deps(name: str, body: dict, prefix: str = "") -> None:
    """The stage's deps under `prefix`src/ cover the code its `sumpipe` command runs, and name none it never runs."""
    body = _stage_body(body)
    command = body["cmd"].split()[1]  # "sumpipe <command> ..."
    deps = [d.removeprefix(prefix) for d in body.get("deps", [])
            if isinstance(d, str) and d.startswith(f"{prefix}src/")]
    runs = files_run_by(command)
    assert _uncovered(runs, deps + list(NOT_RUN.get(name, {}))) == []
    assert [d for d in deps if _uncovered(runs, [d]) == sorted(runs)] == []  # no dep the command never runs


@pytest.mark.parametrize("name", sorted(STAGES))
def test_stage_deps_list_the_code_it_runs(name):
    _check_code_deps(name, STAGES[name])


# The experiments keep a stage per training run (their dvc.lock records them so); the main pipeline trains its
# runs side by side in one stage, with the same command for all of them
ONE_RUN_OF = {"sumpipe train --model ${item.model} --seed ${item.seed}": "sumpipe train"}


@pytest.mark.parametrize(("experiment", "name"), sorted(EXPERIMENT_STAGES))
def test_experiment_stage_deps_list_the_code_it_runs(experiment, name):
    body = EXPERIMENT_STAGES[(experiment, name)]
    cmd = _stage_body(body)["cmd"]
    assert ONE_RUN_OF.get(cmd, cmd) == _stage_body(STAGES[name])["cmd"]  # the project's stage, not a copy
    _check_code_deps(name, body, prefix="../../")


def test_one_train_stage_trains_every_run_and_plots_each_log():
    """`sumpipe train` trains every run of params.yaml side by side into the models folder, which persists (a run
    whose finished checkpoint matches is not trained again); the top-level plots draw each run's DVCLive curves
    (sumpipe.train.live): its model's loss chart its loss and validation loss, and the learning rate and
    throughput charts every run and the pre-training."""
    params = yaml.safe_load((SRC.parent / "params.yaml").read_text(encoding="utf-8"))
    train = STAGES["train"]
    assert train["cmd"] == "sumpipe train" and "foreach" not in train and "matrix" not in train
    assert train["outs"] == [{"${paths.models}": {"persist": True}}]
    assert {"models", "runs", "train"} <= set(train["params"])
    from sumpipe.train.live import curve_file, pretrain_curves_dir, train_curves_dir

    plots = yaml.safe_load((SRC.parent / "dvc.yaml").read_text(encoding="utf-8"))["plots"]
    charts = {name: body for entry in plots if isinstance(entry, dict) for name, body in entry.items()}
    root = Path(params["paths"]["dvclive"])
    runs = [train_curves_dir(root, run["model"], run["seed"]) for run in params["runs"].values()]
    models = dict.fromkeys(run["model"] for run in params["runs"].values())
    for model in models:
        assert charts[f"{model}_loss"]["y"] == {
            str(curve_file(folder, name)): name for folder in runs if folder.parent.name == model
            for name in ("loss", "valid_loss")}
    for chart, name in (("learning_rate", "lr"), ("throughput", "tokens_per_s")):
        assert charts[chart]["y"] == {str(curve_file(folder, name)): name
                                      for folder in [*runs, pretrain_curves_dir(root)]}
    assert charts["pretraining_loss"]["y"] == {str(curve_file(pretrain_curves_dir(root), name)): name
                                               for name in ("loss", "valid_loss")}
    assert all(body["x"] == "step" for body in charts.values())


def test_dvc_plots_render_offline():
    """`dvc plots show` fills .dvc/config's plots.html_template: DVC's page with Vega inlined, no CDN script."""
    import configparser
    import re

    config = configparser.ConfigParser()
    config.read(SRC.parent / ".dvc/config")
    template = SRC.parent / ".dvc" / config["plots"]["html_template"]
    page = template.read_text(encoding="utf-8")
    assert "{plot_divs}" in page and "{scripts}" not in page  # DVC's CDN tags go into {scripts}: none
    assert re.findall(r"<script[^>]*>", page) == ['<script type="text/javascript">']
    assert "window.vegaEmbed=" in page and "https://cdn" not in page


def test_each_loss_chart_colours_its_seeds_and_pg_cov_marks_its_coverage_phase(tmp_path):
    """The loss charts use .dvc/plots/seeds.json (a colour per training seed, train solid, validation dashed
    with dots; DVC's `linear` colours by revision only, every seed one purple), PG-cov's
    seeds_coverage.json (a rule where the coverage phase starts: its last `coverage_phase_steps` updates,
    the number written in the template and checked here), and the learning-rate and throughput charts
    runs.json (a colour per run, legend labels never cut). `dvc plots show --json` fills them."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    params = yaml.safe_load((SRC.parent / "params.yaml").read_text(encoding="utf-8"))
    plots = yaml.safe_load((SRC.parent / "dvc.yaml").read_text(encoding="utf-8"))["plots"]
    charts = {name: body for entry in plots if isinstance(entry, dict) for name, body in entry.items()}
    for name in params["models"]:
        assert charts[f"{name}_loss"]["template"] == ("seeds_coverage" if name == "PG-cov" else "seeds")
    assert charts["learning_rate"]["template"] == charts["throughput"]["template"] == "runs"
    templates = SRC.parent / ".dvc" / "plots"
    coverage = json.loads((templates / "seeds_coverage.json").read_text(encoding="utf-8"))
    steps = params["models"]["PG-cov"]["arch"]["coverage_phase_steps"]
    assert f"datum.last - {steps}" in json.dumps(coverage) and f"last {steps} updates" in json.dumps(coverage)
    assert json.loads((templates / "runs.json").read_text())["encoding"]["color"]["legend"]["labelLimit"] == 0

    # the templates filled by DVC itself, on two seeds' curves
    dvc = shutil.which("dvc", path=str(Path(sys.executable).parent))
    if dvc is None:
        pytest.skip("dvc is not installed beside this Python")
    repo = tmp_path / "repo"
    repo.mkdir()
    y = {}
    for seed in (1, 2):
        folder = repo / "dvclive/train/PG-cov" / f"seed-{seed}/plots/metrics"
        folder.mkdir(parents=True)
        (folder / "loss.tsv").write_text("step\tloss\n10\t6.0\n20\t5.5\n")
        (folder / "valid_loss.tsv").write_text("step\tvalid_loss\n20\t5.8\n")
        y.update({str((folder / f).relative_to(repo)): f.split(".")[0] for f in ("loss.tsv", "valid_loss.tsv")})
    (repo / "dvc.yaml").write_text(yaml.safe_dump({"plots": [{"PG-cov_loss": {**charts["PG-cov_loss"], "y": y}}]}))
    env = {**os.environ, "DVC_NO_ANALYTICS": "1"}
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run([dvc, "init", "-q"], cwd=repo, check=True, env=env)
    shutil.copytree(templates, repo / ".dvc" / "plots")
    shown = subprocess.run([dvc, "plots", "show", "--json"], cwd=repo, env=env, capture_output=True, text=True,
                           timeout=120)
    assert shown.returncode == 0, shown.stderr
    spec = json.loads(shown.stdout)["data"]["PG-cov_loss"][0]["content"]
    assert spec["encoding"]["color"]["field"] == "series" and len(spec["data"]["values"]) == 6
    assert {row["filename"] for row in spec["data"]["values"]} == {
        "seed-1/plots/metrics/loss.tsv", "seed-1/plots/metrics/valid_loss.tsv",
        "seed-2/plots/metrics/loss.tsv", "seed-2/plots/metrics/valid_loss.tsv"}


def test_the_decode_stage_runs_the_models_and_the_report_none():
    """The decode stage decodes with the trained models and keeps the attention of the report's heat-map
    examples; the report draws from that file, so it runs no model code (nor torch): of the model folders it
    reads only the cards, to show the seed `sumpipe decode` picks (models/folders.py)."""
    decode = files_run_by("decode")
    assert {"src/sumpipe/models/layers.py", "src/sumpipe/decode/search.py", "src/sumpipe/decode/attention.py"} <= decode
    report = files_run_by("report")
    assert {"src/sumpipe/report/stage.py", "src/sumpipe/decode/attention.py"} <= report
    cards = {"src/sumpipe/models/card.py", "src/sumpipe/models/folders.py"}
    assert not [f for f in report if f.startswith("src/sumpipe/models/") and f not in cards
                or f == "src/sumpipe/decode/batches.py"]
    assert _uncovered({"src/sumpipe/models/layers.py"}, ["src/sumpipe/report"]) == ["src/sumpipe/models/layers.py"]


@pytest.mark.parametrize(("stages", "prefix"), [(STAGES, ""), *(
    ({stage: body for (name, stage), body in EXPERIMENT_STAGES.items() if name == experiment}, "../../")
    for experiment in EXPERIMENTS)])
def test_one_predict_stage_writes_every_summarizers_predictions(stages, prefix):
    """`sumpipe predict` runs every extractive system, training run and ensemble of params.yaml side by side
    (sumpipe.decode.pool): one stage owns the whole predictions folder, so no other stage writes in it, and it
    re-runs when the list of summarizers or a decoding or extractive setting changes."""
    predict = stages["predict"]
    assert predict["cmd"] == "sumpipe predict" and "foreach" not in predict and "matrix" not in predict
    assert predict["outs"] == ["${paths.predictions}"]
    assert {"decode", "runs", "ensembles", "models", "train.seeds", "extractive.systems"} <= set(predict["params"])
    assert {"${paths.models}", "${paths.extracted}", f"{prefix}src/sumpipe/decode",
            f"{prefix}src/sumpipe/extractive"} <= set(predict["deps"])
    writers = [name for name, stage in stages.items() for out in _outs(stage)
               if out.startswith("${paths.predictions}")]
    assert writers == ["predict"]


def _outs(stage: dict) -> list[str]:
    """The paths (as dvc.yaml writes them) of a stage's outputs, metrics and plots."""
    body = stage.get("do", stage)
    return [next(iter(o)) if isinstance(o, dict) else o
            for key in ("outs", "metrics", "plots") for o in body.get(key, [])]


def test_no_output_is_resume_state_or_a_timing():
    """An output's bytes must not depend on the code (a resume checkpoint holds a fingerprint of it)
    or on the machine (timings), or a fresh `dvc repro` leaves dvc.lock modified: checkpoints/ and timings/
    are no output of the default pipeline. (The experiments' per-run train stages still list their
    checkpoint folders: dropping an output from a stage whose lock records it would retrain it.)"""
    found = [(name, out) for name, stage in STAGES.items() for out in _outs(stage)
             if out.startswith(("${paths.checkpoints}", "${paths.timings}", "checkpoints", "timings"))]
    assert found == []


def test_the_only_metrics_are_the_headline():
    """`dvc metrics show` and `dvc exp show` read one small file; the detailed ones are plain outputs."""
    metrics = [next(iter(m)) for stage in STAGES.values() for m in stage.get("do", stage).get("metrics", [])]
    assert metrics == ["${paths.metrics}/headline.json"]
    assert "${paths.metrics}/rouge.json" in _outs(STAGES["evaluate"])


@pytest.mark.parametrize("folder", [".", *(f"experiments/{name}" for name in EXPERIMENTS)])
def test_each_lock_records_only_the_stages_its_dvc_yaml_defines(folder):
    """DVC keeps the lock entry of a stage that dvc.yaml no longer defines, and parses and rewrites the whole
    lock after every stage it runs: entries of stages long gone made each stage of the default pipeline
    about 0.9 s slower. Remove such an entry (the `stages:` key of that name) when a stage goes."""
    from dvc.repo import Repo

    root = SRC.parent / folder
    with Repo(str(root)) as repo:
        defined = {stage.name for stage in repo.index.stages if Path(stage.path).parent == root}
    locked = set(yaml.safe_load((root / "dvc.lock").read_text(encoding="utf-8"))["stages"])
    assert {"train", "predict", "evaluate"} <= defined
    assert sorted(locked - defined) == []
