"""flexdoctor.safety: one verdict on a cache location, over real directories (modes, sticky bit,
symlinks, paths not created yet) and over recorded rows (owners, which need root to fake)."""

from __future__ import annotations

import os

import pytest

from flexdoctor import safety
from flexdoctor.facts import PathStat

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX owners and modes")
ME = os.geteuid() if hasattr(os, "geteuid") else None


def _private(path):
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


@pytest.fixture
def base(tmp_path):
    """tmp_path's own parents (pytest's basetemp, /tmp) are whatever the machine has; judge the
    part we build by starting the walk at a private directory we own."""
    return _private(tmp_path / "base")


def _verdict_below(base, path):
    v = safety.verdict(str(path))
    # Above `base` the walk meets the machine's own /tmp and /; only our rows matter here.
    rows = [r for r in safety.inspect(str(path)) if r.path.startswith(str(base))]
    return v, safety.judge(rows, ME)


def test_private_cache_is_safe(base):
    cache = _private(base / "cache")
    _, v = _verdict_below(base, cache)
    assert v.safe and v.reason == "ok"


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757, 0o1777])
def test_cache_dir_writable_by_others_is_unsafe_even_sticky(base, mode):
    cache = _private(base / "cache")
    cache.chmod(mode)
    _, v = _verdict_below(base, cache)
    assert not v.safe and v.reason == "writable-by-others" and v.path == str(cache) and v.mode == mode


def test_parent_writable_without_sticky_is_unsafe_with_sticky_fine(base):
    shared = _private(base / "shared")
    cache = _private(shared / "me" / "cache")
    shared.chmod(0o777)
    _, v = _verdict_below(base, cache)
    assert not v.safe and v.reason == "parent-writable" and v.path == str(shared)
    shared.chmod(0o1777)
    _, v = _verdict_below(base, cache)
    assert v.safe


def test_path_not_created_yet_is_judged_by_nearest_existing_ancestor(base):
    shared = _private(base / "shared")
    target = shared / "not" / "yet"
    rows = safety.inspect(str(target))
    assert rows[0].path == str(shared) and rows[0].role == "ancestor"
    assert not os.path.exists(shared / "not")  # judging creates nothing
    shared.chmod(0o777)
    _, v = _verdict_below(base, target)
    assert not v.safe and v.reason == "parent-writable" and v.path == str(shared)
    # the ancestor is judged as a parent: sticky is fine there
    shared.chmod(0o1777)
    assert _verdict_below(base, target)[1].safe


def test_symlinked_cache_is_judged_where_it_really_is(base):
    real = _private(base / "real")
    (base / "open").mkdir()
    (base / "open").chmod(0o777)
    cache = _private(base / "open" / "cache")
    link = real / "link"
    os.symlink(cache, link)
    rows = safety.inspect(str(link))
    assert [r.role for r in rows][:2] == ["link", "target"] and rows[1].path == str(cache)
    _, v = _verdict_below(base, link)
    assert not v.safe and v.reason == "parent-writable" and v.path == str(base / "open")


def test_recorded_rows_owners():
    rows = [PathStat("/home/me/c", 1000, 0o700, "target"), PathStat("/home/me", 1000, 0o755, "parent"),
            PathStat("/home", 0, 0o755, "parent"), PathStat("/", 0, 0o755, "parent")]
    assert safety.judge(rows, 1000).safe
    assert safety.judge(rows, 1001).reason == "foreign-owner"
    assert safety.judge([PathStat("/t", 0, 0o755, "target")], 1000).safe  # root is trusted
    bad = safety.judge([PathStat("/l", 1001, 0o777, "link")] + rows, 1000)
    assert (bad.safe, bad.reason, bad.path, bad.uid) == (False, "link-foreign-owner", "/l", 1001)
    assert safety.judge([], 1000).reason == "cannot-inspect"
    assert safety.judge(rows, None).reason == "not-checked"


@pytest.mark.skipif(ME == 0, reason="root can stat anything")
def test_unreadable_parent_is_cannot_inspect(base):
    locked = _private(base / "locked")
    _private(locked / "cache")
    locked.chmod(0o000)
    try:
        v = safety.verdict(str(locked / "cache"))
        assert (v.safe, v.reason) == (False, "cannot-inspect")
    finally:
        locked.chmod(0o700)


def test_a_directory_that_cannot_be_searched_is_not_read_as_absent(base, monkeypatch):
    """What a non-root user meets under a mode-000 directory (root would see through it)."""
    cache = _private(base / "locked" / "cache")
    real_stat = os.stat

    def stat(path, *a, **k):
        if str(path) == str(cache):
            raise PermissionError(13, "Permission denied", str(path))
        return real_stat(path, *a, **k)

    monkeypatch.setattr(os, "stat", stat)
    v = safety.verdict(str(cache))
    assert (v.safe, v.reason, v.path) == (False, "cannot-inspect", str(cache))
