"""explain on real logs: the right entry comes FIRST, generic readings of the same error are replaced
by the specific one, fixes use what the log says, and commands fit the OS the entry is about."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flexdoctor import knowledge
from flexdoctor.cli import app
from flexdoctor.knowledge import explain as kbx
from flexdoctor.render import explain_view

LOGS = Path(__file__).parent / "data" / "logs"
ERROR_LOGS = sorted(LOGS.glob("FDE*.log"))
runner = CliRunner()

# Logs whose own entry is legitimately not first: (log's entry, entry reported first) -> why.
FIRST_EXCEPTIONS = {
    ("FDE701", "FDE703"): "the fp32 inputs (reported first) are why every SDPA backend refused",
    ("FDE701", "FDE107"): "on a T4 the sm75 limit (reported first) is why no kernel is left",
}


def body(path: Path) -> bytes:
    lines = path.read_bytes().splitlines(keepends=True)
    while lines and lines[0].startswith(b"# "):
        lines.pop(0)
    return b"".join(lines)


def scan(data: bytes) -> kbx.Result:
    return kbx.scan(io.BytesIO(data))


@pytest.mark.parametrize("path", ERROR_LOGS, ids=lambda p: p.name)
def test_own_entry_comes_first(path):
    own = path.name[:6]
    result = scan(body(path))
    ids = [p.entry.id for p in result.problems]
    if not ids:  # an advisory entry's log: reported as a note, and nothing else
        assert [p.entry.id for p in result.notes] == [own]
        assert knowledge.get(own).advisory
        return
    assert ids[0] == own or (own, ids[0]) in FIRST_EXCEPTIONS, (path.name, ids)


def test_every_new_area_entry_has_two_or_more_logs_or_one():
    """Every entry of the issue-12 files is backed by at least one real log of its own."""
    own = {p.name[:6] for p in ERROR_LOGS}
    new_files = {"arch.toml", "windows.toml", "macos.toml", "rocm.toml", "extensions.toml", "distributed.toml",
                 "runtime_env.toml", "diffusers_backends.toml", "cuda_libs.toml"}
    from importlib import resources

    from flexdoctor._toml import loads

    ids = [raw["id"] for item in resources.files("flexdoctor.knowledge").iterdir() if item.name in new_files
           for raw in loads(item.read_text(encoding="utf-8"))["entry"]]
    assert len(ids) >= 25
    assert [i for i in ids if i not in own] == []


# --- specific over generic -----------------------------------------------------------------------

def test_flash_attn_without_arch_is_not_blamed_on_torch():
    """'no kernel image' raised inside flash-attn names flash-attn (FDE122), never the torch wheel (FDE108)."""
    for name in ("FDE122_flash_attn_sm120_no_kernel_image.log", "FDE122_xformers_flashattention_pulid.log"):
        ids = [p.entry.id for p in scan(body(LOGS / name)).problems]
        assert ids == ["FDE122"], (name, ids)


def test_torch_no_kernel_image_stays_torch():
    ids = [p.entry.id for p in scan(body(LOGS / "FDE108_torch_op_no_kernel_image.log")).problems]
    assert ids == ["FDE108"]


def test_near_context_must_be_near():
    frame = b'  File "/x/site-packages/flash_attn/flash_attn_interface.py", line 91, in _flash_attn_forward\n'
    error = b"RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    filler = b"step 1: loss 0.5\n"
    near = frame + error
    far = frame + filler * 200 + error
    assert [p.entry.id for p in scan(near).problems] == ["FDE122"]
    assert [p.entry.id for p in scan(far).problems] == ["FDE108"]
    # the rule is the same whichever block boundary falls in between
    assert [p.entry.id for p in kbx.scan(io.BytesIO(near), block=7).problems] == ["FDE122"]
    assert knowledge.match_text(error.decode())[0].id == "FDE108"  # a lone message: no context, no FDE122
    assert knowledge.match_text((frame + error).decode())[0].id == "FDE122"


def test_sm121a_on_triton35_is_not_told_to_upgrade_to_torch27():
    result = scan(body(LOGS / "FDE120_ptxas_sm121a_triton35.log"))
    assert [p.entry.id for p in result.problems] == ["FDE120"]
    fix = kbx.fix_for(result.problems[0])
    text = fix.summary + " ".join(fix.commands)
    assert "TRITON_PTXAS_PATH" in text and "torch>=2.7" not in text
    # the old-triton case keeps FDE303
    assert [p.entry.id for p in scan(body(LOGS / "FDE303_ptxas_sm120.log")).problems] == ["FDE303"]


def test_ptxas_blackwell_wording():
    line = b"ptxas-blackwell fatal : Value 'sm_110a' is not defined for option 'gpu-name'\n"
    assert [p.entry.id for p in scan(line).problems] == ["FDE120"]


def test_windows_no_c_compiler_gets_no_apt_get():
    result = scan(body(LOGS / "FDE524_windows_no_c_compiler_sage.log"))
    assert [p.entry.id for p in result.problems] == ["FDE524"]
    assert not any("apt-get" in c for c in kbx.fix_for(result.problems[0]).commands)
    # the same message in a Linux log keeps the Linux fix
    assert [p.entry.id for p in scan(body(LOGS / "FDE304_no_c_compiler.log")).problems] == ["FDE304"]


def test_xformers_build_mismatch_replaces_no_operator():
    ids = [p.entry.id for p in scan(body(LOGS / "FDE720_xformers_no_cuda_support.log")).problems]
    assert ids == ["FDE720"]
    ids = [p.entry.id for p in scan(body(LOGS / "FDE721_xformers_no_operator_too_old_gpu.log")).problems]
    assert ids == ["FDE721"]


# --- what the log says, in the fix --------------------------------------------------------------

def test_xformers_fix_uses_the_versions_in_the_log():
    result = scan(body(LOGS / "FDE720_xformers_built_for_other_torch.log"))
    (p,) = result.problems
    assert p.context == {"built_torch": "2.3.0", "torch_version": "2.1.0", "cuda_tag": "cu121"}
    commands = kbx.fix_for(p).commands
    assert commands[0] == "python -m pip install xformers torch==2.1.0 --index-url https://download.pytorch.org/whl/cu121"
    text = explain_view.render(result, "x.log")
    assert "torch==2.1.0 --index-url https://download.pytorch.org/whl/cu121" in text
    doc = json.loads(explain_view.render(result, "x.log", fmt="json"))
    assert doc["problems"][0]["fix"]["commands"][0] == commands[0]


def test_log_commands_need_every_value():
    # no '(you have ...)' line: only the generic commands, nothing half-filled
    result = scan(body(LOGS / "FDE720_xformers_no_cuda_support.log"))
    for c in kbx.fix_for(result.problems[0]).commands:
        assert not re.search(r"\{[a-z_]+\}", c), c
        assert "torch==" not in c


def test_captured_values_must_be_plain_tokens():
    entry = knowledge.Entry(id="FDE997", symbol="z", title="z", cause="z", fix="z",
                            patterns=(r"have (?P<v>\S+) here",), log_commands=("pip install x=={v}",))
    m = kbx.Matcher([entry])
    bad = kbx.scan(io.BytesIO(b"we have 1.0;rm$(id) here\n"), m).problems[0]
    assert bad.context == {} and kbx.fix_for(bad).commands == ()
    good = kbx.scan(io.BytesIO(b"we have 1.0.2+cu126 here\n"), m).problems[0]
    assert kbx.fix_for(good).commands == ("pip install x==1.0.2+cu126",)


# --- notes ----------------------------------------------------------------------------------------

def test_harmless_notice_is_a_note_not_a_problem():
    data = body(LOGS / "FDE702_sdp_kernel_deprecated.log")
    result = scan(data)
    assert not result.found and [p.entry.id for p in result.notes] == ["FDE702"]
    text = explain_view.render(result, "x.log")
    assert "no known problem" in text and "FDE702" in text
    doc = json.loads(explain_view.render(result, "x.log", fmt="json"))
    assert doc["found"] is False and doc["problems"] == [] and doc["notes"][0]["id"] == "FDE702"
    cli = runner.invoke(app, ["explain", "-"], input=data.decode())
    assert cli.exit_code == 1 and "FDE702" in cli.output


# --- commands fit the OS ----------------------------------------------------------------------------

WINDOWS_ONLY = {"FDE520", "FDE521", "FDE522", "FDE523", "FDE524"}
MACOS_ONLY = {"FDE530", "FDE531", "FDE532", "FDE533"}
LINUX_ONLY = {"FDE120", "FDE124", "FDE160", "FDE161", "FDE162", "FDE220", "FDE221", "FDE540", "FDE910"}
LINUX_SHELL = re.compile(r"(^|\s)(export|sudo|apt-get|ldconfig|ldd|grep)\s|\$\(|\$[A-Z_]+\b(?!:)|/usr/|/dev/")
POWERSHELL = re.compile(r"Remove-Item|\$env:|Get-Command|\.exe\b")


@pytest.mark.parametrize("ref", sorted(WINDOWS_ONLY | MACOS_ONLY | LINUX_ONLY))
def test_commands_fit_the_entrys_os(ref):
    e = knowledge.get(ref)
    commands = list(e.commands) + list(e.log_commands)
    assert commands, ref
    for c in commands:
        if ref in WINDOWS_ONLY:
            assert not LINUX_SHELL.search(c), (ref, c)
        if ref in LINUX_ONLY or ref in MACOS_ONLY:
            assert not POWERSHELL.search(c), (ref, c)
        if ref in MACOS_ONLY:
            assert "apt-get" not in c and "/usr/local/cuda" not in c, (ref, c)


def test_cross_os_entries_label_each_os():
    """Entries whose fix differs by OS give each OS's command a label."""
    for ref in ("FDE121",):
        commands = knowledge.get(ref).commands
        linux = [c for c in commands if c.startswith("export ")]
        windows = [c for c in commands if "$env:" in c]
        assert linux and windows
        assert all("Linux" in c for c in linux) and all("Windows" in c for c in windows)


