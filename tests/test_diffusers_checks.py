"""The FD7xx diffusers / SimpleTuner checks over real-shaped configs and recorded machines."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from conftest import load_facts
from flexdoctor import checks, knowledge, runner
from flexdoctor.facts import Facts, HostFacts, ProbeError, ProjectFacts
from flexdoctor.model import Status
from flexdoctor.project import DiffusersFacts, load_config
from flexdoctor.project import tables as tb

DATA = Path(__file__).parent / "data" / "simpletuner"
IDS = [f"FD70{i}" for i in range(1, 9)]
P, W, F, S = "pass", "warn", "fail", "skip"

# What diffusers 0.42.1 reports (its enum read by tests/test_diffusers_real.py), without flash-attn.
ENUM = sorted(tb.KNOWN_BACKENDS)


def dfacts(backend=None, version="0.42.1", error=None, checks_enabled=False, **kw) -> DiffusersFacts:
    checked = backend is not None and not backend.endswith("_hub")
    return DiffusersFacts(version=version, imported=True, has_dispatcher=True, backends=ENUM,
                          checks_enabled=checks_enabled,
                          default_backend="native", requirement_backend=backend if checked else None,
                          requirement_checked=checked, requirement_error=error, **kw)


def with_project(config=None, machine="h100", diffusers="auto", env=None) -> Facts:
    base = load_facts(machine)
    cfg = load_config(config) if config is not None else None
    if diffusers == "auto":
        from flexdoctor.probes.diffusers import configured_backend

        exported = {**(env or {}), **(cfg.env if cfg is not None else {})}
        diffusers = dfacts(configured_backend(cfg) or exported.get("DIFFUSERS_ATTN_BACKEND"))
    if env is not None:
        base = dataclasses.replace(base, host=dataclasses.replace(base.host, env={**base.host.env, **env}))
    project = None if cfg is None and diffusers is None else ProjectFacts(config=cfg, diffusers=diffusers)
    return dataclasses.replace(base, project=project)


def run(f: Facts) -> dict:
    specs = [s for s in checks.builtin() if s.area == "diffusers"]
    return {r.id: r for r in (runner.run_one(s, f) for s in specs)}


def statuses(f: Facts) -> dict:
    return {k: r.status.value for k, r in run(f).items()}


def test_the_checks_are_registered():
    specs = [s for s in checks.builtin() if s.area == "diffusers"]
    assert [s.id for s in specs] == IDS
    assert all(s.problems() == [] for s in specs)


# ------------------------------------------------------------------ families x formats, flex


FAMILY_EXPECTED = {
    # flux: SimpleTuner's FLUX.1 transformer calls SDPA directly -> flex has no effect.
    "flux": {"FD701": P, "FD702": W, "FD703": S, "FD704": P, "FD705": P, "FD706": P, "FD707": P, "FD708": P},
    "sdxl": {"FD701": P, "FD702": W, "FD703": S, "FD704": P, "FD705": P, "FD706": P, "FD707": P, "FD708": P},
    # dispatcher families: flex really runs, uncompiled (no dynamo_backend) -> warn.
    "wan": {"FD701": P, "FD702": P, "FD703": W, "FD704": P, "FD705": P, "FD706": P, "FD707": P, "FD708": P},
    "qwen_image": {"FD701": P, "FD702": P, "FD703": W, "FD704": P, "FD705": P, "FD706": P, "FD707": P, "FD708": P},
    "ltxvideo": {"FD701": P, "FD702": P, "FD703": W, "FD704": P, "FD705": P, "FD706": P, "FD707": P, "FD708": P},
}


@pytest.mark.parametrize("family", sorted(FAMILY_EXPECTED))
@pytest.mark.parametrize("fmt", ["json", "toml", "env"])
def test_family_configs(family, fmt):
    assert statuses(with_project(DATA / family / fmt)) == FAMILY_EXPECTED[family]


def test_no_effect_names_the_real_path():
    r = run(with_project(DATA / "sdxl" / "toml"))["FD702"]
    assert "no effect on sdxl" in r.message and "UNet" in r.message
    assert r.fix.kb == "FDE851" and '"attention_mechanism"' not in r.fix.summary  # toml syntax
    assert 'attention_mechanism = "diffusers"' in r.fix.summary
    flux = run(with_project(DATA / "flux" / "json"))["FD702"]
    assert "SimpleTuner's own transformer" in flux.message


def test_uncompiled_flex_warns_with_the_measured_cost_and_the_option_that_compiles():
    for fmt, setting in (("json", '"dynamo_backend": "inductor"'), ("toml", 'dynamo_backend = "inductor"'),
                         ("env", "TRAINER_EXTRA_ARGS=\"${TRAINER_EXTRA_ARGS} --dynamo_backend=inductor\"")):
        r = run(with_project(DATA / "wan" / fmt))["FD703"]
        assert r.status == Status.WARN
        assert "46.2 ms" in r.message and "10.1 GiB" in r.message and "30x" in r.message
        assert setting in r.fix.summary and r.fix.kb == "FDE852"
        assert any("is_causal" in d for d in r.details)
    qwen = run(with_project(DATA / "qwen_image" / "json"))["FD703"]
    assert any("tiled SDPA" in d for d in qwen.details)


def test_compiled_flex_passes_and_other_dynamo_backends_do_not_fuse():
    assert statuses(with_project(DATA / "cases" / "flex_fp32_compiled.json"))["FD703"] == P
    r = run(with_project(DATA / "cases" / "flex_aot_eager.json"))["FD703"]
    assert r.status == Status.WARN and "aot_eager" in r.message and "inductor" in r.message


def test_profile_compiles_through_config_env_and_its_exports_are_judged():
    profile = DATA / "checkout" / "config" / "wan-flex"
    old = with_project(profile, diffusers=dfacts("flex", version="0.35.2"))
    new = with_project(profile, diffusers=dfacts("flex", version="0.42.1", checks_enabled=True))
    assert statuses(old)["FD703"] == P
    r = run(old)["FD708"]
    assert r.status == Status.WARN and "DIFFUSERS_ATTN_CHECKS='yes'" in r.message and "0.35.2" in r.message
    assert r.fix.kb == "FDE860" and "config.env" in r.fix.summary
    assert statuses(old)["FD706"] == W  # SimpleTuner needs >= 0.36
    assert statuses(new)["FD708"] == P and statuses(new)["FD706"] == P


# ------------------------------------------------------------------ other misconfigurations


CASES = {
    "flex_alias.json": {"FD701": F, "FD704": S, "FD705": S},
    "flash3_fp32.toml": {"FD701": P, "FD702": P, "FD703": S, "FD704": F, "FD705": P},
    "sage_nf4.json": {"FD701": P, "FD702": P, "FD704": F},
    "hub.json": {"FD701": P, "FD702": P, "FD707": S},
    "unknown_family.json": {"FD702": S, "FD703": W},
    "no_family.json": {"FD702": S},
    "default_env_flex.env": {"FD701": P, "FD702": P, "FD703": W, "FD707": P},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_cases(name):
    got = statuses(with_project(DATA / "cases" / name))
    assert {k: got[k] for k in CASES[name]} == CASES[name]


def test_alias_suggests_the_accepted_spelling():
    r = run(with_project(DATA / "cases" / "flex_alias.json"))["FD701"]
    assert "'flex-attn'" in r.message and "did you mean 'flex'" in r.message
    assert '"attention_mechanism": "flex"' in r.fix.summary


def test_fp32_with_a_half_only_backend_fails_and_flex_accepts_fp32():
    r = run(with_project(DATA / "cases" / "flash3_fp32.toml"))["FD704"]
    assert "bfloat16 or float16" in r.message and 'mixed_precision = "bf16"' in r.fix.summary
    ok = run(with_project(DATA / "cases" / "flex_fp32_compiled.json"))["FD704"]
    assert ok.status == Status.PASS and "fp32" in ok.message


def test_sage_is_an_sdpa_replacement_that_reaches_every_family():
    r = run(with_project(DATA / "cases" / "sage_nf4.json"))
    assert "replaces torch SDPA" in r["FD702"].message
    assert any("validation only" in d for d in r["FD701"].details)
    assert r["FD704"].fix.kb == "FDE854"


def test_non_cuda_machines():
    assert statuses(with_project(DATA / "wan" / "json", machine="cpu_only"))["FD705"] == F
    r = run(with_project(DATA / "cases" / "flash3_fp32.toml", machine="macos_m2"))["FD705"]
    assert r.status == Status.FAIL and "NVIDIA GPU" in r.message
    flex_mac = run(with_project(DATA / "wan" / "json", machine="macos_m2"))["FD705"]
    assert flex_mac.status == Status.FAIL and "MPS" in flex_mac.message
    assert statuses(with_project(DATA / "sdxl" / "json", machine="h100"))["FD705"] == P
    assert statuses(with_project(DATA / "wan" / "json", machine="no_torch"))["FD705"] == S


# ------------------------------------------------------------------ the installed diffusers


def test_missing_backend_and_failed_requirement():
    old = dataclasses.replace(dfacts("_flash_3"), backends=[b for b in ENUM if "hub" not in b and b != "_flash_3"])
    r = run(with_project(DATA / "cases" / "flash3_fp32.toml", diffusers=old))["FD707"]
    assert r.status == Status.FAIL and "'_flash_3'" in r.message and r.fix.kb == "FDE857"
    msg = ("Flash Attention 3 backend '_flash_3' is not usable because of missing package or the version is too old. "
           "Please build FA3 beta release from source.")
    r = run(with_project(DATA / "cases" / "flash3_fp32.toml", diffusers=dfacts("_flash_3", error=msg)))["FD707"]
    assert r.status == Status.FAIL and "not usable because of missing package" in r.message
    assert r.fix.kb == "FDE858"


def test_dispatcher_missing_in_old_diffusers():
    old = DiffusersFacts(version="0.34.0", imported=True, has_dispatcher=False)
    r = run(with_project(DATA / "wan" / "json", diffusers=old))
    assert r["FD706"].status == Status.FAIL and r["FD706"].fix.kb == "FDE856"
    assert r["FD707"].status == Status.SKIP


def test_invalid_diffusers_attn_backend_in_the_environment():
    broken = dataclasses.replace(dfacts("flex-attention"), imported=False, import_stage="import attention_dispatch",
                                 import_error="ValueError: 'flex-attention' is not a valid AttentionBackendName")
    f = with_project(DATA / "cases" / "bad_env_backend.env", diffusers=broken)
    r = run(f)
    assert r["FD708"].status == Status.FAIL and "flex-attention" in r["FD708"].message
    assert "config.env" not in r["FD708"].message  # it came from the .env file under test
    assert r["FD708"].fix.kb == "FDE859"
    assert r["FD707"].status == Status.SKIP
    # Set in the shell instead, no config: still judged (static list when diffusers is absent).
    plain = with_project(None, diffusers=None, env={"DIFFUSERS_ATTN_BACKEND": "flexattention"})
    plain = dataclasses.replace(plain, project=ProjectFacts(config=None, diffusers=None))
    assert statuses(plain)["FD708"] == F


def test_without_diffusers_the_config_is_checked_statically():
    f = with_project(DATA / "wan" / "json", machine="h100", diffusers=None)
    f = dataclasses.replace(f, python=dataclasses.replace(f.python, packages={
        k: v for k, v in f.python.packages.items() if k != "diffusers"}))
    got = run(f)
    assert got["FD706"].status == Status.SKIP and "checked statically" in got["FD706"].message
    assert got["FD707"].status == Status.SKIP
    assert got["FD703"].status == Status.WARN  # the config itself is still judged


def test_static_tier_skips_the_runtime_questions():
    skipped = ProbeError("not gathered: the runtime tier was skipped (--static)", kind="skipped")
    f = with_project(DATA / "wan" / "json", diffusers=skipped)
    f = dataclasses.replace(f, python=dataclasses.replace(f.python, packages={**f.python.packages,
                                                                               "diffusers": "0.42.1"}))
    r = run(f)
    assert r["FD707"].status == Status.SKIP and "--static" in r["FD707"].message


def test_plain_check_is_unchanged_without_config_and_without_diffusers():
    for machine in ("h100", "cpu_only", "no_torch"):
        f = load_facts(machine)
        assert f.project is None
        assert set(statuses(f).values()) == {S}, machine


def test_unreadable_config_is_a_skip_not_a_crash():
    f = dataclasses.replace(load_facts("h100"), project=ProjectFacts(
        config=ProbeError("/x/config.json: not valid JSON (...)", stage="config")))
    r = run(f)
    assert r["FD701"].status == Status.SKIP and "not valid JSON" in r["FD701"].message


# ------------------------------------------------------------------ the usual contract


def all_reports():
    configs = [DATA / fam / fmt for fam in FAMILY_EXPECTED for fmt in ("json", "toml", "env")]
    configs += sorted((DATA / "cases").iterdir()) + [DATA / "checkout" / "config" / "wan-flex"]
    for c in configs:
        for machine in ("h100", "cpu_only", "macos_m2"):
            yield f"{c.name}@{machine}", run(with_project(c, machine=machine))


def test_every_check_passes_somewhere_and_complains_somewhere():
    seen = {i: set() for i in IDS}
    for _, results in all_reports():
        for cid, r in results.items():
            seen[cid].add(r.status)
    for f in (with_project(DATA / "cases" / "bad_env_backend.env", diffusers=dataclasses.replace(
            dfacts("flex-attention"), import_error="ValueError: 'flex-attention' is not a valid AttentionBackendName")),
              with_project(DATA / "wan" / "json", diffusers=DiffusersFacts(version="0.34.0", has_dispatcher=False)),
              with_project(DATA / "wan" / "json", diffusers=dfacts("flex", error="boom"))):
        for cid, r in run(f).items():
            seen[cid].add(r.status)
    for cid, st in seen.items():
        assert Status.PASS in st, cid
        assert st & {Status.WARN, Status.FAIL}, cid


PLACEHOLDER = re.compile(r"\{[a-z_]+\}")


def test_messages_and_fixes_are_filled_in():
    for name, results in all_reports():
        for cid, r in results.items():
            assert r.status != Status.ERROR, (name, cid, r.message, r.details)
            texts = [r.message, *r.details] + ([r.fix.summary, *r.fix.commands] if r.fix else [])
            for text in texts:
                assert not PLACEHOLDER.search(text), (name, cid, text)
                assert "None" not in text, (name, cid, text)
            if r.status in (Status.WARN, Status.FAIL):
                assert r.fix is not None and r.fix.kb in knowledge.entries(), (name, cid)


def test_kb_ids_stay_in_the_project_range():
    mine = [e for e in knowledge.entries().values() if e.symbol in {
        "simpletuner-attention-mechanism-invalid", "simpletuner-backend-no-effect", "flex-uncompiled-in-diffusers",
        "attention-backend-needs-half", "sageattention-nf4", "attention-backend-needs-device",
        "diffusers-too-old-for-dispatcher", "diffusers-backend-missing", "diffusers-backend-requirement",
        "diffusers-attn-backend-invalid", "diffusers-attn-checks-ignored"}]
    assert len(mine) == 11 and all(850 <= int(e.id[3:]) < 870 for e in mine)


def test_facts_with_a_project_round_trip():
    f = with_project(DATA / "checkout" / "config" / "wan-flex")
    again = Facts.from_dict(f.to_dict())
    assert again.project == f.project
    assert isinstance(again.project.config.options, dict) and again.project.diffusers.backends == ENUM


def test_tables_cover_simpletuner():
    # Every mechanism maps somewhere; every dispatcher target is a diffusers backend name.
    assert all(tb.mechanism_kind(m) != "unknown" for m in tb.MECHANISMS)
    assert set(tb.DISPATCHER_BACKENDS.values()) <= tb.KNOWN_BACKENDS
    assert set(tb.ALIASES.values()) <= set(tb.MECHANISMS)
    assert len(tb.FAMILIES) == 42 and set(tb.FAMILIES.values()) == {"dispatcher", "unet", "sdpa"}
    assert HostFacts  # imported for with_project's env handling
