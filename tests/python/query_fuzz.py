"""Random differential queries: a seeded generator of entries (HazelcastJsonValue documents and
Compact records with missing and null fields) and of predicates and aggregations over them,
and the outcome a member gives for each (its keys, its aggregate, or the error's class).

`scripts/diff-queries` runs the same seeds against ferrogrid and a real Hazelcast 5.6.0 member
and reports every difference; `test_query_fuzz.py` holds a member to the outcomes Hazelcast gave
for one seed (`query_fuzz_seed1.json`, written by `scripts/diff-queries --record`).

A case is deterministic in its seed: the same seed gives the same entries and the same cases in
the same order (Python's `random.Random`).
"""

import hashlib
import json
import random

from hazelcast import aggregator as agg
from hazelcast import predicate as p
from hazelcast.config import IndexType
from hazelcast.core import HazelcastJsonValue
from hazelcast.serialization.api import CompactReader, CompactSerializer, CompactWriter

ENTRIES = 120
NAMES = ["ann", "bob", "Cem", "dora", "eve", "Ali", "ali", "zed", "a_b", "x%y"]
JSON_ATTRIBUTES = ["age", "score", "name", "a.d.e", "tags[any]", "active", "missing.x"]
COMPACT_ATTRIBUTES = ["age", "score", "name", "active"]


class Rec:
    def __init__(self, age, score, name, active):
        self.age, self.score, self.name, self.active = age, score, name, active


class RecSerializer(CompactSerializer[Rec]):
    def read(self, reader: CompactReader) -> Rec:
        return Rec(
            reader.read_nullable_int32("age"),
            reader.read_nullable_float64("score"),
            reader.read_string("name"),
            reader.read_nullable_boolean("active"),
        )

    def write(self, writer: CompactWriter, obj: Rec) -> None:
        writer.write_nullable_int32("age", obj.age)
        writer.write_nullable_float64("score", obj.score)
        writer.write_string("name", obj.name)
        writer.write_nullable_boolean("active", obj.active)

    def get_type_name(self) -> str:
        return "ferrogrid.fuzz.Rec"

    def get_class(self):
        return Rec


def _maybe(rng, value):
    """The value, or None (null), or the marker for a missing field."""
    roll = rng.random()
    return "<missing>" if roll < 0.1 else None if roll < 0.2 else value


def json_entries(rng):
    entries = {}
    for i in range(ENTRIES):
        fields = {
            "age": _maybe(rng, rng.randint(-20, 80)),
            "score": _maybe(rng, round(rng.uniform(-50, 50), 2)),
            "name": _maybe(rng, rng.choice(NAMES)),
            "active": _maybe(rng, rng.random() < 0.5),
            "tags": _maybe(rng, [rng.randint(0, 9) for _ in range(rng.randint(0, 3))]),
        }
        shape = rng.random()
        if shape < 0.6:
            fields["a"] = {"d": {"e": _maybe(rng, rng.randint(-40, 40))}}
        elif shape < 0.8:
            fields["a"] = {"d": {}}
        doc = {key: value for key, value in fields.items() if value != "<missing>"}
        if "a" in doc and doc["a"]["d"].get("e") == "<missing>":
            doc["a"]["d"].pop("e")
        entries["j%03d" % i] = HazelcastJsonValue(json.dumps(doc))
    return entries


def compact_entries(rng):
    entries = {}
    for i in range(ENTRIES):
        nullable = lambda value: None if rng.random() < 0.2 else value  # noqa: E731
        entries["c%03d" % i] = Rec(
            nullable(rng.randint(-20, 80)),
            nullable(round(rng.uniform(-50, 50), 2)),
            nullable(rng.choice(NAMES)),
            nullable(rng.random() < 0.5),
        )
    return entries


def _operand(rng, attribute):
    if attribute in ("age", "a.d.e", "tags[any]", "missing.x"):
        return rng.randint(-45, 85)
    if attribute == "score":
        return round(rng.uniform(-60, 60), 1)
    if attribute == "active":
        return rng.random() < 0.5
    return rng.choice(NAMES)


def _leaf(rng, attributes):
    attribute = rng.choice(attributes)
    value = _operand(rng, attribute)
    kinds = ["equal", "not_equal", "greater", "greater_or_equal", "less", "less_or_equal", "between", "in"]
    if attribute == "name":
        kinds += ["like", "ilike", "regex"]
    if attribute == "active":
        kinds = ["equal", "not_equal", "in"]
    kind = rng.choice(kinds)
    if kind == "between":
        other = _operand(rng, attribute)
        low, high = sorted([value, other])
        return "between(%s, %r, %r)" % (attribute, low, high), p.between(attribute, low, high)
    if kind == "in":
        values = [_operand(rng, attribute) for _ in range(rng.randint(1, 3))]
        return "in(%s, %r)" % (attribute, values), p.in_(attribute, *values)
    if kind in ("like", "ilike"):
        pattern = rng.choice(["a%", "%e", "_o%", "A%", "%", "x\\%y"])
        return "%s(%s, %r)" % (kind, attribute, pattern), getattr(p, kind)(attribute, pattern)
    if kind == "regex":
        pattern = rng.choice(["a.*", ".*e", "[A-Z].*", "ali|bob"])
        return "regex(%s, %r)" % (attribute, pattern), p.regex(attribute, pattern)
    if kind in ("equal", "not_equal") and rng.random() < 0.1:
        value = None
    return "%s(%s, %r)" % (kind, attribute, value), getattr(p, kind)(attribute, value)


