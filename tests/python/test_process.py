"""The member as a process: it stops on SIGTERM.

test_stops_on_sigterm starts a SECOND member of the same target on another free port, so it
does not disturb the session's member.
"""

import os
import signal
import subprocess

import pytest

from conftest import new_client
from member import Member


@pytest.mark.timeout(240)
def test_stops_on_sigterm(member, tmp_path):
    if os.environ.get("FERROGRID_ADDRESS"):
        pytest.skip("FERROGRID_ADDRESS given: not starting members")
    second = Member(member.target, workdir=tmp_path)
    second.start()
    try:
        c = new_client(second)
        try:
            mp = c.get_map("sigterm").blocking()
            mp.put("k", "v")
            assert mp.get("k") == "v"
        finally:
            c.shutdown()
        second.proc.send_signal(signal.SIGTERM)
        try:
            second.proc.wait(60)
        except subprocess.TimeoutExpired:
            pytest.fail("the member did not exit within 60 s of SIGTERM; log:\n%s" % second.log_tail())
    finally:
        second.stop()
