"""FD703 follows SimpleTuner's real launch path for torch.compile (issue 12).

train.sh (SimpleTuner bc8e6ab7): TRAINING_DYNAMO_BACKEND defaults to "no"; with an accelerate
config file ($ACCELERATE_CONFIG_PATH, else $HF_HOME/accelerate/default_config.yaml, else
~/.cache/huggingface/accelerate/default_config.yaml) it runs `accelerate launch --config_file=...`
without --dynamo_backend, so the yaml's dynamo_config decides; TRAINER_DYNAMO_BACKEND is read by
no launch path; the trainer's own dynamo_backend option wins when it is not "no".
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conftest import load_facts
from flexdoctor.checks.diffusers import flex_compiled
from flexdoctor.facts import ProjectFacts
from flexdoctor.model import Status
from flexdoctor.project import load_config
from flexdoctor.project import simpletuner as st

# What `accelerate config` writes (yaml.safe_dump of ClusterConfig), with and without compilation.
YAML_NO_DYNAMO = """compute_environment: LOCAL_MACHINE
debug: false
distributed_type: 'NO'
downcast_bf16: 'no'
enable_cpu_affinity: false
machine_rank: 0
main_training_function: main
mixed_precision: bf16
num_machines: 1
num_processes: 1
rdzv_backend: static
same_network: true
tpu_env: []
tpu_use_cluster: false
tpu_use_sudo: false
use_cpu: false
"""
YAML_INDUCTOR = YAML_NO_DYNAMO + """dynamo_config:
  dynamo_backend: INDUCTOR
  dynamo_mode: default
  dynamo_use_dynamic: false
  dynamo_use_fullgraph: false
