#!/usr/bin/env python3
"""Memory one running SQL query takes on a ferrogrid member (driver of scripts/bench-sql-memory).

For each query a new member (tests/python/member.py: memory a query freed stays with the
allocator and would hide the next query's), ENTRIES Compact `Trade` values
(scripts/lib/sql_bench.py) loaded with put_all; then RUNS times: the member's peak resident set
is reset (`/proc/PID/clear_refs` 5), the query runs and every page is fetched, and the peak
(VmHWM) less the resident set before the query (VmRSS) is its memory. The first run's is
reported (later runs reuse what the first left with the allocator), with the rows it returned
and the bytes per row. Last, a member with `max-sql-bytes-per-query: --bound-mib` shows the
bound holding: the streamed full scan answers every row within it (a round of partitions per
page), the sorted one, which must hold every row, fails with the bound's error; both peaks are
reported.

Hazelcast is not measured: its heap is reserved up front and collected when the JVM chooses,
so its resident set does not show one query's memory.
"""

import argparse
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))
sys.path.insert(0, str(ROOT / "scripts" / "lib"))

import hazelcast  # noqa: E402

import member as member_mod  # noqa: E402
from sql_bench import TRADES_MAPPING, TradeSerializer, load_trades  # noqa: E402

QUERIES = [
    ("SELECT * FROM trades (every row, streamed)", "SELECT * FROM trades"),
    ("SELECT * FROM trades ORDER BY price (every row, held to sort)", "SELECT * FROM trades ORDER BY price"),
    ("SELECT __key, price FROM trades WHERE qty < 100 (10%)", "SELECT __key, price FROM trades WHERE qty < 100"),
    ("SELECT * FROM trades ORDER BY price LIMIT 10", "SELECT * FROM trades ORDER BY price LIMIT 10"),
    ("SELECT symbol, COUNT(*), SUM(qty), AVG(price) GROUP BY symbol",
     "SELECT symbol, COUNT(*), SUM(qty), AVG(price) FROM trades GROUP BY symbol"),
    ("SELECT COUNT(*) FROM trades WHERE price > 500", "SELECT COUNT(*) FROM trades WHERE price > 500"),
]


def status(pid, field):
    for line in pathlib.Path("/proc/%d/status" % pid).read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def measure(pid, client, statement):
    """(peak bytes above the resident set before, rows, error text or None)."""
    time.sleep(0.2)
    pathlib.Path("/proc/%d/clear_refs" % pid).write_text("5")
    before = status(pid, "VmRSS")
    rows, error = 0, None
    try:
        for _ in client.sql.execute(statement).result():
            rows += 1
    except Exception as failure:  # noqa: BLE001 - the bound's error is an outcome
        error = str(failure)
    return status(pid, "VmHWM") - before, rows, error


def run(args, config_extra, queries):
    member = member_mod.Member("ferrogrid")
    config = member.workdir / "hazelcast.yaml"
    config.write_text(member_mod.hazelcast_yaml(member.port) + config_extra)
    member.config = config
    with member:
        client = hazelcast.HazelcastClient(cluster_members=[member.address], cluster_name=member_mod.CLUSTER_NAME,
                                           compact_serializers=[TradeSerializer()])
        try:
            client.sql.execute(TRADES_MAPPING).result()
            trades = client.get_map("trades").blocking()
            load_trades(trades, args.entries, args.seed)
            pid = member.proc.pid
            loaded = status(pid, "VmRSS")
            results = []
            for name, statement in queries:
                runs = [measure(pid, client, statement) for _ in range(args.runs)]
                peak = runs[0][0]
                results.append((name, peak, runs[-1][1], runs[-1][2]))
                print("%-62s peak +%7.1f MiB, %d rows" % (name, peak / 2**20, runs[-1][1]), file=sys.stderr)
            return loaded, results
        finally:
            client.shutdown()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--bound-mib", type=int, default=8)
    parser.add_argument("--seed", type=int, default=35)
    args = parser.parse_args()
    loaded, results = None, []
    for query in QUERIES:
        loaded, result = run(args, "", [query])
        results += result
    bound = args.bound_mib * 2**20
    extra = "ferrogrid:\n  limits:\n    max-sql-bytes-per-query: %d\n" % bound
    _, bounded = run(args, extra, QUERIES[:2])
    print("member resident after loading %d entries: %.1f MiB" % (args.entries, loaded / 2**20))
    print("| query | rows | peak above the resident set | bytes per row |")
    print("|---|---|---|---|")
    for name, peak, rows, _ in results:
        per_row = "%.0f" % (peak / rows) if rows >= 1000 else ""
        print("| %s | %d | %.1f MiB | %s |" % (name, rows, peak / 2**20, per_row))
    for name, peak, rows, error in bounded:
        outcome = "fails: ...%s" % error[-110:] if error else "%d rows" % rows
        print("| %s, max-sql-bytes-per-query %d MiB | %s | %.1f MiB | |" % (name, args.bound_mib, outcome, peak / 2**20))


if __name__ == "__main__":
    main()
