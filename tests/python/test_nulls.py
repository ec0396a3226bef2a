"""None keys and values.

The Python client 5.7.0 rejects None itself, before sending anything, with a plain
AssertionError("key can't be None" / "value can't be None" / ...). These tests pin that down
and check that the map and the connection are unaffected afterwards.
"""

import pytest

CALLS = [
    pytest.param(lambda m: m.get(None), "key", id="get-key"),
    pytest.param(lambda m: m.put(None, "v"), "key", id="put-key"),
    pytest.param(lambda m: m.put("k", None), "value", id="put-value"),
    pytest.param(lambda m: m.set(None, "v"), "key", id="set-key"),
    pytest.param(lambda m: m.set("k", None), "value", id="set-value"),
    pytest.param(lambda m: m.remove(None), "key", id="remove-key"),
    pytest.param(lambda m: m.delete(None), "key", id="delete-key"),
    pytest.param(lambda m: m.contains_key(None), "key", id="contains_key"),
    pytest.param(lambda m: m.contains_value(None), "value", id="contains_value"),
    pytest.param(lambda m: m.put_if_absent(None, "v"), "key", id="put_if_absent-key"),
    pytest.param(lambda m: m.put_if_absent("k", None), "value", id="put_if_absent-value"),
    pytest.param(lambda m: m.replace("k", None), "value", id="replace-value"),
    pytest.param(lambda m: m.replace_if_same("k", "v", None), "new_value", id="replace_if_same-new"),
    pytest.param(lambda m: m.remove_if_same("k", None), "value", id="remove_if_same-value"),
    pytest.param(lambda m: m.put_transient(None, "v"), "key", id="put_transient-key"),
    pytest.param(lambda m: m.try_put(None, "v"), "key", id="try_put-key"),
    pytest.param(lambda m: m.try_remove(None), "key", id="try_remove-key"),
    pytest.param(lambda m: m.evict(None), "key", id="evict-key"),
    pytest.param(lambda m: m.get_entry_view(None), "key", id="get_entry_view-key"),
    pytest.param(lambda m: m.put_all({None: "v"}), "key", id="put_all-key"),
    pytest.param(lambda m: m.put_all({"k": None}), "value", id="put_all-value"),
    pytest.param(lambda m: m.get_all(None), "keys", id="get_all-none"),
    pytest.param(lambda m: m.get_all(["a", None]), "key", id="get_all-key"),
]


@pytest.mark.parametrize("call, what", CALLS)
def test_none_is_rejected_by_the_client(m, call, what):
    m.put("k", "v")
    with pytest.raises(AssertionError) as info:
        call(m)
    assert str(info.value) == "%s can't be None" % what
    # nothing changed and the client still works
    assert m.get("k") == "v"
    assert m.size() == 1