def test_links_are_threads_or_docs():
    for ref in sorted(WINDOWS_ONLY | MACOS_ONLY | LINUX_ONLY | {"FDE121", "FDE122", "FDE123", "FDE720", "FDE721",
                                                               "FDE722", "FDE620", "FDE621", "FDE820"}):
        e = knowledge.get(ref)
        assert e.links and all(link.startswith("https://") for link in e.links), ref


# --- the same logs as users paste them ---------------------------------------------------------

def _variants(lines: list[str]) -> dict[str, list[str]]:
    wrapped: list[str] = []
    for line in lines:  # a narrow terminal: long lines broken at a space, continuation indented
        cut = line.find(" ", 60) if len(line) > 90 else -1
        wrapped += [line[:cut], "    " + line[cut + 1:]] if cut > 0 else [line]
    return {
        "rank prefix": ["[rank3]: " + line for line in lines],
        "ANSI colours": ["\x1b[31m" + line + "\x1b[0m" for line in lines],
        "CRLF": [line + "\r" for line in lines],
        "timestamps": ["2025-06-01 12:00:00,123 ERROR " + line for line in lines],
        "wrapped": wrapped,
        "wrapped with rank prefix": ["[rank1]:" + line for line in wrapped],
    }


@pytest.mark.parametrize("path", ERROR_LOGS, ids=lambda p: p.name)
def test_decorated_and_wrapped_logs_keep_their_entry(path):
    own = path.name[:6]
    plain = scan(body(path))
    first = ([p.entry.id for p in plain.problems] or [p.entry.id for p in plain.notes])[0]
    lines = body(path).decode("utf-8").splitlines()
    for name, variant in _variants(lines).items():
        result = scan(("\n".join(variant) + "\n").encode("utf-8"))
        ids = [p.entry.id for p in result.problems] or [p.entry.id for p in result.notes]
        assert ids and ids[0] == first, (path.name, name, ids, own)


def test_wrapped_message_with_shared_prefix_is_joined():
    data = (b"[rank0]:      The detected CUDA version (12.2) mismatches the version that was used to compile\n"
            b"[rank0]:      PyTorch (11.7). Please make sure to use the same CUDA versions.\n")
    (p,) = scan(data).problems
    assert p.entry.id == "FDE402" and p.hits[0].first_line == 1
    assert kbx._joins("a: x", "b: y") == ["a: x b: y"]  # no shared decoration: the plain join only
