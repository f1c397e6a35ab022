"""Reading SimpleTuner configs (flexdoctor.project.simpletuner): real-shaped config.json,
config.toml and config.env for several families, profiles, and malformed files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flexdoctor.project import ConfigError, find_config, load_config

DATA = Path(__file__).parent / "data" / "simpletuner"
FAMILIES = ("flux", "sdxl", "wan", "qwen_image", "ltxvideo")
FORMATS = ("json", "toml", "env")


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_reads_the_same_options(family, fmt):
    cfg = load_config(DATA / family / fmt)
    assert cfg.format == fmt and cfg.tool == "simpletuner"
    assert Path(cfg.path).name == f"config.{fmt}"
    assert cfg.text("attention_mechanism") == "flex"
    assert cfg.text("model_family") == family
    assert cfg.text("mixed_precision") == "bf16"
    assert cfg.flag("gradient_checkpointing") is True
    reference = load_config(DATA / family / "json")
    for key in ("model_type", "base_model_precision", "lora_rank", "output_dir", "model_flavour"):
        assert cfg.text(key) == reference.text(key), key


def test_sources_say_where_each_option_came_from():
    assert load_config(DATA / "wan" / "env").sources["attention_mechanism"] == "TRAINER_EXTRA_ARGS"
    assert load_config(DATA / "wan" / "env").sources["model_family"] == "MODEL_FAMILY"
    assert load_config(DATA / "wan" / "json").sources["attention_mechanism"] == "config.json"
    # flux/json writes every key with the `--` prefix, as SimpleTuner also accepts.
    flux = json.loads((DATA / "flux" / "json" / "config.json").read_text())
    assert all(k.startswith("--") for k in flux)
    assert "attention_mechanism" in load_config(DATA / "flux" / "json").options


def test_config_env_dynamo_backend_and_extra_args(tmp_path):
    (tmp_path / "config.env").write_text(
        "# comment\n"
        "export MODEL_FAMILY=wan\n"
        "TRAINING_DYNAMO_BACKEND=inductor\n"
        "TRAINER_EXTRA_ARGS='--attention_mechanism=flash-attn'\n"
        'TRAINER_EXTRA_ARGS="${TRAINER_EXTRA_ARGS} --attention_mechanism flex --fuse_qkv_projections"\n'
        "TRAINER_EXTRA_ARGS+=--mixed_precision=no\n")
    cfg = load_config(tmp_path)
    assert cfg.text("attention_mechanism") == "flex"  # argparse: the last one wins
    assert cfg.flag("fuse_qkv_projections")
    assert cfg.text("mixed_precision") == "no"
    # TRAINING_DYNAMO_BACKEND is not an option of the trainer (load_env_config skips it): train.sh
    # reads it for accelerate launch, so it is a launch fact, judged by FD703.
    assert cfg.text("dynamo_backend") is None
    assert cfg.launch["training_dynamo_backend"] == "inductor"
    assert cfg.launch["training_dynamo_backend_source"] == str(tmp_path / "config.env")


def test_extra_args_override_mapped_variables(tmp_path):
    (tmp_path / "config.env").write_text('MIXED_PRECISION=bf16\nTRAINER_EXTRA_ARGS="--mixed_precision=fp16"\n')
    assert load_config(tmp_path / "config.env").text("mixed_precision") == "fp16"


def test_json_wins_over_toml_and_env_in_a_directory(tmp_path):
    for name in ("config.env", "config.toml", "config.json"):
        (tmp_path / name).write_text({"config.json": "{}", "config.toml": "", "config.env": ""}[name])
    assert find_config(tmp_path) == (tmp_path / "config.json", "json")
    (tmp_path / "config.json").unlink()
    assert find_config(tmp_path) == (tmp_path / "config.toml", "toml")


def test_checkout_and_profile():
    root = DATA / "checkout"
    base = load_config(root)  # a SimpleTuner checkout: its config/ directory
    assert Path(base.path) == root / "config" / "config.json"
    assert base.text("model_family") == "sdxl"
    profile = load_config(root, env="wan-flex")
    assert Path(profile.path) == root / "config" / "wan-flex" / "config.json"
    assert load_config(root / "config" / "wan-flex") == profile
    # train.sh sources config/config.env before any backend: its exports reach the run.
    assert profile.launch["training_dynamo_backend"] == "inductor"
    assert profile.launch["training_dynamo_backend_source"].endswith("config.env")
    assert profile.env == {"TRAINING_DYNAMO_BACKEND": "inductor", "DIFFUSERS_ATTN_CHECKS": "yes"}


def test_dynamo_backend_in_the_config_wins_over_config_env(tmp_path):
    (tmp_path / "config.env").write_text("TRAINING_DYNAMO_BACKEND=inductor\n")
    (tmp_path / "config.json").write_text('{"dynamo_backend": "no", "model_family": "wan"}')
    assert load_config(tmp_path).text("dynamo_backend") == "no"


MALFORMED = {
    "syntax.json": "not valid JSON",
    "array.json": "top level must be an object",
    "list_value.json": "attention_mechanism: expected a single string",
    "syntax.toml": "not valid TOML",
    "not_assignment.env": "line 2: not a KEY=value assignment",
    "unterminated.env": "TRAINER_EXTRA_ARGS: No closing quotation",
    "stray_word.env": "'attention_mechanism=flex' is not an --option",
    "config.yaml": "not a SimpleTuner config",
}


@pytest.mark.parametrize("name,words", sorted(MALFORMED.items()))
def test_malformed_configs_name_the_file_and_key(name, words):
    path = DATA / "malformed" / name
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert isinstance(info.value, ValueError)
    assert message.startswith(str(path)) and words in message
    assert "\n" not in message


def test_missing_path_and_empty_directory(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "nope.json")
    with pytest.raises(ConfigError, match="no config.json, config.toml or config.env"):
        load_config(tmp_path)


def test_parsing_is_pure_stdlib():
    import subprocess
    import sys

    code = ("import sys; import flexdoctor.project.simpletuner as s; "
            "s.load_config(sys.argv[1]); "
            "bad = [m for m in ('torch', 'diffusers', 'simpletuner', 'typer', 'rich') if m in sys.modules]; "
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code, str(DATA / "wan" / "toml")], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
