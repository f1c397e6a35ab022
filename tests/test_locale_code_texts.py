"""Words built in code, outside the catalogues, speak the report's language (issue 16).

Each test runs one real path with Japanese chosen and asserts the Japanese text is there and the
English template is not; where the text also lands in JSON (facts, fleet, bench), the JSON keeps
English. One language is enough per path: tests/test_locale.py holds every language complete.
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import load_facts, load_facts_dict
from flexdoctor import text
from flexdoctor.cli import app

LANG = "ja"
DATA = Path(__file__).parent / "data" / "simpletuner"


@pytest.fixture
def ja():
    text.set_language(LANG)
    yield
    text.set_language(None)


def ja_text(key: str, **args) -> str:
    return text.catalog(LANG)[key].format(**args)


def en_text(key: str, **args) -> str:
    return text.catalog("en")[key].format(**args)


def cli(*args: str, env: dict = None):
    return CliRunner().invoke(app, ["--lang", LANG, *args], env=env, catch_exceptions=False)


def flat(said: str) -> str:
    """Without whitespace: reports wrap lines by terminal width, wherever a space or a CJK character is."""
    return "".join(said.split())


def en_template_absent(key: str, said: str) -> None:
    """The English words of ``key`` (outside its placeholders) are not in ``said``."""
    import re

    for chunk in re.split(r"\{[^}]*\}", text.catalog("en")[key]):
        words = chunk.strip(" :()'.,;")
        if " " in words:  # words, not a lone name (torch, --option)
            assert flat(words) not in flat(said), (key, words, said)


# ------------------------------------------------------------------ project/ (SimpleTuner configs)


def test_a_malformed_project_config_is_a_usage_error_in_japanese():
    path = DATA / "malformed" / "array.json"
    result = cli("check", "--static", "--project", str(path))
    assert result.exit_code == 2
    said = ja_text("probe-error.project.json_not_object", path=path, type="list")
    assert said in result.output
    en_template_absent("probe-error.project.json_not_object", result.output)


def test_config_error_is_english_data_worded_when_shown(ja):
    from flexdoctor.project import ConfigError, load_config

    path = DATA / "malformed" / "not_assignment.env"
    with pytest.raises(ConfigError) as info:
        load_config(path)
    exc = info.value
    assert str(exc).startswith(f"{path}: line 2: not a KEY=value assignment")  # English: logs, JSON
    assert exc.text() == ja_text("probe-error.project.env_not_assignment", **exc.params)
    assert "KEY=value" in exc.text() and str(path) in exc.text()  # code and paths stay as written


def test_an_unreadable_project_config_in_the_facts_is_english_and_worded_by_the_check(ja):
    from flexdoctor import checks, runner
    from flexdoctor.facts import Facts, ProbeError
    from flexdoctor.probes import diffusers as probe

    path = DATA / "malformed" / "syntax.toml"
    project = probe.probe(sys.executable, str(path), runtime=False)
    err = project.config
    assert isinstance(err, ProbeError) and err.reason == "project.bad_toml" and err.stage == "config"
    assert err.message.startswith(f"{path}: not valid TOML (")
    round_trip = Facts.from_dict(json.loads(json.dumps(Facts(project=project).to_dict())))
    assert round_trip.project.config == err
    facts = dataclasses.replace(load_facts("h100"), project=project)
    spec = next(s for s in checks.builtin() if s.symbol == "attention-mechanism")
    finding = runner.run_one(spec, facts)
    assert finding.status.value == "skip"
    assert ja_text("probe-error.project.bad_toml", path=path, error=err.args["error"]) in finding.message
    en_template_absent("probe-error.project.bad_toml", finding.message)


def test_an_unreadable_accelerate_config_is_a_note_in_japanese(tmp_path, ja):
    from flexdoctor.checks.diffusers import flex_compiled
    from flexdoctor.facts import ProjectFacts
    from flexdoctor.project import load_config

    cfgdir = tmp_path / "config"
    cfgdir.mkdir()
    (cfgdir / "config.env").write_text("MODEL_FAMILY=wan\nTRAINER_EXTRA_ARGS='--attention_mechanism=flex'\n")
    yaml = tmp_path / "home" / ".cache" / "huggingface" / "accelerate" / "default_config.yaml"
    yaml.parent.mkdir(parents=True)
    yaml.write_text("- a list\n- not a mapping\n")
    cfg = load_config(tmp_path, environ={"HOME": str(tmp_path / "home")})
    launch = cfg.launch
    assert launch["accelerate_config_error"].startswith(f"{yaml}: not an accelerate config")  # JSON: English
    assert launch["accelerate_config_error_reason"] == "project.accelerate_not_mapping"
    facts = dataclasses.replace(load_facts("h100"), project=ProjectFacts(config=cfg, diffusers=None))
    finding = flex_compiled(facts)
    said = "\n".join([finding.message, *finding.details])
    assert ja_text("probe-error.project.accelerate_not_mapping", path=yaml) in said
    en_template_absent("probe-error.project.accelerate_not_mapping", said)


# ------------------------------------------------------------------ fleet


def _fleet_dir(tmp_path: Path) -> Path:
    d = tmp_path / "reports"
    d.mkdir()
    from _fleet_nodes import report_for

    (d / "gpu001.json").write_text(json.dumps(report_for("gpu001")))
    (d / "list.json").write_text("[1, 2]")
    (d / "fleet.json").write_text(json.dumps({"kind": "flexdoctor-fleet"}))
    (d / "gpu002.json").write_bytes(b"\xff\xfe")
    return d


def test_fleet_merge_says_why_a_file_is_no_report_in_japanese_and_json_keeps_english(tmp_path):
    d = _fleet_dir(tmp_path)
    result = cli("fleet", "merge", str(d))
    assert result.exit_code == 1
    for key, args in [("fleet.detail.json_type", {"type": "list"}), ("fleet.detail.fleet_report", {}),
                      ("fleet.detail.not_utf8", {})]:
        assert ja_text(key, **args) in result.output
        en_template_absent(key, result.output)
    out = tmp_path / "fleet.json"
    assert cli("fleet", "merge", str(d), "--format", "json", "-o", str(out)).exit_code == 1
    details = {p["detail"] for p in json.loads(out.read_text())["problems"]}
    assert {"a JSON list", "a fleet report", "not UTF-8 text"} <= details


def test_fleet_usage_errors_in_japanese(tmp_path):
    d = _fleet_dir(tmp_path)
    bad = cli("fleet", "merge", str(d), "--ignore", "pyton")
    assert bad.exit_code == 2
    from flexdoctor.fleet.model import FIELDS

    assert ja_text("fleet.ignore.unknown_field", name="'pyton'", fields=", ".join(FIELDS)) in bad.output
    en_template_absent("fleet.ignore.unknown_field", bad.output)
    settings = tmp_path / "flexdoctor.toml"
    settings.write_text("[fleet]\nignore = 5\n")
    bad = cli("fleet", "merge", str(d), "--settings", str(settings))
    assert bad.exit_code == 2 and ja_text("fleet.settings.ignore_not_list", where=f"{settings} [fleet]") in bad.output
    empty = tmp_path / "empty"
    empty.mkdir()
    bad = cli("fleet", "merge", str(empty))
    assert bad.exit_code == 2 and ja_text("fleet.cli.no_reports", paths=str(empty)) in bad.output
    en_template_absent("fleet.cli.no_reports", bad.output)


def test_gather_words_are_said_in_japanese_and_stored_in_english(ja):
    from flexdoctor.fleet.gather import GatherError, identity
    from flexdoctor.fleet.merge import merge
    from flexdoctor.fleet.model import FileProblem
    from flexdoctor.render import fleet_json, fleet_text
    from flexdoctor.text import Said

    env = {"RANK": "x", "WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "1"}
    with pytest.raises(GatherError) as info:
        identity(env)
    assert str(info.value).startswith(ja_text("fleet.gather.bad_env", error="").rstrip())
    report = merge([], [FileProblem("rank 1", "no-report", Said.of("fleet.gather.no_report"))],
                   source=Said.of("fleet.gather.source", world=2, backend="gloo"),
                   gather_error=Said.of("fleet.gather.timeout", seconds="5", ranks="1"))
    shown = fleet_text.render(report)
    for key, args in [("fleet.gather.source", {"world": 2, "backend": "gloo"}), ("fleet.gather.no_report", {}),
                      ("fleet.gather.timeout", {"seconds": "5", "ranks": "1"})]:
        assert flat(ja_text(key, **args)) in flat(shown)
        en_template_absent(key, shown)
    doc = fleet_json.to_dict(report)
    assert doc["source"] == "gather over 2 ranks (gloo)"
    assert doc["gather_error"] == en_text("fleet.gather.timeout", seconds="5", ranks="1")
    assert doc["problems"][0]["detail"] == "its report did not arrive"


def test_fleet_stack_words_and_github_fix_in_japanese(ja):
    from flexdoctor.render import fleet_common

    assert fleet_common.value("none") == ja_text("fleet.value.none")
    assert fleet_common.value("warm 1a2b3c4d (3 configs)") == ja_text(
        "fleet.value.warm", id="1a2b3c4d", configs=ja_text("fleet.n.configs_other", count=3))
    assert fleet_common.value("stale 1a2b3c4d") == ja_text("fleet.value.stale", id="1a2b3c4d")
    assert fleet_common.value("2.11.0") == "2.11.0"  # versions are not words


def test_fleet_github_annotations_name_the_fix_in_japanese(tmp_path):
    from _fleet_nodes import report_for

    d = tmp_path / "r"
    d.mkdir()
    (d / "bad.json").write_text(json.dumps(report_for("bad", base="broken_torch")))
    (d / "good.json").write_text(json.dumps(report_for("good")))
    result = cli("fleet", "merge", str(d), "--format", "github")
    assert result.exit_code == 1
    assert f"%0A{text.catalog(LANG)['report.fix']}: " in result.output and "%0AFix: " not in result.output


# ------------------------------------------------------------------ facts files and the manifest


def test_a_bad_facts_file_is_a_usage_error_in_japanese(tmp_path):
    bad = tmp_path / "f.json"
    bad.write_text(json.dumps({"schema_version": 99}))
    result = cli("check", "--from-facts", str(bad))
    assert result.exit_code == 2
    assert ja_text("facts-load.schema", version="99", supported=1) in result.output
    en_template_absent("facts-load.schema", result.output)
    bad.write_text("[]")
    result = cli("check", "--from-facts", str(bad))
    assert result.exit_code == 2 and ja_text("facts-load.not_facts") in result.output


def test_an_unreadable_manifest_is_english_in_the_facts_and_japanese_in_the_report(tmp_path, ja):
    from flexdoctor.cache import locations
    from flexdoctor.facts import ProbeError
    from flexdoctor.probes import cache as cache_probe

    root = tmp_path / "inductor"
    root.mkdir()
    Path(locations.manifest_path(str(root))).write_text("{broken")
    err = cache_probe._manifest(str(root))
    assert isinstance(err, ProbeError) and err.reason == "manifest.not_json"
    assert err.message.startswith(f"{locations.manifest_path(str(root))}: not valid JSON (")
    env = {"TORCHINDUCTOR_CACHE_DIR": str(root), "FLEXDOCTOR_LANG": LANG}
    result = cli("check", "--static", "--only", "FD505", env=env)
    assert flat(ja_text("probe-error.manifest.not_json", **err.args)) in flat(result.output)
    en_template_absent("probe-error.manifest.not_json", result.output)
    facts = cli("facts", "--static", "--format", "json", env=env)
    manifest = json.loads(facts.output)["cache"]["manifest"]["probe_error"]
    assert "not valid JSON" in manifest["message"] and manifest["reason"] == "manifest.not_json"


# ------------------------------------------------------------------ warm-cache, cache why, FD306 python-headers


def test_presets_are_described_in_japanese():
    from flexdoctor.cache.plan import PRESETS

    result = cli("warm-cache", "--list-presets")
    assert result.exit_code == 0
    for name in PRESETS:
        assert ja_text(f"warm-preset.{name}") in result.output
    assert en_text("warm-preset.llm-packed") not in result.output


def test_cache_why_usage_errors_in_japanese():
    result = cli("cache", "why")
    assert result.exit_code == 2 and ja_text("why.error.no_command") in result.output
    result = cli("cache", "why", "--timeout", "0", "--", "true")
    assert result.exit_code == 2 and ja_text("cli.error.not_positive", flag="--timeout") in result.output
    en_template_absent("cli.error.not_positive", result.output)


def test_the_fallback_reinstall_hint_is_japanese(ja):
    from flexdoctor import checks, runner
    from flexdoctor.facts import Facts

    data = load_facts_dict("no_compiler_slim")
    data["python"]["include_dir"] = "/opt/custom/include/python3.10"
    spec = next(s for s in checks.builtin() if s.symbol == "python-headers")
    finding = runner.run_one(spec, Facts.load(data))
    assert finding.status.value == "fail"
    assert ja_text("python-headers.reinstall_any", minor="3.10") in finding.fix.summary
    en_template_absent("python-headers.reinstall_any", finding.fix.summary)


# ------------------------------------------------------------------ worker reasons (workers cannot import flexdoctor)


def test_a_real_bench_worker_sends_a_code_the_table_words_in_japanese(ja):
    from flexdoctor.deep import bench
    from flexdoctor.render import bench_view

    cases = bench.grid(1, 2, None, [64], [16], ["float32"], ["none"], device="cpu")
    report = bench.run(sys.executable, cases, impls=["sdpa-efficient"], modes=["fwd"], device="cpu", reps=3,
                       warmup=1, item_timeout=120)
    m = report.results[0]
    assert (m.status, m.reason_code) == ("unavailable", "cuda_only")
    assert report.to_dict()["results"][0]["reason"] == "CUDA only"  # the JSON keeps English
    assert bench_view.reason_text(m) == ja_text("worker-reason.cuda_only")
    shown = bench_view.render_text(report)
    assert ja_text("worker-reason.cuda_only") in shown and "CUDA only" not in shown


def test_a_missing_sdp_backend_is_english_in_the_facts_and_japanese_in_fd802(ja):
    from flexdoctor import checks, runner
    from flexdoctor.deep import deep
    from flexdoctor.facts import Facts

    backends = [{"backend": "flash", "usable": False, "reasons": [], "ran": False, "error_code": "no_sdp_backend",
                 "error_args": {"backend": "FLASH_ATTENTION", "torch": "2.1.0"}},
                {"backend": "efficient", "usable": True, "reasons": [], "ran": True, "rel_error": 1e-4, "nan": False},
                {"backend": "math", "ran": True, "rel_error": 1e-6, "nan": False}]
    got = deep._facts({"device": "cuda", "device_name": "NVIDIA H100", "capability": "9.0",
                       "sdpa": [{"dtype": "float16", "shape": [1, 8, 1024, 64], "backends": backends,
                                 "default_ok": True, "default_rel_error": 1e-4}]})
    flash = got.sdpa[0].backends[0]
    assert flash.error == "SDPBackend.FLASH_ATTENTION does not exist in torch 2.1.0"  # JSON: English
    spec = next(s for s in checks.builtin() if s.symbol == "deep-sdpa-backends")
    finding = runner.run_one(spec, Facts(deep=got))
    said = "\n".join([finding.message, *finding.details])
    assert ja_text("worker-reason.no_sdp_backend", backend="FLASH_ATTENTION", torch="2.1.0") in said
    assert "does not exist in torch" not in said


def test_multigpu_failures_are_worded_in_japanese(ja):
    from flexdoctor import checks, runner
    from flexdoctor.deep import multigpu
    from flexdoctor.facts import Facts, ProbeError
    from flexdoctor.worker._wire import STAGE

    got = multigpu.parse(STAGE + "all-reduce start\n", "", None, timed_out=True, timeout=120)
    inc = got.incomplete
    assert isinstance(inc, ProbeError) and inc.reason == "multigpu_hung_during"
    assert inc.message == "the multi-GPU probe did not finish in 120 s (hung during 'all-reduce start')"
    data = load_facts_dict("h100")
    data.update(json.loads((Path(__file__).parent / "fixtures" / "multigpu" / "h200x2_nv18.json").read_text()))
    data["multi_gpu"]["allreduce"] = None
    data["multi_gpu"]["incomplete"] = inc.to_dict()
    specs = [s for s in checks.builtin() if s.area == "multigpu"]
    fd904 = {r.id: r for r in runner.run(specs, Facts.from_dict(data)).results}["FD904"]
    assert ja_text("probe-error.multigpu_hung_during", seconds="120", where="all-reduce start") in fd904.message
    en_template_absent("probe-error.multigpu_hung_during", fd904.message)
    # A torch without the backend: the worker sends a code, the facts keep English.
    parsed = multigpu.parse('@@flexdoctor-result {"allreduce": {"backend": "nccl", "world_size": 2, "bytes": 1, '
                            '"error_code": "no_dist_backend", "error_args": {"backend": "nccl"}, "stage": "init"}}\n',
                            "", 0)
    assert parsed.allreduce.error == "this torch has no nccl backend"
    data["multi_gpu"]["incomplete"] = None
    data["multi_gpu"]["allreduce"] = dataclasses.asdict(parsed.allreduce)
    fd904 = {r.id: r for r in runner.run(specs, Facts.from_dict(data)).results}["FD904"]
    assert ja_text("worker-reason.no_dist_backend", backend="nccl") in fd904.message
    assert "this torch has no" not in fd904.message


def test_warm_worker_codes_are_worded_by_the_parent(tmp_path, ja):
    from flexdoctor.cache import warm

    fake = tmp_path / "python"
    result = {"ok": False, "error_kind": "no-mega-cache", "error_code": "no_mega_cache",
              "error_args": {"function": "load_cache_artifacts", "torch": "2.6.0"}}
    fake.write_text("#!/bin/sh\necho '@@flexdoctor-result " + json.dumps(result) + "'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    got = warm.run_worker(str(fake), ["import", "x.zip"], dict(os.environ), 30)
    assert got["error"] == ja_text("worker-reason.no_mega_cache", function="load_cache_artifacts", torch="2.6.0")
    en_template_absent("worker-reason.no_mega_cache", got["error"])
