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


# ---------------------------------------------------------------- links: the folders that hold them
# Whoever can replace a link in the path re-points the cache: the link's owner, and also whoever
# can rename or create entries in the folder holding it (that folder is not on the resolved path,
# so the walk up from the real cache never met it). Real links, real modes; a real second uid
# (65534, through setpriv) where root is involved.

import shutil  # noqa: E402
import subprocess  # noqa: E402

NOBODY = 65534
needs_root = pytest.mark.skipif(ME != 0 or not shutil.which("setpriv"),
                                reason="needs root and setpriv (a real second uid owns the folder)")


def _as_nobody(*argv: str) -> None:
    subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv],
                   check=True, timeout=30)


def test_a_link_in_a_folder_others_can_write_is_not_safe(base):
    cache = _private(base / "private" / "cache")
    shared = _private(base / "shared")
    link = shared / "cache"
    os.symlink(cache, link)
    shared.chmod(0o777)  # anyone can replace "cache" by a link to their own folder
    _, v = _verdict_below(base, link)
    assert (v.safe, v.reason, v.path) == (False, "parent-writable", str(shared))
    _, v = _verdict_below(base, link / "inductor")  # not created yet: judged through the same link
    assert (v.safe, v.reason, v.path) == (False, "parent-writable", str(shared))
    shared.chmod(0o1777)  # sticky: others cannot rename or remove our link
    assert _verdict_below(base, link)[1].safe


def test_a_link_reached_through_another_link_is_judged_too(base):
    """a -> open/b -> cache: b is named nowhere in the path, and its folder is open to all."""
    cache = _private(base / "private" / "cache")
    opened = _private(base / "open")
    os.symlink(cache, opened / "b")
    opened.chmod(0o777)
    os.symlink(opened / "b", base / "private" / "a")
    _, v = _verdict_below(base, base / "private" / "a")
    assert (v.safe, v.reason, v.path) == (False, "parent-writable", str(opened))


def test_dot_dot_after_a_link_is_judged_where_the_kernel_goes(base):
    """lnk/../cache is the folder above lnk's target (the kernel resolves lnk first), not private/cache."""
    _private(base / "private" / "cache")
    opened = _private(base / "open")
    _private(opened / "sub")
    _private(opened / "cache")
    opened.chmod(0o777)
    os.symlink(opened / "sub", base / "private" / "lnk")
    path = f"{base}/private/lnk/../cache"
    v = safety.judge([r for r in safety.inspect(path) if r.path.startswith(str(base))], ME)
    assert (v.safe, v.reason, v.path) == (False, "parent-writable", str(opened))


@pytest.fixture
def box():
    """A folder root owns (0755) right under /tmp, so that uid 65534 can reach what is handed to it
    (pytest's basetemp is root's 0700)."""
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp(prefix="fd-safety-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@needs_root
def test_roots_link_in_a_folder_another_user_owns_is_not_safe(box):
    cache = _private(box / "private" / "cache")
    theirs = box / "theirs"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    os.symlink(cache, theirs / "cache")  # root's own link, to root's own private cache
    _, v = _verdict_below(box, theirs / "cache")
    assert (v.safe, v.reason, v.path, v.uid) == (False, "parent-foreign-owner", str(theirs), NOBODY)
    evil = box / "evil"
    evil.mkdir()
    os.chown(evil, NOBODY, NOBODY)
    _as_nobody("ln", "-sfn", str(evil), str(theirs / "cache"))  # what that user can do with it
    assert os.path.realpath(theirs / "cache") == str(evil)


@needs_root
def test_a_link_another_user_owns_behind_a_link_is_not_safe(box):
    """a (root's) -> b (uid 65534's link, in a root folder) -> cache: b is named nowhere in the path."""
    cache = _private(box / "private" / "cache")
    hop = _private(box / "hop")
    hop.chmod(0o755)
    os.symlink(cache, hop / "b")
    os.chown(hop / "b", NOBODY, NOBODY, follow_symlinks=False)
    os.symlink(hop / "b", box / "private" / "a")
    _, v = _verdict_below(box, box / "private" / "a")
    assert (v.safe, v.reason, v.path, v.uid) == (False, "link-foreign-owner", str(hop / "b"), NOBODY)
