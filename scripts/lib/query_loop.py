#!/usr/bin/env python3
"""One predicate-API query called in a loop by one official Python client against one member
(driver of scripts/bench-query-loop): wall time and member CPU (user and system, every thread,
from /proc) per call, for queries too short for bench-analytics' medians to tell apart.

ENTRIES Compact trades (sql_bench.load_trades), a SORTED index on price and a HASH index on
qty; per query WARMUP calls, then CALLS timed ones.
"""

import argparse
import os
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))
sys.path.insert(0, str(ROOT / "scripts" / "lib"))

import hazelcast  # noqa: E402
from hazelcast import predicate as p  # noqa: E402
from hazelcast.aggregator import count, distinct, int_sum  # noqa: E402
from hazelcast.config import IndexType  # noqa: E402

import member as member_mod  # noqa: E402
from sql_bench import TradeSerializer, cpu_seconds, load_trades  # noqa: E402

QUERIES = {
    "get": lambda m: m.get(5),
    "size": lambda m: m.size(),
    "count": lambda m: m.aggregate(count()),
    "distinct": lambda m: m.aggregate(distinct("qty")),
    "aggeq": lambda m: m.aggregate(count(), p.equal("qty", 500)),
    "aggnone": lambda m: m.aggregate(count(), p.equal("qty", 5000)),
    "aggrange": lambda m: m.aggregate(int_sum("qty"), p.between("price", 100.0, 102.0)),
    "keyset": lambda m: m.key_set(p.between("price", 100.0, 102.0)),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("queries", nargs="+", choices=sorted(QUERIES))
    parser.add_argument("--target", default="ferrogrid", help="ferrogrid, ferrogrid:PATH or hazelcast")
    parser.add_argument("--entries", type=int, default=200_000)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    target, _, binary = args.target.partition(":")
    if binary:
        os.environ["FERROGRID_BIN"] = binary
    with member_mod.Member(target) as member:
        client = hazelcast.HazelcastClient(cluster_members=[member.address], cluster_name=member_mod.CLUSTER_NAME,
                                           invocation_timeout=600, compact_serializers=[TradeSerializer()])
        try:
            trades = client.get_map("trades").blocking()
            load_trades(trades, args.entries, 35)
            trades.add_index(attributes=["price"], index_type=IndexType.SORTED)
            trades.add_index(attributes=["qty"], index_type=IndexType.HASH)
            for name in args.queries:
                query = QUERIES[name]
                for _ in range(args.warmup):
                    query(trades)
                cpu, began = cpu_seconds(member.proc.pid), time.perf_counter()
                for _ in range(args.calls):
                    query(trades)
                wall = (time.perf_counter() - began) * 1000 / args.calls
                cpu = (cpu_seconds(member.proc.pid) - cpu) * 1000 / args.calls
                print("%s %-9s %9.3f ms wall %9.3f ms member CPU per call" % (args.target, name, wall, cpu), flush=True)
        finally:
            client.shutdown()


if __name__ == "__main__":
    main()
