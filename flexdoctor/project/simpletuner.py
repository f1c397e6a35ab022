"""Read a SimpleTuner config the way SimpleTuner does, without importing it (stdlib only).

What is emulated (bghira/SimpleTuner, simpletuner/helpers/configuration/):

- loader.py ``auto_detect_config_backend``: in a config directory, ``config.json`` wins over
  ``config.toml`` over ``config.env``; a profile lives in ``config/<name>/`` (ENV=<name>).
- json_file.py / toml_file.py: the top-level mapping becomes ``--key=value`` arguments through
  cli_utils.py ``mapping_to_cli_args``: keys may be bare or ``--``-prefixed, ``true``/``false``
  strings are flags, nested tables are not arguments; argparse keeps the last value.
- env_file.py ``parse_env_file``: ``[export ]KEY=value`` and ``KEY+=value`` lines, quotes
  stripped, ``#`` comments; ``load_env_config`` maps known variables (``MODEL_FAMILY`` ->
  ``--model_family`` ...) and then appends ``TRAINER_EXTRA_ARGS`` split on whitespace, so extra
  args win. train.sh *sources* config.env with bash, so ``${VAR}`` references expand here too.
- train.sh sources ``config/config.env`` and then ``config/<ENV>/config.env`` before any backend:
  variables exported there (DIFFUSERS_ATTN_BACKEND, ...) reach the training process even when the
  options come from config.json.
- torch.compile (read at SimpleTuner bc8e6ab7 and huggingface/accelerate 16cb6eb8): train.sh
  defaults ``TRAINING_DYNAMO_BACKEND`` to ``no``, then uses ``$ACCELERATE_CONFIG_PATH``, else
  ``${HF_HOME}/accelerate/default_config.yaml`` if that file exists, else
  ``${HOME}/.cache/huggingface/accelerate/default_config.yaml`` (no XDG_CACHE_HOME: train.sh and
  cli/train.py ``find_accelerate_config`` spell these two paths out). If that file exists it runs
  ``accelerate launch --config_file=FILE`` WITHOUT ``--dynamo_backend``, so the yaml's
  ``dynamo_config.dynamo_backend`` decides (accelerate commands/launch.py; absent: ``no``; the old
  top-level ``dynamo_backend`` key is converted by config_args.py ``process_config``); otherwise
  ``accelerate launch --dynamo_backend="$TRAINING_DYNAMO_BACKEND"``. Either way accelerate's
  launcher overwrites ``ACCELERATE_DYNAMO_BACKEND`` in the child (utils/launch.py). In the trainer
  (trainer.py), a ``dynamo_backend`` option other than ``no`` builds a TorchDynamoPlugin and wins;
  otherwise ``Accelerator()`` builds ``TorchDynamoPlugin()`` from ``ACCELERATE_DYNAMO_BACKEND``.
  env_file.py's ``load_env_config`` skips every variable mapped to ``--dynamo_backend``
  (``TRAINING_DYNAMO_BACKEND`` and ``TRAINER_DYNAMO_BACKEND``), so ``TRAINER_DYNAMO_BACKEND`` is
  read by no launch path at all. :func:`launch_facts` records these raw facts; FD703 judges them.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import Mapping, Optional, Union

from ..text import english, t
from .model import ProjectConfig

CONFIG_NAMES = (("config.json", "json"), ("config.toml", "toml"), ("config.env", "env"))

# env_file.py env_to_args_map, the entries that matter for attention (variable -> option).
ENV_TO_OPTION = {
    "MODEL_TYPE": "model_type",
    "MODEL_NAME": "pretrained_model_name_or_path",
    "MODEL_FAMILY": "model_family",
    "MIXED_PRECISION": "mixed_precision",
    "BASE_MODEL_PRECISION": "base_model_precision",
    "USE_GRADIENT_CHECKPOINTING": "gradient_checkpointing",
    "OUTPUT_DIR": "output_dir",
    "DATALOADER_CONFIG": "data_backend_config",
    "LEARNING_RATE": "learning_rate",
    "LR_SCHEDULE": "lr_scheduler",
    "OPTIMIZER": "optimizer",
    "MAX_NUM_STEPS": "max_train_steps",
    "TRAIN_BATCH_SIZE": "train_batch_size",
    "TRAINING_SEED": "seed",
}
# TRAINING_DYNAMO_BACKEND is read by train.sh (accelerate launch --dynamo_backend, only without an
# accelerate config file); TRAINER_DYNAMO_BACKEND by no launch path (recorded to say so).
DYNAMO_ENV = ("TRAINING_DYNAMO_BACKEND", "TRAINER_DYNAMO_BACKEND")
# What train.sh reads from its environment (and config.env) to find the accelerate config.
LAUNCH_ENV = ("ACCELERATE_CONFIG_PATH", "HF_HOME", "HOME", "ACCELERATE_DYNAMO_BACKEND")
# Options whose value must be a single string for flexdoctor (and SimpleTuner) to make sense of it.
STRING_OPTIONS = ("attention_mechanism", "model_family", "model_flavour", "mixed_precision",
                  "base_model_precision", "dynamo_backend", "dynamo_mode", "sageattention_usage")

_ASSIGN = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(\+?=)(.*)$")
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


class ConfigError(ValueError):
    """A config flexdoctor cannot read: the message names the file (and the key or line).

    What it says is data, like a ProbeError's (facts.py): ``reason`` names a ``probe-error.<reason>``
    text of the catalogues (``project.*``, locale/en.project.toml) and ``params`` fill it. ``str()``
    is that text in English (JSON facts, logs); :meth:`text` words it in the user's language.
    """

    def __init__(self, reason: str, **params: object) -> None:
        self.reason = f"project.{reason}"
        self.params = {k: v if isinstance(v, (int, float)) else str(v) for k, v in params.items()}
        super().__init__(english(f"probe-error.{self.reason}", **self.params))

    def text(self) -> str:
        """The message in the report's language (paths, keys and quoted values stay as written)."""
        return t(f"probe-error.{self.reason}", **self.params)


