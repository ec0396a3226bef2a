"""Runs last (file name): the session member's log after every other test."""

import pytest


@pytest.mark.ferrogrid_only
def test_zz_member_log_has_no_panic(request):
    # the session member has served every other test by now
    proc = request.config._ferrogrid_member
    if proc is None:
        pytest.skip("no member started by this session (FERROGRID_ADDRESS?)")
    text = proc.log_text(max_bytes=50_000_000)
    panics = [line for line in text.splitlines() if "panicked at" in line]
    assert panics == [], "ferrogrid panicked (log %s):\n%s" % (proc.log_path, "\n".join(panics[:20]))
