#!/usr/bin/env python3
"""Analytics queries against ferrogrid and Hazelcast 5.6, same driver, same run (driver of
scripts/bench-analytics; issue 35's table).

One member at a time (tests/python/member.py), one official Python client (smart routing, one
thread). ENTRIES Compact `Trade` values (symbol of 10, qty int32 1..1000, price float64
1..1000, seeded) loaded with put_all in chunks of 1,000; then per query WARMUP untimed runs and
RUNS timed ones, sequential: the four of QUERIES on the map without indexes, then the five of
INDEXED once a SORTED index on price and a HASH index on qty are added, then the three of JOINS
(two joins and a LIMIT; `--only TEXT` runs the queries whose names contain TEXT, `--skip
TEXT` those that do not). Reports the median and p90 wall time per query and target (at least RUNS runs, and as many more as
fill MIN_SECONDS) and Hazelcast's median / the target's (above 1: faster than Hazelcast), and the member process's
CPU time (user and system, every thread, from /proc) per query over the timed runs, with
Hazelcast's over the target's. The answers of every target
are checked against each other.

Targets: `ferrogrid` (FERROGRID_BIN or target/release/ferrogrid), `ferrogrid:PATH` (another
binary, for a same-run A/B), `hazelcast`.
"""

import argparse
import os
import statistics
import sys
import time
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))
sys.path.insert(0, str(ROOT / "scripts" / "lib"))

import hazelcast  # noqa: E402
from hazelcast import predicate as p  # noqa: E402
from hazelcast.aggregator import count, int_sum  # noqa: E402
from hazelcast.config import IndexType  # noqa: E402

import member as member_mod  # noqa: E402
from hazelcast.core import HazelcastJsonValue  # noqa: E402
from sql_bench import SYMBOLS, TRADES_MAPPING, TradeSerializer, cpu_seconds, load_trades, percentile  # noqa: E402

QUERIES = [
    ("SQL GROUP BY symbol: COUNT, SUM(qty), AVG(price)",
     lambda c, m: sorted(tuple(r.get_object_with_index(i) for i in range(4)) for r in c.sql.execute(
         "SELECT symbol, COUNT(*), SUM(qty), AVG(price) FROM trades GROUP BY symbol").result())),
    ("SQL COUNT(*) WHERE price > ? AND qty < ?",
     lambda c, m: [r.get_object_with_index(0) for r in c.sql.execute(
         "SELECT COUNT(*) FROM trades WHERE price > ? AND qty < ?", 500.0, 100).result()]),
    ("map.aggregate(int_sum(qty), greater(price, 500.0))",
     lambda c, m: m.aggregate(int_sum("qty"), p.greater("price", 500.0))),
    ("map.values(between(price, 100, 110) and less(qty, 100))",
     lambda c, m: sorted((t.symbol, t.qty, t.price) for t in m.values(
         p.and_(p.between("price", 100.0, 110.0), p.less("qty", 100))))),
    # every passing row fetched, page by page (ferrogrid streams it: a round per page or so)
    ("SQL SELECT __key, price WHERE qty < ? (10%, every row fetched)",
     lambda c, m: sorted((r.get_object_with_index(0), r.get_object_with_index(1)) for r in c.sql.execute(
         "SELECT __key, price FROM trades WHERE qty < ?", 100).result())),
]


# Run after the queries above, once the map has a SORTED index on price and a HASH index on
# qty (both products use them for SQL and for predicates).
INDEXED = [
    ("SQL indexed equality: COUNT(*), SUM(price) WHERE qty = ?",
     lambda c, m: [tuple(r.get_object_with_index(i) for i in range(2)) for r in c.sql.execute(
         "SELECT COUNT(*), SUM(price) FROM trades WHERE qty = ?", 500).result()]),
    ("SQL indexed range: COUNT(*), SUM(qty) WHERE price BETWEEN ? AND ?",
     lambda c, m: [tuple(r.get_object_with_index(i) for i in range(2)) for r in c.sql.execute(
         "SELECT COUNT(*), SUM(qty) FROM trades WHERE price BETWEEN ? AND ?", 100.0, 102.0).result()]),
    ("map.aggregate(count(), equal(qty, 500)) (indexed)",
     lambda c, m: m.aggregate(count(), p.equal("qty", 500))),
    ("map.aggregate(int_sum(qty), between(price, 100, 102)) (indexed)",
     lambda c, m: m.aggregate(int_sum("qty"), p.between("price", 100.0, 102.0))),
    ("map.key_set(between(price, 100, 102)) (indexed)",
     lambda c, m: sorted(m.key_set(p.between("price", 100.0, 102.0)))),
]