def _strerror(exc: BaseException) -> str:
    return str(getattr(exc, "strerror", None) or exc)


def find_config(path: Union[str, Path], env: Optional[str] = None) -> tuple[Path, str]:
    """The config file ``path`` names and its format.

    ``path`` is a config file, a directory holding one, a SimpleTuner checkout (its ``config/``),
    or with ``env`` the checkout whose ``config/<env>/`` profile to read.
    """
    p = Path(path).expanduser()
    if p.is_file():
        fmt = {".json": "json", ".toml": "toml", ".env": "env"}.get(p.suffix.lower())
        if fmt is None:
            raise ConfigError("not_a_config", path=p)
        return p, fmt
    if not p.exists():
        raise ConfigError("no_such_path", path=p)
    candidates = []
    if env and env != "default":
        candidates += [p / "config" / env, p / env]
    candidates += [p, p / "config"]
    for d in candidates:
        for name, fmt in CONFIG_NAMES:
            if (d / name).is_file():
                return d / name, fmt
    raise ConfigError("no_config_here", path=p, config_dir=p / "config")


def load_config(path: Union[str, Path], env: Optional[str] = None,
                environ: Optional[Mapping[str, str]] = None) -> ProjectConfig:
    """Parse a SimpleTuner config into a :class:`ProjectConfig`; :class:`ConfigError` if malformed.

    ``environ`` is the environment the training would be launched from (default: this process's).
    """
    environ = os.environ if environ is None else environ
    file, fmt = find_config(path, env)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError("unreadable", path=file, error=_strerror(exc)) from None
    options: dict = {}
    sources: dict = {}
    env_vars: dict = {}
    env_files: list = []
    # train.sh: config/config.env, then the profile's config.env, exported before the backend runs.
    for env_file in _env_files_for(file):
        env_vars.update(_parse_env(env_file, env_vars))
        env_files.append(str(env_file))
    if fmt == "json":
        _apply_mapping(_load_json(file, text), options, sources, file)
    elif fmt == "toml":
        _apply_mapping(_load_toml(file, text), options, sources, file)
    else:
        if str(file) not in env_files:
            env_vars.update(_parse_env(file, env_vars))
            env_files.append(str(file))
        _apply_env(env_vars, options, sources, file)
    for key in STRING_OPTIONS:
        value = options.get(key)
        if value is not None and not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise ConfigError("not_single_string", path=file, key=key, value=json.dumps(value))
    return ProjectConfig(path=str(file), format=fmt, options=options, sources=sources,
                         env={k: v for k, v in env_vars.items() if k.startswith("DIFFUSERS_") or k in DYNAMO_ENV},
                         env_files=env_files, launch=launch_facts(env_vars, environ, env_files))


