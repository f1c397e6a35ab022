"""`explain -` at a terminal (issue 21.10): a prompt on stderr, and the first Ctrl-D ends the paste
(it needed two, with no prompt). Run on a real pseudo-terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(not hasattr(pty, "openpty"), reason="needs a POSIX pseudo-terminal")
def test_one_ctrl_d_ends_the_paste_and_a_prompt_is_shown():
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FLEXDOCTOR_LANG": "en"}
    proc = subprocess.Popen([sys.executable, "-m", "flexdoctor", "explain", "-"], stdin=slave,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    os.close(slave)
    try:
        time.sleep(1.0)
        os.write(master, b"RuntimeError: No available kernel. Aborting execution.\n")
        os.write(master, b"\x04")  # one end-of-file, typed at the start of a line
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    assert proc.returncode == 0, err
    assert "FDE701" in out.decode()
    assert "Ctrl-D" in err.decode()