def predicate(rng, attributes, depth=0):
    """A random predicate and its description."""
    roll = rng.random()
    if depth >= 3 or roll < 0.45:
        return _leaf(rng, attributes)
    if roll < 0.65:
        text, inner = predicate(rng, attributes, depth + 1)
        return "not(%s)" % text, p.not_(inner)
    parts = [predicate(rng, attributes, depth + 1) for _ in range(rng.randint(2, 3))]
    name = "and" if roll < 0.85 else "or"
    combine = p.and_ if name == "and" else p.or_
    return "%s(%s)" % (name, ", ".join(text for text, _ in parts)), combine(*(inner for _, inner in parts))


AGGREGATIONS = [
    ("count", lambda: agg.count()),
    ("int_sum(age)", lambda: agg.int_sum("age")),
    ("max(score)", lambda: agg.max_("score")),
    ("min(age)", lambda: agg.min_("age")),
    ("double_sum(score)", lambda: agg.double_sum("score")),
    ("number_avg(age)", lambda: agg.number_avg("age")),
    ("distinct(name)", lambda: agg.distinct("name")),
    ("count(name)", lambda: agg.count("name")),
]


def cases(seed, count):
    """(map kind, description, query) for `count` cases: key sets and aggregations with a
    predicate, over the JSON map and the Compact map."""
    rng = random.Random(seed * 7919 + 1)
    made = []
    for _ in range(count):
        kind = "json" if rng.random() < 0.7 else "compact"
        text, pred = predicate(rng, JSON_ATTRIBUTES if kind == "json" else COMPACT_ATTRIBUTES)
        if rng.random() < 0.75:
            made.append((kind, "key_set " + text, ("keys", pred)))
        else:
            name, make = rng.choice(AGGREGATIONS)
            made.append((kind, "aggregate %s %s" % (name, text), ("aggregate", pred, make)))
    return made


def load(client, seed, prefix, indexed=False):
    """Fills the two maps of `seed`; returns {"json": map, "compact": map}. `indexed`: each map
    has a SORTED and a HASH index on every attribute its predicates name and composite ones on
    pairs of them (added half before the entries, half after: an index both built from entries
    and filed by puts)."""
    rng = random.Random(seed)
    maps = {"json": client.get_map("%s-json-%d" % (prefix, seed)).blocking()}
    maps["compact"] = client.get_map("%s-compact-%d" % (prefix, seed)).blocking()
    indexes = [(kind, [attribute], index_type)
               for kind, attributes in (("json", JSON_ATTRIBUTES), ("compact", COMPACT_ATTRIBUTES))
               for attribute in attributes for index_type in (IndexType.SORTED, IndexType.HASH)]
    # composite indexes on each pair of neighbouring attributes (no `[any]`: a composite index
    # cannot have one), used by an AND of equalities on both
    for kind, attributes in (("json", JSON_ATTRIBUTES), ("compact", COMPACT_ATTRIBUTES)):
        plain = [attribute for attribute in attributes if "[any]" not in attribute]
        indexes += [(kind, list(pair), index_type) for pair in zip(plain, plain[1:])
                    for index_type in (IndexType.HASH, IndexType.SORTED)]
    half = len(indexes) // 2
    for kind, attributes, index_type in indexes[:half] if indexed else []:
        maps[kind].add_index(attributes=attributes, index_type=index_type)
    maps["json"].put_all(json_entries(rng))
    maps["compact"].put_all(compact_entries(rng))
    for kind, attributes, index_type in indexes[half:] if indexed else []:
        maps[kind].add_index(attributes=attributes, index_type=index_type)
    return maps


def outcome(maps, kind, query):
    """What the member answered: sorted keys, the aggregate's repr, or the error class."""
    try:
        if query[0] == "keys":
            return "keys " + " ".join(sorted(maps[kind].key_set(query[1])))
        value = maps[kind].aggregate(query[2](), query[1])
        if isinstance(value, float):
            value = round(value, 9)
        if isinstance(value, (set, frozenset, list)):
            value = sorted(value, key=repr)
        return "value %r" % (value,)
    except Exception as error:  # noqa: BLE001 - the error's class is the outcome
        return "error " + type(error).__name__


def digest(text):
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def assert_as_recorded(results, recorded, what):
    """Fails listing every (description, outcome) of `results` that differs from `recorded`
    (a `--record` file of scripts/diff-queries: the description and digest per case)."""
    differing = [
        "%s -> %s" % (text, outcome[:200])
        for (text, outcome), (recorded_text, expected) in zip(results, recorded["outcomes"])
        if text != recorded_text or digest(outcome) != expected
    ]
    assert len(results) == len(recorded["outcomes"]) == recorded["cases"]
    assert not differing, "%d of %d %s differ from Hazelcast's answers:\n%s" % (
        len(differing),
        len(results),
        what,
        "\n".join(differing[:20]),
    )


def run(client, seed, count, prefix="fuzz", indexed=False):
    """[(description, outcome)] of every case of `seed` (over indexed maps if `indexed`); the
    maps are destroyed after."""
    maps = load(client, seed, prefix, indexed)
    try:
        return [(text, outcome(maps, kind, query)) for kind, text, query in cases(seed, count)]
    finally:
        for proxy in maps.values():
            proxy.destroy()