def launch_facts(env_vars: Mapping[str, str], environ: Mapping[str, str], env_files: list) -> dict:
    """What train.sh's launch reads, as raw facts (see the module docstring for the code path).

    Keys: ``training_dynamo_backend`` / ``trainer_dynamo_backend`` (value or None) with
    ``*_source`` (the config.env file or "environment"); ``accelerate_config`` (the yaml train.sh
    would pass with --config_file, or None) and ``accelerate_config_source``; ``searched`` (the
    paths looked at); ``accelerate_config_dynamo`` (its dynamo backend as written, None when it
    names none) or ``accelerate_config_error`` (in English, with ``accelerate_config_error_reason``
    and ``_args``: the ConfigError's catalogue text); ``accelerate_dynamo_env`` (ACCELERATE_DYNAMO_BACKEND
    of this environment, which accelerate launch overwrites).
    """
    where = env_files[-1] if env_files else None

    def lookup(name: str):
        # config.env is sourced by train.sh, so its value wins over the calling environment.
        if name in env_vars:
            return env_vars[name], where
        if name in environ:
            return environ[name], "environment"
        return None, None

    out: dict = {}
    for name in DYNAMO_ENV:
        value, src = lookup(name)
        out[name.lower()] = value
        out[name.lower() + "_source"] = src
    dyn_env = environ.get("ACCELERATE_DYNAMO_BACKEND")
    out["accelerate_dynamo_env"] = dyn_env
    explicit, explicit_src = lookup("ACCELERATE_CONFIG_PATH")
    hf_home = lookup("HF_HOME")[0] or ""
    home = lookup("HOME")[0] or os.path.expanduser("~")
    if explicit:  # [[ -z "${ACCELERATE_CONFIG_PATH}" ]] is false: no discovery
        candidates = [(explicit, "ACCELERATE_CONFIG_PATH")]
    else:
        candidates = [(f"{hf_home}/accelerate/default_config.yaml", "HF_HOME"),
                      (f"{home}/.cache/huggingface/accelerate/default_config.yaml", "HOME")]
    out["searched"] = [c for c, _ in candidates]
    chosen = next(((c, s) for c, s in candidates if os.path.isfile(c)), (None, None))
    out["accelerate_config"], out["accelerate_config_source"] = chosen
    out["accelerate_config_dynamo"] = None
    out["accelerate_config_error"] = None
    if chosen[0] is not None:
        try:
            out["accelerate_config_dynamo"] = accelerate_dynamo_backend(Path(chosen[0]))
        except ConfigError as exc:
            # English for the JSON facts; reason and args let a check word it in the report's language.
            out["accelerate_config_error"] = str(exc)
            out["accelerate_config_error_reason"] = exc.reason
            out["accelerate_config_error_args"] = dict(exc.params)
    return out


