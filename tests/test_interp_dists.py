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


ODD = {  # file name -> (file or folder, its metadata text): each read as importlib.metadata reads it
    "legacy_file-2.4.1-py3.11.egg-info": ("file", "Name: legacy_file\nVersion: 2.4.1\n"),
    "emptymeta-1.0.dist-info": ("dir", {"METADATA": "", "PKG-INFO": "Name: emptymeta\nVersion: 1.0\n"}),
    "trailing-1.0.dist-info": ("dir", {"METADATA": "Name: trailing\nVersion: 2.1.0 \t\n"}),
    "folded-1.0.dist-info": ("dir", {"METADATA": "Name: folded\nVersion: 1.0\nRequires-Dist: triton\n"
                                                 "  ==3.6.0 ; platform_system == 'Linux'\nRequires-Dist: x\n"}),
    "spaced-1.0.dist-info": ("dir", {"METADATA": "Name: spaced\nVersion : 1.0\n"}),
    "noheader-1.0.dist-info": ("dir", {"METADATA": "Name: noheader\nthis is no header\nVersion: 3\n"}),
    "leading-1.0.dist-info": ("dir", {"METADATA": " Version: 9\nName: leading\n"}),
    "blankcont-1.0.dist-info": ("dir", {"METADATA": "Name: blankcont\nLicense: MIT\n   \n  more\nVersion: 5\n"}),
    "seps-1.0.dist-info": ("dir", {"METADATA": "Name: seps\nSummary: a\u2028b\x0bc\nVersion: 6\n"}),
    "crlf-1.0.dist-info": ("dir", {"METADATA": "Name: crlf\r\nVersion: 7\r\nRequires-Dist: a\r\n\r\nbody"}),
    "envelope-1.0.dist-info": ("dir", {"METADATA": "From someone\nName: envelope\nVersion: 8\n"}),
    "reqtxt-1.0.egg-info": ("dir", {"PKG-INFO": "Name: reqtxt\nVersion: 1.0\n",
                                     "requires.txt": "filelock\n\n[cuda]\ntriton==3.6.0\n"}),
}


def test_odd_layouts_and_headers_read_as_importlib_reads_them(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    for name, (kind, content) in ODD.items():
        if kind == "file":
            (site / name).write_text(content)
        else:
            (site / name).mkdir()
            for f, text in content.items():
                (site / name / f).write_bytes(text.encode("utf-8"))
    monkeypatch.setattr(sys, "path", [str(site)])
    fast = ip._Dists()
    for name in ODD:
        dist = name.partition("-")[0]
        assert fast.version(dist) == md.version(dist), dist
        assert fast.requires(dist) == md.requires(dist), dist
    assert fast.version("legacy_file") == "2.4.1"  # the distutils single-file .egg-info


def test_bad_utf8_and_an_empty_path_entry(tmp_path, monkeypatch):
    (tmp_path / "bad-1.0.dist-info").mkdir()
    (tmp_path / "bad-1.0.dist-info" / "METADATA").write_bytes(b"Name: bad\nVersion: 1\xff\n")
    (tmp_path / "torch-2.0.dist-info").mkdir()
    (tmp_path / "torch-2.0.dist-info" / "METADATA").write_text("Name: torch\nVersion: 2.0\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [""])
    with pytest.raises(UnicodeDecodeError):
        md.version("bad")
    with pytest.raises(UnicodeDecodeError):
        ip._Dists().version("bad")  # collect() leaves such a package out, as it did
    assert ip._Dists().distribution("torch").locate_file("torch/version.py") == str(
        md.distribution("torch").locate_file("torch/version.py"))
