"""Every name the user types is looked up somewhere; a name that is not there is a one-line error that lists
EVERY valid choice, so the user can pick one without reading the source: `--model` (trained models, the
ensembles of params.yaml, and the models of params.yaml not trained yet), `--method`, and each registry
(model families, data sets, selection methods, extractive methods) and params.yaml cross-reference."""

from __future__ import annotations

import pytest
import yaml

from sumpipe.errors import SumpipeError

ARTICLE = "Police said the man was arrested on Monday after a long chase through the city. A bird flew over."


@pytest.fixture()
def project(tmp_path, repo_root, make_model_dir):
    """The repository's params.yaml beside models/M1 and models/M2 (one seed each) and a.txt."""
    (tmp_path / "params.yaml").write_text((repo_root / "params.yaml").read_text())
    make_model_dir(tmp_path / "models" / "M1" / "seed-1", seed=0, training_seed=1)
    make_model_dir(tmp_path / "models" / "M2" / "seed-1", seed=1, training_seed=1)
    (tmp_path / "a.txt").write_text(ARTICLE)
    return tmp_path


def _params(repo_root) -> dict:
    return yaml.safe_load((repo_root / "params.yaml").read_text())


def _one_line(result) -> str:
    code, out, err = result
    assert code == 1 and out == "" and err.startswith("error: ") and err.count("\n") == 1, err
    return err.strip()


def test_an_unknown_model_lists_trained_models_ensembles_and_untrained_ones(project, cli, repo_root) -> None:
    params = _params(repo_root)
    untrained = [name for name in params["models"] if name not in ("M1", "M2")]
    expected = (f"error: unknown model 'NOPE'; trained models in models/: M1, M2; "
                f"ensembles of params.yaml: {', '.join(params['ensembles'])}; "
                f"in params.yaml but not trained yet: {', '.join(untrained)}; "
                "or give a model folder's path (--project DIR: another project's models)")
    assert _one_line(cli("decode", "--model", "NOPE", "a.txt", cwd=project)) == expected
    assert "PG-cov-ens" in expected  # the ensembles are names --model answers too
    # --ensemble looks the model up the same way
    assert _one_line(cli("decode", "--model", "NOPE", "--ensemble", "a.txt", cwd=project)) == expected


def test_the_list_is_the_project_s_with_project(project, cli, tmp_path_factory) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "a.txt").write_text(ARTICLE)
    err = _one_line(cli("decode", "--project", str(project), "--model", "NOPE", "a.txt", cwd=elsewhere))
    assert f"trained models in {project / 'models'}/: M1, M2; ensembles of params.yaml: M1-ens, M2-ens" in err


def test_the_python_api_gives_the_same_list(project) -> None:
    import sumpipe

    with pytest.raises(SumpipeError, match=r"trained models in .*models/: M1, M2; ensembles of params.yaml: M1-ens"):
        sumpipe.load("NOPE", project=project)


def test_the_stage_lists_models_and_ensembles(project, cli, repo_root) -> None:
    params = _params(repo_root)
    params["train"]["numerics"] = "native"  # portable must be pinned before torch loads: other tests loaded it
    (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    known = ", ".join([*params["models"], *params["ensembles"]])
    assert _one_line(cli("decode", "--model", "NOPE", cwd=project)) == (
        f"error: unknown model 'NOPE'; params.yaml `models:` and `ensembles:` have {known}")


def test_an_unknown_extractive_method_lists_the_usable_ones(project, cli) -> None:
    from sumpipe.extractive.methods import METHODS

    usable = [n for n in METHODS.names() if not METHODS.get(n, "method").uses_reference]
    err = _one_line(cli("summarize", "--method", "NOPE", "a.txt", cwd=project))
    assert err == f"error: --method: unknown extractive method 'NOPE' (known: {', '.join(usable)})"
    assert "oracle" not in err  # it reads the reference: refused for new text


@pytest.mark.parametrize("registry", ["families", "datasets", "selections", "methods"])
def test_each_registry_lists_every_name(registry) -> None:
    from sumpipe.data.datasets import DATASETS
    from sumpipe.extractive.methods import METHODS
    from sumpipe.models.registry import FAMILIES
    from sumpipe.selection.methods import SELECTION_METHODS

    reg = {"families": FAMILIES, "datasets": DATASETS, "selections": SELECTION_METHODS, "methods": METHODS}[registry]
    with pytest.raises(SumpipeError) as info:
        reg.get("NOPE", "the.key")
    message = str(info.value)
    assert "\n" not in message
    assert message == f"the.key: unknown {reg.kind} 'NOPE' (known: {', '.join(reg.names())})"
    assert len(reg.names()) >= 2


def test_registry_names_are_the_names_that_answer() -> None:
    from sumpipe.extractive.methods import METHODS
    from sumpipe.models.registry import FAMILIES
    from sumpipe.selection.methods import SELECTION_METHODS

    for reg in (FAMILIES, METHODS, SELECTION_METHODS):
        for name in reg.names():
            reg.get(name, "key")  # every listed name is a valid choice
    assert {"first", "ngram", "textrank"} <= set(SELECTION_METHODS.names())
    assert "oracle" not in SELECTION_METHODS.names()  # it reads the reference: no model input


def _load_with(tmp_path, repo_root, change) -> str:
    from sumpipe.config import load_params

    params = _params(repo_root)
    change(params)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    with pytest.raises(SumpipeError) as info:
        load_params(path)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_params_cross_references_list_the_models(tmp_path, repo_root) -> None:
    models = ", ".join(_params(repo_root)["models"])

    def bad_ensemble(p):
        p["ensembles"]["PG-cov-ens"]["model"] = "NOPE"

    assert f"no model 'NOPE' in models: (known: {models})" in _load_with(tmp_path, repo_root, bad_ensemble)

    def bad_run(p):
        p["runs"]["M1-1"]["model"] = "NOPE"

    assert f"no model 'NOPE' in models: (known: {models})" in _load_with(tmp_path, repo_root, bad_run)

    def bad_crosseval(p):
        p.setdefault("crosseval", {})["ensembles"] = ["NOPE"]

    ensembles = ", ".join(_params(repo_root)["ensembles"])
    assert f"no ensemble 'NOPE' in ensembles: (known: {ensembles})" in _load_with(tmp_path, repo_root, bad_crosseval)


def test_an_unknown_input_selection_lists_the_configured_ones(tmp_path, repo_root) -> None:
    from sumpipe.config import load_params
    from sumpipe.train.stage import resolve_inputs

    params = _params(repo_root)
    params["models"]["M1"]["input"] = "first999"  # checked when the model is resolved, not at load
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    budgets = ", ".join(f"{b['method']}{b['tokens']}" for b in params["extract"]["budgets"])
    with pytest.raises(SumpipeError) as info:
        resolve_inputs(load_params(tmp_path / "params.yaml"), "M1", 1)
    message = str(info.value)
    assert f"(extract.budgets makes: {budgets})" in message


def test_an_unknown_model_to_train_lists_the_models(repo_root) -> None:
    from sumpipe.config import load_params
    from sumpipe.models.registry import resolve_model

    known = ", ".join(_params(repo_root)["models"])
    with pytest.raises(SumpipeError, match=f"unknown model 'NOPE' \\(known: {known}\\)"):
        resolve_model(load_params(repo_root / "params.yaml"), "NOPE")