"""


def _project(tmp_path: Path, env_lines: str = "", json_text: str = None, home_yaml: str = None,
             hf_yaml: str = None, environ_extra: dict = None):
    tmp_path.mkdir(parents=True, exist_ok=True)
    cfgdir = tmp_path / "config"
    cfgdir.mkdir()
    if json_text is not None:
        (cfgdir / "config.json").write_text(json_text)
    (cfgdir / "config.env").write_text("MODEL_FAMILY=wan\nTRAINER_EXTRA_ARGS='--attention_mechanism=flex'\n"
                                       + env_lines)
    home = tmp_path / "home"
    home.mkdir()
    environ = {"HOME": str(home), **(environ_extra or {})}
    if home_yaml is not None:
        p = home / ".cache" / "huggingface" / "accelerate"
        p.mkdir(parents=True)
        (p / "default_config.yaml").write_text(home_yaml)
    if hf_yaml is not None:
        p = tmp_path / "hf" / "accelerate"
        p.mkdir(parents=True)
        (p / "default_config.yaml").write_text(hf_yaml)
        environ["HF_HOME"] = str(tmp_path / "hf")
    return load_config(tmp_path, environ=environ)


def _fd703(cfg, machine="h100"):
    facts = dataclasses.replace(load_facts(machine), project=ProjectFacts(config=cfg, diffusers=None))
    return flex_compiled(facts)


def test_training_dynamo_backend_is_ignored_when_an_accelerate_config_exists(tmp_path):
    cfg = _project(tmp_path, "TRAINING_DYNAMO_BACKEND=inductor\n", home_yaml=YAML_NO_DYNAMO)
    r = _fd703(cfg)
    assert r.status == Status.WARN, r.message
    assert "default_config.yaml" in r.message
    assert any("TRAINING_DYNAMO_BACKEND=inductor" in d and "ignored" in d for d in r.details)
    assert "--dynamo_backend=inductor" in r.fix.summary  # the option that works with the yaml too


def test_training_dynamo_backend_counts_without_an_accelerate_config(tmp_path):
    r = _fd703(_project(tmp_path, "TRAINING_DYNAMO_BACKEND=inductor\n"))
    assert r.status == Status.PASS and "TRAINING_DYNAMO_BACKEND" in r.message


def test_trainer_dynamo_backend_is_read_by_no_launch_path(tmp_path):
    r = _fd703(_project(tmp_path, "TRAINER_DYNAMO_BACKEND=inductor\n"))
    assert r.status == Status.WARN
    assert any("TRAINER_DYNAMO_BACKEND=inductor" in d and "no SimpleTuner launch path" in d for d in r.details)


def test_the_yaml_dynamo_config_compiles(tmp_path):
    r = _fd703(_project(tmp_path, home_yaml=YAML_INDUCTOR))
    assert r.status == Status.PASS and "dynamo_config" in r.message


def test_hf_home_yaml_comes_first(tmp_path):
    cfg = _project(tmp_path, "TRAINING_DYNAMO_BACKEND=inductor\n", home_yaml=YAML_INDUCTOR, hf_yaml=YAML_NO_DYNAMO)
    assert cfg.launch["accelerate_config"] == str(tmp_path / "hf" / "accelerate" / "default_config.yaml")
    assert _fd703(cfg).status == Status.WARN


def test_accelerate_config_path_from_config_env(tmp_path):
    other = tmp_path / "acc.yaml"
    other.write_text(YAML_INDUCTOR)
    cfg = _project(tmp_path, f"ACCELERATE_CONFIG_PATH={other}\n", home_yaml=YAML_NO_DYNAMO)
    assert cfg.launch["accelerate_config"] == str(other) and _fd703(cfg).status == Status.PASS
    # named but missing: train.sh does no discovery and launches with --dynamo_backend
    cfg = _project(tmp_path / "b", f"ACCELERATE_CONFIG_PATH={tmp_path}/missing.yaml\nTRAINING_DYNAMO_BACKEND=inductor\n",
                   home_yaml=YAML_NO_DYNAMO)
    assert cfg.launch["accelerate_config"] is None and _fd703(cfg).status == Status.PASS


def test_config_option_no_lets_the_launcher_decide(tmp_path):
    """dynamo_backend "no" builds no plugin: Accelerator() then reads ACCELERATE_DYNAMO_BACKEND,
    which accelerate launch set from --dynamo_backend=$TRAINING_DYNAMO_BACKEND."""
    cfg = _project(tmp_path, "TRAINING_DYNAMO_BACKEND=inductor\n",
                   json_text='{"model_family": "wan", "attention_mechanism": "flex", "dynamo_backend": "no"}')
    assert _fd703(cfg).status == Status.PASS
    cfg2 = _project(tmp_path / "x", json_text='{"model_family": "wan", "attention_mechanism": "flex", '
                    '"dynamo_backend": "inductor"}', home_yaml=YAML_NO_DYNAMO)
    assert _fd703(cfg2).status == Status.PASS  # the trainer's plugin wins over the yaml


def test_accelerate_dynamo_backend_in_the_environment_is_overwritten(tmp_path):
    r = _fd703(_project(tmp_path, environ_extra={"ACCELERATE_DYNAMO_BACKEND": "INDUCTOR"}))
    assert r.status == Status.WARN and any("overwrites" in d for d in r.details)


def test_cpu_machine_is_not_told_triton(tmp_path):
    cfg = _project(tmp_path, home_yaml=YAML_INDUCTOR)
    r = _fd703(cfg, machine="cpu_only")
    assert r.status == Status.PASS and "Triton" not in r.message and "C++" in r.message


@pytest.mark.parametrize("text, expected", [
    (YAML_NO_DYNAMO, None), (YAML_INDUCTOR, "INDUCTOR"),
    ("distributed_type: 'NO'\ndynamo_backend: INDUCTOR\n", "INDUCTOR"),  # old top-level key
    ("distributed_type: 'NO'\ndynamo_backend: 'NO'\n", None),
    ("distributed_type: 'NO'\ndynamo_config: {}\n", None),
    ("distributed_type: 'NO'\ndynamo_config: {dynamo_backend: EAGER}\n", "EAGER"),
    ("distributed_type: 'NO'\ndynamo_config:\n  backend: inductor\n", "inductor"),
])
def test_yaml_reader_and_the_fallback_agree(tmp_path, monkeypatch, text, expected):
    p = tmp_path / "default_config.yaml"
    p.write_text(text)
    assert st.accelerate_dynamo_backend(p) == expected
    monkeypatch.setattr(st, "_load_yaml", st._mini_yaml)  # no PyYAML in the user's flexdoctor env
    assert st.accelerate_dynamo_backend(p) == expected