# Run last: joins of the trades with a dimension map (`symbols`: each symbol's sector, JSON)
# and with themselves, narrowed by WHERE terms on each side; a LIMIT without ORDER BY.
SYMBOLS_MAPPING = (
    "CREATE MAPPING symbols (__key VARCHAR, sector VARCHAR) TYPE IMap "
    "OPTIONS ('keyFormat'='varchar', 'valueFormat'='json-flat')"
)
JOINS = [
    ("SQL JOIN symbols ON symbol = __key GROUP BY sector: COUNT, SUM(qty)",
     lambda c, m: sorted(tuple(r.get_object_with_index(i) for i in range(3)) for r in c.sql.execute(
         "SELECT s.sector, COUNT(*), SUM(t.qty) FROM trades t JOIN symbols s ON t.symbol = s.__key "
         "GROUP BY s.sector").result())),
    ("SQL self-JOIN ON a.qty = b.qty WHERE a.price < ? AND b.price < ?: COUNT(*)",
     lambda c, m: [r.get_object_with_index(0) for r in c.sql.execute(
         "SELECT COUNT(*) FROM trades a JOIN trades b ON a.qty = b.qty WHERE a.price < ? AND b.price < ?",
         5.0, 5.0).result()]),
    ("SQL SELECT * WHERE qty > ? LIMIT 10 (no ORDER BY)",
     lambda c, m: len([r for r in c.sql.execute("SELECT * FROM trades WHERE qty > ? LIMIT 10", 10).result()])),
]


def load_symbols(client):
    client.sql.execute(SYMBOLS_MAPPING).result()
    symbols = client.get_map("symbols").blocking()
    symbols.put_all({s: HazelcastJsonValue({"sector": "S%d" % (i % 3)}) for i, s in enumerate(SYMBOLS)})


def summary(answer):
    if isinstance(answer, list) and answer and isinstance(answer[0], tuple):
        return [tuple(round(float(x), 6) if isinstance(x, float) or hasattr(x, "as_tuple") else x for x in row)
                for row in answer]
    return answer


DEFAULT_BIN = os.environ.get("FERROGRID_BIN")


def run_target(spec, args):
    target, _, binary = spec.partition(":")
    os.environ.pop("FERROGRID_BIN", None)
    if binary or DEFAULT_BIN:
        os.environ["FERROGRID_BIN"] = binary or DEFAULT_BIN
    with member_mod.Member(target) as member:
        # (a long heartbeat timeout: Hazelcast building an index over 1,000,000 entries does not
        # answer heartbeats for longer than the default 60 s)
        client = hazelcast.HazelcastClient(cluster_members=[member.address], cluster_name=member_mod.CLUSTER_NAME,
                                           heartbeat_timeout=600, invocation_timeout=600,
                                           compact_serializers=[TradeSerializer()])
        try:
            client.sql.execute(TRADES_MAPPING).result()
            trades = client.get_map("trades").blocking()
            load_trades(trades, args.entries, args.seed)
            load_symbols(client)
            results = {}
            for name, query in selected(args):
                if name == INDEXED[0][0]:
                    trades.add_index(attributes=["price"], index_type=IndexType.SORTED)
                    trades.add_index(attributes=["qty"], index_type=IndexType.HASH)
                for _ in range(args.warmup):
                    answer = query(client, trades)
                # at least RUNS runs and MIN_SECONDS of them (the CPU clock ticks every 10 ms)
                times = []
                cpu_before, began = cpu_seconds(member.proc.pid), time.perf_counter()
                while len(times) < args.runs or time.perf_counter() - began < args.min_seconds:
                    start = time.perf_counter()
                    answer = query(client, trades)
                    times.append((time.perf_counter() - start) * 1000)
                cpu = (cpu_seconds(member.proc.pid) - cpu_before) * 1000 / len(times)
                results[name] = (statistics.median(times), percentile(times, 90), summary(answer), cpu)
                print("%-24s %-55s median %8.1f ms" % (spec, name, results[name][0]), file=sys.stderr)
            return results
        finally:
            client.shutdown()


def selected(args):
    """The queries to run (those whose names contain --only and not --skip, when given), in order."""
    return [(name, query) for name, query in QUERIES + INDEXED + JOINS
            if args.only in name and not (args.skip and args.skip in name)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", default=os.environ.get("BENCH_TARGETS", "ferrogrid,hazelcast,ferrogrid"))
    parser.add_argument("--entries", type=int, default=int(os.environ.get("BENCH_ENTRIES", "200000")))
    parser.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", "10")))
    parser.add_argument("--warmup", type=int, default=int(os.environ.get("BENCH_WARMUP", "3")))
    parser.add_argument("--min-seconds", type=float, default=float(os.environ.get("BENCH_MIN_SECONDS", "2")))
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--only", default="", help="run only the queries whose names contain this")
    parser.add_argument("--skip", default="", help="skip the queries whose names contain this")
    args = parser.parse_args()
    targets = args.targets.split(",")
    measured = [(t, run_target(t, args)) for t in targets]
    reference = next((r for t, r in measured if t == "hazelcast"), None)
    first = measured[0][1]
    for name, _ in selected(args):
        answers = {t: r[name][2] for t, r in measured}
        if any(a != first[name][2] for a in answers.values()):
            print("answers differ for %s: %r" % (name, answers), file=sys.stderr)
    print("| target | query | median ms | p90 ms | Hazelcast median / this | server CPU ms per query | Hazelcast's / this |")
    print("|---|---|---|---|---|---|---|")
    for target, results in measured:
        for name, _ in selected(args):
            median, p90, _, cpu = results[name]
            ratio = "%.2f×" % (reference[name][0] / median) if reference else ""
            cpu_ratio = "%.2f×" % (reference[name][3] / cpu) if reference and cpu > 0 else ""
            print("| %s | %s | %.1f | %.1f | %s | %.2f | %s |" % (target, name, median, p90, ratio, cpu, cpu_ratio))


if __name__ == "__main__":
    main()
