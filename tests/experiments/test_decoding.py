"""The decoding-settings sweep: settings validated as `decode:` is, the test split refused, the table."""

from __future__ import annotations

import pytest

from sumpipe.config import DecodeConfig
from sumpipe.errors import ConfigError
from sumpipe.experiments.decoding import DecodingSweep, render, setting_configs
from sumpipe.validation import from_dict


def test_settings_are_decode_keys_over_params_yaml() -> None:
    sweep = DecodingSweep(settings={"base": {}, "min8": {"min_length": 8, "block_adjacent_repeat": True}})
    configs = setting_configs(sweep, DecodeConfig(length_penalty=1.5))
    assert configs["base"] == DecodeConfig(length_penalty=1.5)
    assert (configs["min8"].min_length, configs["min8"].block_adjacent_repeat, configs["min8"].length_penalty) == (
        8, True, 1.5)


@pytest.mark.parametrize(("settings", "message"), [
    ({"x": {"min_lenght": 8}}, "settings.x.min_lenght: unknown key"),
    ({"x": {"length_penalty": -1.0}}, "settings.x.length_penalty: must be"),
])
def test_a_bad_setting_is_one_line_naming_it(settings: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        setting_configs(DecodingSweep(settings=settings), DecodeConfig())


def test_the_test_split_is_never_read() -> None:
    with pytest.raises(ConfigError, match="split: must be train or valid"):
        from_dict(DecodingSweep, {"split": "test"})


def test_the_table_has_a_row_per_model_and_setting() -> None:
    figure = {"mean": 23.5, "sd": 0.4, "seeds": [23.1, 23.5, 23.9]}
    one = {"mean": 8.1, "sd": 0.2, "seeds": [8.0, 8.1, 8.2]}
    results = {"split": "valid", "seeds": [1, 2, 3], "settings": {"min8": {"min_length": 8}},
               "reference_words": {"mean": 10.1, "p10": 5, "p90": 16},
               "models": {"M1": {"lead1_rouge1": 23.01, "settings": {"min8": {
                   "rouge1": figure, "rouge2": figure, "rougeL": figure, "mean_words": one,
                   "adjacent_repeat": one, "distinct": one}}}}}
    assert ("| M1 | min8 | 23.50 ± 0.40 | 23.50 ± 0.40 | 23.50 ± 0.40 | 8.1 | 8.1 | 8.1 | 23.01 |"
            in render(results).splitlines())
