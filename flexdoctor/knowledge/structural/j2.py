"""The structural layer's readers of tuner j2 (issue 22, round 12 train): installing, launchers, model code.

- ``uninstall``: pip cannot remove a distribution it is replacing because nothing recorded its files (a distutils /
  setup.py install, e.g. Anaconda base's llvmlite or TBB; a Debian/Ubuntu python3-* package, "no RECORD file").
  The remedy threads settle on: install over it with --ignore-installed (or skip re-installing it with --no-deps),
  better in a virtual environment; for an OS package, remove it with the OS package manager first.
- ``clone``: a launcher's git clone/fetch failed (stable-diffusion-webui's "Couldn't clone Stable Diffusion"), or git
  found no repository at a URL: a removed repository (j2_tables.toml [[gone]]) is answered with the copy its
  maintainers name and the launcher's override variable ([webui]).
- ``cache``: model code written for an older transformers calls a Cache member newer releases removed
  (j2_tables.toml [[cache]]): pin the release it was written for, or use the architecture transformers ships.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Optional

from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer, catalogue, on_windows
from .tables import _load

_say = catalogue("j2")
_DIST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?")  # a PEP 508 name
_REPO = re.compile(r"https?://github\.com/(?P<repo>[\w.-]{1,100}/[\w.-]{1,100}?)(?:\.git)?/?$")
_REMOTE = re.compile(r"transformers_modules|custom_nodes")


def _table() -> dict:
    return _load("j2_tables.toml")  # _load caches each file


# --- pip: an installed copy with no record of its files -------------------------------------------------------------

def uninstall(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    dist = seen.groups.get("dist") or ""
    if not _DIST.fullmatch(dist):
        return None
    name = dist.lower()
    conda = facts.conda or "anaconda" in seen.text.lower() or any("anaconda" in p.lower() for p in facts.paths)
    env = "conda" if conda else ("windows" if on_windows(seen, facts) else "posix")
    venv = {"conda": "conda create -n work python", "windows": r"python -m venv .venv && .venv\Scripts\activate",
            "posix": "python -m venv .venv && . .venv/bin/activate"}[env]
    commands = [f"python -m pip install --ignore-installed {name}", venv]
    return _answer("pip-no-distribution", name, "high", _say("uninst.title", dist=name),
                   _say("uninst.cause", dist=name),
                   _say("uninst.fix", dist=name, venv=venv), commands, seen, facts, 18, package="pip")


# --- a launcher's git clone of a repository that is gone -------------------------------------------------------------

def clone(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g, tab = seen.groups, _table()
    win = on_windows(seen, facts, paths=True)
    if g.get("url"):
        m = _REPO.match(g["url"])
        repo = m.group("repo") if m else None
        row = next((r for r in tab["gone"] if repo and r["repo"].lower() == repo.lower()), None)
        if row is None:
            return _missing(seen, facts, g["url"])
        return _webui(seen, facts, row["name"], row["env"], row, win)
    name = g.get("name", "").strip()
    env = tab["webui"].get(name)
    if env is None:
        return None
    row = next((r for r in tab["gone"] if r["env"] == env), None)
    return _webui(seen, facts, name, env, row, win)


def _webui(seen: Seen, facts: LogFacts, name: str, env: str, row: Optional[dict], win: bool) -> Answer:
    posix = not win and (facts.platform in ("linux", "macos", "wsl2") or any(p.startswith("/") for p in facts.paths))
    user = "webui-user.bat" if win else ("webui-user.sh" if posix else "webui-user.bat / webui-user.sh")
    if row is not None:
        value = row["use"]
        commands = ([f"set {env}={value}"] if not posix else []) + ([f"export {env}={value}"] if not win else [])
        return _answer("launcher", env, "high", _say("clone.title_gone", name=name, repo=row["repo"]),
                       _say("clone.cause_gone", name=name, repo=row["repo"]),
                       _say("clone.fix_gone", env=env, url=value, file=user), commands, seen, facts, 16)
    return _answer("launcher", env, "medium", _say("clone.title", name=name), _say("clone.cause", name=name),
                   _say("clone.fix", env=env, file=user), ["git ls-remote https://github.com"], seen, facts, 24)


def _missing(seen: Seen, facts: LogFacts, url: str) -> Optional[Answer]:
    if not re.fullmatch(r"https?://[A-Za-z0-9.-]{1,100}(?:/[A-Za-z0-9_.~-]{1,100}){1,6}/?", url):
        return None  # a URL with anything a shell would read otherwise stays out of the command
    return _answer("launcher", "git-repository", "medium", _say("clone.title_missing"), _say("clone.cause_missing"),
                   _say("clone.fix_missing", url=url), [f"git ls-remote {url}"], seen, facts, 26)


# --- transformers: a Cache member a release removed -----------------------------------------------------------------

def cache(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    cls, name = seen.groups.get("cls") or "Cache", seen.groups.get("name", "")
    row = next((r for r in _table()["cache"] if name in r["names"]), None)
    if row is None:
        return None
    frame = not seen.groups.get("cls")
    if frame and facts.root is not None and name not in facts.root[2]:
        return None  # the frame's line, but the error the traceback ends in is another one
    remote = any(_REMOTE.search(p) for p in facts.paths) or bool(_REMOTE.search(seen.text))
    what = f"{cls}.{name}"
    tail = _say("cache.fix_remote") if remote else ""
    if row["removed"]:
        pin = f'python -m pip install "transformers<{row["removed"]}"'
        summary = _say("cache.fix_pin", what=what, ver=row["removed"], use=row["use"]) + tail
        commands = [pin, "python -m pip show transformers"]
    else:
        summary = _say("cache.fix_older", what=what, use=row["use"]) + tail
        commands = ["python -m pip show transformers"]
    return _answer("import-name", what, "high", _say("cache.title", what=what), _say("cache.cause", what=what),
                   summary, commands, seen, facts, 78 if frame else 19, package="transformers")


# --- apt: NVIDIA packages from a repository that does not fit the system -------------------------------------------

_PKG = re.compile(r"(?P<pkg>[a-z0-9][a-z0-9_.+-]{0,80}) : $")
_CUDA_PKG = re.compile(r"(?:cuda|libcu|libnpp|libnv)[a-z-]{0,40}?-(?P<major>\d{1,2})-(?P<minor>\d)")
_DEB = re.compile(r"\+deb(?P<rel>\d{1,2})u")


def apt(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g, tab = seen.groups, _table()["apt"]
    if g.get("fixcmd"):
        return _answer("version-constraint", "apt-get -f install", "high", _say("apt.title_fix"), _say("apt.cause_fix"),
                       _say("apt.fix_fix"), ["sudo apt-get -f install"], seen, facts, 13, package="apt")
    dep = g.get("dep", "")
    if not re.fullmatch(r"[a-z0-9][a-z0-9.+-]{0,80}", dep):
        return None  # a Debian package name (ASCII): anything else stays out of the command
    m = _PKG.search(seen.text[:seen.start])
    pkg = m.group("pkg") if m else ""
    if g.get("none") and (dep in tab["cuda"] or re.fullmatch(r"cuda-\d{1,2}-\d", dep)):
        return _answer("version-constraint", dep, "high", _say("apt.title_cuda", dep=dep),
                       _say("apt.cause_cuda", dep=dep),
                       _say("apt.fix_cuda", dep=dep), ["sudo apt-get update", "sudo apt-get install -y cuda-drivers"],
                       seen, facts, 15, package="apt")
    if g.get("have") and dep in tab["core"]:
        deb = _DEB.search(g["have"])
        where = _say("apt.debian", rel=deb.group("rel")) if deb else _say("apt.this_release")
        key = "fix_release_debian" if deb else "fix_release"
        return _answer("version-constraint", dep, "high", _say("apt.title_release", dep=dep),
                       _say("apt.cause_release", dep=dep, want=g.get("want") or "?", have=g["have"], where=where),
                       _say(f"apt.{key}", rel=deb.group("rel") if deb else ""),
                       ["grep -rn nvidia /etc/apt/sources.list /etc/apt/sources.list.d/", "sudo apt-get update"],
                       seen, facts, 15, package="apt")
    c = _CUDA_PKG.fullmatch(pkg)
    if g.get("none") and c:
        ver = f"{c.group('major')}.{c.group('minor')}"
        return _answer("version-constraint", dep, "high", _say("apt.title_toolkit", pkg=pkg, dep=dep, ver=ver),
                       _say("apt.cause_toolkit", pkg=pkg, dep=dep, ver=ver), _say("apt.fix_toolkit", ver=ver),
                       ["cat /etc/os-release"], seen, facts, 17, package="apt")
    return _answer("version-constraint", dep, "medium", _say("apt.title", dep=dep), _say("apt.cause", dep=dep),
                   _say("apt.fix", dep=dep), ["apt-cache policy " + dep, "cat /etc/os-release"], seen, facts, 28,
                   package="apt")


# --- GPU out of memory: ComfyUI's message-only report; while loading the weights --------------------------------------

def comfy_oom(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    from . import h3  # h3's ComfyUI row (--lowvram / --novram / --reserve-vram, fp8 / GGUF weights)

    return h3.oom(replace(seen, groups={"report": "OutOfMemoryError"}), facts)


# The frame an out of memory stops in when the weights are being put on the GPU, not computed with: torch's
# Module._apply (.to() / .cuda() / .half()) and _load_from_state_dict in torch/nn/modules/module.py as the LAST frame
# (a compute OOM ends deeper, in the layer's forward: linear.py, functional.py ...), transformers' modeling_utils.py
# (from_pretrained's _load_state_dict_into_meta_model), accelerate's set_module_tensor_to_device (utils/modeling.py).
_LOADING = re.compile(r"torch[\\/]nn[\\/]modules[\\/]module\.py$|transformers[\\/]modeling_utils\.py$|"
                      r"accelerate[\\/]utils[\\/]modeling\.py$")


def oom_loading(facts: LogFacts) -> str:
    """A lead for errors.oom's CUDA reading when the out of memory came while loading the model onto the GPU; ''
    otherwise."""
    if not facts.paths or not _LOADING.search(facts.paths[-1]):
        return ""
    return _say("oom.loading") + " "


# --- a driver for an old CUDA: the last torch wheel built for it ----------------------------------------------------

def last_wheel(cuda: str) -> str:
    """Words naming the last torch wheel for a driver's old CUDA (j2_tables.toml [lastwheel]), '' when none is known;
    for explain's driver entry, where no current wheel runs (tune-j2)."""
    row = _table()["lastwheel"].get(cuda)
    if not isinstance(row, dict):
        return ""
    return _say("driver.last_wheel", cuda=cuda, torch=row["torch"], vision=row["vision"], tag=row["tag"],
                      pythons=row["pythons"])