def accelerate_dynamo_backend(path: Path) -> Optional[str]:
    """The dynamo backend an accelerate config file sets, as accelerate launch reads it:
    ``dynamo_config: {dynamo_backend: X}`` (``backend`` is accepted too: launch.py prefixes the
    keys of dynamo_config with ``dynamo_``), or the old top-level ``dynamo_backend: X``
    (config_args.py ``process_config``). None: it sets none (accelerate then uses ``no``)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError("unreadable", path=path, error=_strerror(exc)) from None
    data = _load_yaml(path, text)
    if not isinstance(data, dict):
        raise ConfigError("accelerate_not_mapping", path=path)
    dyn = data.get("dynamo_config")
    if "dynamo_backend" in data:  # the old format, converted exactly as process_config does
        old = data["dynamo_backend"]
        dyn = {} if old == "NO" else {"dynamo_backend": old}
    if not isinstance(dyn, dict):
        return None
    for key in ("dynamo_backend", "backend"):
        if dyn.get(key) is not None:
            return str(dyn[key])
    return None


def _load_yaml(path: Path, text: str):
    try:
        import yaml  # accelerate itself reads the file with yaml.safe_load
    except ImportError:
        return _mini_yaml(path, text)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError("bad_yaml", path=path, error=(str(exc).splitlines() or [""])[0]) from None


_YAML_LINE = re.compile(r"^( *)([A-Za-z0-9_.-]+):(?:\s+(.*?))?\s*$")


def _mini_yaml(path: Path, text: str) -> dict:
    """The two-level block mappings ``accelerate config`` writes (yaml.safe_dump), without PyYAML:
    scalars, ``{}``/``[]`` and ``{key: value}`` flow mappings. Anything else is left out."""
    out: dict = {}
    parent: Optional[str] = None
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].rstrip()
        if not line.strip() or line.lstrip().startswith(("#", "-", "---")):
            continue
        m = _YAML_LINE.match(line)
        if m is None:
            raise ConfigError("accelerate_bad_line", path=path, text=line[:80])
        indent, key, value = len(m.group(1)), m.group(2), m.group(3)
        target = out if indent == 0 else out.setdefault(parent or "", {})
        if indent == 0:
            parent = key
        if value is None or value == "":
            if indent == 0:
                out[key] = {}
            continue
        if not isinstance(target, dict):
            continue
        target[key] = _yaml_scalar(value)
    return out


def _yaml_scalar(value: str):
    v = value.strip()
    if v.startswith("{") and v.endswith("}"):
        items = [p.split(":", 1) for p in v[1:-1].split(",") if ":" in p]
        return {k.strip(): _yaml_scalar(x) for k, x in items}
    if v in ("[]",):
        return []
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1]
    if v.lower() in ("null", "~"):
        return None
    if v.lower() in ("true", "false"):
        return v.lower() == "true"
    return v


def _env_files_for(file: Path) -> list[Path]:
    """config.env files train.sh sources for a config at ``file`` (base first, then the profile)."""
    d = file.parent
    found = []
    if d.parent.name == "config" and (d.parent / "config.env").is_file():  # config/<profile>/
        found.append(d.parent / "config.env")
    if (d / "config.env").is_file():
        found.append(d / "config.env")
    return found


def _load_json(file: Path, text: str) -> dict:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError("bad_json", path=file, error=exc) from None
    except RecursionError:
        raise ConfigError("json_too_deep", path=file) from None
    if not isinstance(data, dict):
        raise ConfigError("json_not_object", path=file, type=type(data).__name__)
    return data


def _load_toml(file: Path, text: str) -> dict:
    from .._toml import TOMLDecodeError, loads

    try:
        return loads(text)
    except TOMLDecodeError as exc:
        raise ConfigError("bad_toml", path=file, error=exc) from None


def _canonical(key: object, file: Path) -> str:
    if not isinstance(key, str) or not key.strip().lstrip("-"):
        raise ConfigError("not_option_name", path=file, key=repr(key))
    return key.strip().lstrip("-")


def _apply_mapping(data: dict, options: dict, sources: dict, file: Path) -> None:
    for raw_key, value in data.items():
        key = _canonical(raw_key, file)
        if value is None or isinstance(value, dict):
            continue  # not a command-line argument (mapping_to_cli_args keeps tables as extras)
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            value = value.strip().lower() == "true"
        options[key] = value
        sources[key] = file.name


def _expand(value: str, known: dict) -> str:
    return _VAR.sub(lambda m: known.get(m.group(1) or m.group(2), os.environ.get(m.group(1) or m.group(2), "")),
                    value)


def _parse_env(file: Path, known: dict) -> dict:
    """config.env as bash would leave it: KEY=value / KEY+=value with ${VAR} expanded."""
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError("unreadable", path=file, error=_strerror(exc)) from None
    out: dict = {}
    scope = dict(known)
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _ASSIGN.match(line)
        if m is None:
            raise ConfigError("env_not_assignment", path=file, number=number, text=line[:80])
        key, op, value = m.group(1), m.group(2), m.group(3).strip()
        try:
            words = shlex.split(value, comments=True, posix=True)
        except ValueError as exc:
            raise ConfigError("env_bad_quoting", path=file, number=number, key=key, error=exc) from None
        quoted = value[:1] in ("'", '"')
        text = value[1:-1] if quoted and len(value) > 1 and value[-1] == value[0] else " ".join(words)
        if value[:1] != "'":
            text = _expand(text, scope)
        if op == "+=":
            text = (scope.get(key, "") + " " + text).strip()
        out[key] = scope[key] = text
    return out


def _apply_env(env_vars: dict, options: dict, sources: dict, file: Path) -> None:
    for var, key in ENV_TO_OPTION.items():
        if var in env_vars and env_vars[var] != "":
            value = env_vars[var]
            options[key] = value.lower() == "true" if value.lower() in ("true", "false") else value
            sources[key] = var
    extra = env_vars.get("TRAINER_EXTRA_ARGS", "")
    try:
        words = shlex.split(extra)
    except ValueError as exc:
        raise ConfigError("extra_args_bad_quoting", path=file, error=exc) from None
    i = 0
    while i < len(words):
        word = words[i]
        if not word.startswith("--") or len(word) <= 2:
            raise ConfigError("extra_args_not_option", path=file, word=repr(word))
        key, eq, value = word[2:].partition("=")
        if not eq:
            if i + 1 < len(words) and not words[i + 1].startswith("--"):
                value, i = words[i + 1], i + 1
            else:
                value = "true"
        options[key] = value.lower() == "true" if value.lower() in ("true", "false") else value
        sources[key] = "TRAINER_EXTRA_ARGS"
        i += 1
