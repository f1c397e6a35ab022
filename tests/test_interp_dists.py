"""The interpreter probe reads installed versions with a plain folder scan (worker/_interp_probe.py
``_Dists``) instead of importing importlib.metadata: it must answer exactly as importlib.metadata
does, for every distribution installed here and for the layouts importlib.metadata knows."""

from __future__ import annotations

import importlib.metadata as md
import sys

import pytest

from flexdoctor.worker import _interp_probe as ip


def _installed() -> list[str]:
    return sorted({d.metadata["Name"] for d in md.distributions() if d.metadata["Name"]})


def test_same_answers_as_importlib_metadata_for_everything_installed():
    names = _installed()
    assert len(names) > 20 and "torch" in names  # the test environment: a real site-packages
    fast = ip._Dists()
    for name in names:
        assert fast.version(name) == md.version(name), name
        assert fast.requires(name) == md.requires(name), name
        assert fast.version(name.upper().replace("-", ".")) == md.version(name), name  # normalized
    assert fast.distribution("torch").locate_file("torch/version.py") == str(
        md.distribution("torch").locate_file("torch/version.py"))
    with pytest.raises(LookupError):
        fast.version("no-such-distribution-xyz")


def test_collect_is_unchanged_by_the_fast_reader(monkeypatch):
    fast = ip.collect()
    monkeypatch.setattr(ip, "_Dists", None)  # force the importlib.metadata path
    monkeypatch.setattr(ip, "_metadata", lambda: md)
    assert ip.collect() == fast
    assert fast["torch"]["version"] == md.version("torch")


def _dist(root, folder, meta_name="METADATA", text="Metadata-Version: 2.1\nName: x\nVersion: 1.0\n"):
    d = root / folder
    d.mkdir(parents=True)
    (d / meta_name).write_text(text)
    return d


def test_layouts_first_on_path_wins(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    _dist(a, "Foo_Bar-1.0.dist-info", text="Name: Foo_Bar\nVersion: 1.0\nRequires-Dist: triton==3.6.0; "
                                            "platform_system == \"Linux\"\nRequires-Dist: filelock\n\nbody: x\n")
    _dist(b, "foo.bar-2.0.dist-info", text="Name: foo.bar\nVersion: 2.0\n")
    _dist(b, "legacy-0.9-py3.11.egg-info", "PKG-INFO", "Metadata-Version: 1.1\nName: legacy\nVersion: 0.9\n")
    egg = tmp_path / "Eggy-3.1-py3.11.egg"
    _dist(egg, "EGG-INFO", "PKG-INFO", "Name: Eggy\nVersion: 3.1\n")
    (tmp_path / "zeta.dist-info").mkdir()  # no METADATA at all
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(a), str(b), str(egg), str(tmp_path)])
    fast = ip._Dists()
    for name in ("foo-bar", "Foo.Bar", "legacy", "eggy", "zeta"):
        assert fast.version(name) == md.version(name), name
        assert fast.requires(name) == md.requires(name), name
    assert fast.version("foo-bar") == "1.0" and fast.version("eggy") == "3.1"
    assert fast.version("zeta") is None


def test_falls_back_to_importlib_metadata_for_a_zip_or_another_finder(tmp_path, monkeypatch):
    assert isinstance(ip._metadata(), ip._Dists)
    archive = tmp_path / "deps.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    monkeypatch.setattr(sys, "path", sys.path + [str(archive)])
    assert ip._metadata() is md

    class Finder:
        @staticmethod
        def find_distributions(context=None):
            return iter(())

    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(archive)])
    monkeypatch.setattr(sys, "meta_path", sys.meta_path + [Finder])
    assert ip._metadata() is md
