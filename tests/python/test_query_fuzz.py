"""Random queries (`query_fuzz.py`), bounded: seed 1's 300 predicates and aggregations over
JSON documents and Compact records with missing and null fields, each answered as a real
Hazelcast 5.6.0 member answered it (`query_fuzz_seed1.json`: a digest of its keys, aggregate
or error class per case, written by `scripts/diff-queries --seeds 1 --cases 300 --record
tests/python/query_fuzz_seed1.json`). `scripts/diff-queries` runs more seeds against both
members and prints the cases that differ in full (`--indexed`: over indexed maps).
"""

import json
import pathlib

import query_fuzz
from conftest import unique_name

RECORDED = json.loads((pathlib.Path(__file__).parent / "query_fuzz_seed1.json").read_text())


def test_random_queries_answer_as_hazelcast_did(client_factory, request):
    client = client_factory(compact_serializers=[query_fuzz.RecSerializer()])
    results = query_fuzz.run(client, RECORDED["seed"], RECORDED["cases"], prefix=unique_name(request, "fuzz"))
    query_fuzz.assert_as_recorded(results, RECORDED, "cases")


def test_random_queries_over_indexed_maps_answer_as_without_indexes(client_factory, request):
    # An index only narrows what a query reads: the same cases over maps with a SORTED and a
    # HASH index on every attribute they name (some built from entries, some filed by puts)
    # answer as Hazelcast answered them without indexes.
    client = client_factory(compact_serializers=[query_fuzz.RecSerializer()])
    prefix = unique_name(request, "fuzz")
    results = query_fuzz.run(client, RECORDED["seed"], RECORDED["cases"], prefix=prefix, indexed=True)
    query_fuzz.assert_as_recorded(results, RECORDED, "cases over indexed maps")
