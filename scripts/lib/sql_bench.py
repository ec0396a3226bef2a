#!/usr/bin/env python3
"""SQL against ferrogrid and Hazelcast 5.6, same driver, same run (driver of scripts/bench-sql).

One member at a time (tests/python/member.py: ferrogrid's release binary, or Hazelcast 5.6.0
with hazelcast-sql on its class path and Jet enabled; both with tests/python/member-config.yaml),
one official Python client with smart routing, one thread. Per target:

  1. point lookups: `pts` (__key INT, name VARCHAR, age INT; json-flat values), POINT_ENTRIES
     entries loaded with put_all; POINT_OPS sequential `SELECT name FROM pts WHERE __key = ?`
     with random keys, then POINT_OPS sequential map.get of the same keys. Latency of each
     operation as the client sees it (p50/p99/mean) and the member's CPU per operation.
  2. aggregation over Compact values: `trades` (__key INT, symbol VARCHAR, qty INT, price
     DOUBLE; Compact type `Trade`), ENTRIES entries over 10 symbols loaded with put_all;
     AGG_RUNS sequential runs of each GROUP BY query. Median and p90 wall time, queries/s and
     the member's CPU-seconds per query (utime+stime of /proc/<pid>/stat around the timed runs).

Every measured loop is warmed up first (POINT_WARMUP operations, AGG_WARMUP queries). The
aggregates are checked against what the loader wrote. The targets run in the order given
(default ferrogrid, hazelcast, ferrogrid: the second ferrogrid run shows the run-to-run noise).
Prints a Markdown table at the end.
"""

import argparse
import gc
import json
import os
import pathlib
import random
import shutil
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))

import hazelcast  # noqa: E402
from hazelcast.core import HazelcastJsonValue  # noqa: E402
from hazelcast.serialization.api import CompactReader, CompactSerializer, CompactWriter  # noqa: E402

import member as member_mod  # noqa: E402

SYMBOLS = ["SYM%02d" % i for i in range(10)]
LOAD_CHUNK = 1_000


class Trade:
    __slots__ = ("symbol", "qty", "price")

    def __init__(self, symbol, qty, price):
        self.symbol, self.qty, self.price = symbol, qty, price


class TradeSerializer(CompactSerializer[Trade]):
    def read(self, reader: CompactReader) -> Trade:
        return Trade(reader.read_string("symbol"), reader.read_int32("qty"), reader.read_float64("price"))

    def write(self, writer: CompactWriter, obj: Trade) -> None:
        writer.write_string("symbol", obj.symbol)
        writer.write_int32("qty", obj.qty)
        writer.write_float64("price", obj.price)

    def get_type_name(self) -> str:
        return "Trade"

    def get_class(self):
        return Trade


POINT_MAPPING = (
    "CREATE MAPPING pts (__key INT, name VARCHAR, age INT) TYPE IMap "
    "OPTIONS ('keyFormat'='int', 'valueFormat'='json-flat')"
)
POINT_SELECT = "SELECT name FROM pts WHERE __key = ?"
TRADES_MAPPING = (
    "CREATE MAPPING trades (__key INT, symbol VARCHAR, qty INT, price DOUBLE) TYPE IMap "
    "OPTIONS ('keyFormat'='int', 'valueFormat'='compact', 'valueCompactTypeName'='Trade')"
)
AGG_QUERIES = [
    ("GROUP BY symbol: COUNT(*)", "SELECT symbol, COUNT(*) FROM trades GROUP BY symbol"),
    ("GROUP BY symbol: COUNT(*), SUM(qty)", "SELECT symbol, COUNT(*), SUM(qty) FROM trades GROUP BY symbol"),
]


def cpu_seconds(pid):
    """utime + stime of the process, in seconds (clock ticks of 10 ms)."""
    with open("/proc/%d/stat" % pid) as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_trades(trades, entries, seed):
    """Fills `trades` with `entries` seeded Compact trades (symbol of SYMBOLS, qty 1..1000, price
    1..1000), put_all in chunks of LOAD_CHUNK (the analytics and memory benchmarks' data)."""
    rng = random.Random(seed)
    for start in range(0, entries, LOAD_CHUNK):
        trades.put_all({k: Trade(rng.choice(SYMBOLS), rng.randint(1, 1000), rng.uniform(1, 1000))
                        for k in range(start, min(start + LOAD_CHUNK, entries))})


def machine_ticks():
    """(busy, steal) clock ticks of the whole machine from /proc/stat (busy excludes idle,
    iowait and steal)."""
    with open("/proc/stat") as stat:
        f = [int(x) for x in stat.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = f[:8]
    return user + nice + system + irq + softirq, steal


class Window:
    """A timed window: the member's CPU, this (client) process's CPU, and what the rest of the
    machine used meanwhile (other processes, and steal by the hypervisor), in CPU-seconds."""

    def __init__(self, pid):
        self.pid = pid
        self.tick = os.sysconf("SC_CLK_TCK")
        self.wall0, self.member0, self.client0 = time.perf_counter(), cpu_seconds(pid), self._own()
        self.busy0, self.steal0 = machine_ticks()

    @staticmethod
    def _own():
        t = os.times()
        return t.user + t.system

    def close(self):
        busy, steal = machine_ticks()
        self.wall = time.perf_counter() - self.wall0
        self.member = cpu_seconds(self.pid) - self.member0
        self.client = self._own() - self.client0
        self.steal = (steal - self.steal0) / self.tick
        self.other = max(0.0, (busy - self.busy0) / self.tick - self.member - self.client)
        return self

    def disturbance(self):
        """Cores' worth of CPU used by other processes (+ steal) during the window."""
        return (self.other + self.steal) / self.wall


DISTURBED = 0.15  # cores; above this a window is flagged


def percentile(values, q):
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(round(q / 100.0 * len(ordered) + 0.5))))
    return ordered[rank - 1]


def sql_rows(client, sql, *params):
    with client.sql.execute(sql, *params).result() as result:
        return [[row.get_object_with_index(i) for i in range(len(row.metadata.columns))] for row in result]


def sql_update(client, sql):
    with client.sql.execute(sql).result() as result:
        return result.update_count()


def log(*parts):
    print("[bench-sql]", *parts, file=sys.stderr, flush=True)


def timed_ops(op, keys):
    """Runs op(k) for each key; returns the per-operation latencies in seconds."""
    latencies = []
    append, clock = latencies.append, time.perf_counter
    gc.collect()
    for k in keys:
        t0 = clock()
        op(k)
        append(clock() - t0)
    return latencies


def point_phase(client, pid, args, target):
    m = client.get_map("pts").blocking()
    started = time.perf_counter()
    for start in range(0, args.point_entries, LOAD_CHUNK):
        m.put_all(
            {
                k: HazelcastJsonValue(json.dumps({"name": "name-%d" % k, "age": 20 + k % 50}))
                for k in range(start, min(start + LOAD_CHUNK, args.point_entries))
            }
        )
    log("%s: loaded %d pts entries in %.1f s" % (target, args.point_entries, time.perf_counter() - started))

    rng = random.Random(args.seed)
    keys = [rng.randrange(args.point_entries) for _ in range(args.point_ops)]
    warm = [rng.randrange(args.point_entries) for _ in range(args.point_warmup)]

    def sql_op(k):
        with client.sql.execute(POINT_SELECT, k).result() as r:
            rows = list(r)
        if len(rows) != 1:
            raise AssertionError("SELECT ... WHERE __key = %d answered %d rows" % (k, len(rows)))

    def get_op(k):
        if m.get(k) is None:
            raise AssertionError("map.get(%d) answered None" % k)

    def sql_check():
        sql_update(client, POINT_MAPPING)
        got = sql_rows(client, POINT_SELECT, keys[0])
        if got != [["name-%d" % keys[0]]]:
            raise AssertionError("SELECT name FROM pts WHERE __key = %d answered %r" % (keys[0], got))

    def get_check():
        got = m.get(keys[0])
        if got is None or json.loads(got.to_string())["name"] != "name-%d" % keys[0]:
            raise AssertionError("map.get(%d) answered %r" % (keys[0], got))

    out = {}
    for name, check, op in (("sql", sql_check, sql_op), ("get", get_check, get_op)):
        try:  # a failure of one kind is reported, and the other is still measured
            check()
            for k in warm:
                op(k)
            window = Window(pid)
            lat = timed_ops(op, keys)
            window.close()
        except Exception as e:  # noqa: BLE001
            out[name] = {"error": "%s: %s" % (type(e).__name__, e)}
            log("%s: point %s FAILED: %s" % (target, name, out[name]["error"]))
            continue
        out[name] = {
            "p50_us": percentile(lat, 50) * 1e6,
            "p99_us": percentile(lat, 99) * 1e6,
            "mean_us": statistics.fmean(lat) * 1e6,
            "cpu_us_per_op": window.member / len(keys) * 1e6,
            "client_cpu_us_per_op": window.client / len(keys) * 1e6,
            "other_cores": window.disturbance(),
        }
        log("%s: point %s: %s" % (target, name, json.dumps({k: round(v, 1) for k, v in out[name].items()})))
    return out


def agg_phase(client, pid, args, target):
    m = client.get_map("trades").blocking()
    rng = random.Random(args.seed + 1)
    expected = {s: [0, 0] for s in SYMBOLS}
    started = time.perf_counter()
    for start in range(0, args.entries, LOAD_CHUNK):
        batch = {}
        for k in range(start, min(start + LOAD_CHUNK, args.entries)):
            symbol, qty = SYMBOLS[k % len(SYMBOLS)], rng.randrange(1, 1000)
            batch[k] = Trade(symbol, qty, round(rng.uniform(1.0, 500.0), 2))
            expected[symbol][0] += 1
            expected[symbol][1] += qty
        m.put_all(batch)
    log("%s: loaded %d Compact trades in %.1f s" % (target, args.entries, time.perf_counter() - started))
    sql_update(client, TRADES_MAPPING)

    out = {}
    for name, sql in AGG_QUERIES:
        try:
            rows = sql_rows(client, sql)
            got = {row[0]: [int(v) for v in row[1:]] for row in rows}
            columns = sql.split(" FROM ")[0].count(",")  # the aggregates after `symbol`
            want = {s: expected[s][:columns] for s in SYMBOLS}
            if got != want:
                raise AssertionError("%s answered %r, expected %r" % (sql, got, want))
            for _ in range(args.agg_warmup):
                sql_rows(client, sql)
            walls = []
            gc.collect()
            window = Window(pid)
            for _ in range(args.agg_runs):
                t0 = time.perf_counter()
                sql_rows(client, sql)
                walls.append(time.perf_counter() - t0)
            window.close()
            out[name] = {
                "median_ms": statistics.median(walls) * 1e3,
                "p90_ms": percentile(walls, 90) * 1e3,
                "qps": len(walls) / sum(walls),
                "cpu_ms_per_query": window.member / len(walls) * 1e3,
                "client_cpu_ms_per_query": window.client / len(walls) * 1e3,
                "other_cores": window.disturbance(),
            }
            log("%s: %s: %s" % (target, name, json.dumps({k: round(v, 2) for k, v in out[name].items()})))
        except Exception as e:  # noqa: BLE001 - report it and go on with what works
            out[name] = {"error": "%s: %s" % (type(e).__name__, e)}
            log("%s: %s FAILED: %s" % (target, name, out[name]["error"]))
    return out


def run_target(target, args):
    member = member_mod.Member(target)
    log("starting %s on %s (log %s)" % (target, member.address, member.log_path))
    member.start()
    pid = member.proc.pid
    client = None
    result = {"target": target}
    try:
        client = hazelcast.HazelcastClient(
            cluster_members=[member.address],
            cluster_name=member_mod.CLUSTER_NAME,
            cluster_connect_timeout=30,
            smart_routing=True,
            compact_serializers=[TradeSerializer()],
        )
        for phase_name, phase in (("point", point_phase), ("agg", agg_phase)):
            try:
                result[phase_name] = phase(client, pid, args, target)
            except Exception as e:  # noqa: BLE001
                result[phase_name] = {"error": "%s: %s" % (type(e).__name__, e)}
                log("%s: %s phase FAILED: %s" % (target, phase_name, result[phase_name]["error"]))
    finally:
        if client is not None:
            client.shutdown()
        alive = member.alive()
        member.stop()
        if not alive:
            log("%s member died; log %s:\n%s" % (target, member.log_path, member.log_tail()))
        else:
            shutil.rmtree(member.workdir, ignore_errors=True)
    return result


def fmt(v, spec=",.0f"):
    return format(v, spec) if isinstance(v, (int, float)) else str(v)


def table_row(width, *cells):
    """Prints one Markdown table row of `width` columns: the cells given (a `|` in them escaped),
    then empty ones."""
    cells = [str(cell).replace("|", "\\|") for cell in cells] + [""] * (width - len(cells))
    print("| " + " | ".join(cells) + " |")


def report(results, args):
    labels, seen = [], {}
    total = {t: sum(1 for r in results if r["target"] == t) for t in {r["target"] for r in results}}
    for r in results:
        seen[r["target"]] = seen.get(r["target"], 0) + 1
        labels.append(r["target"] + (" #%d" % seen[r["target"]] if total[r["target"]] > 1 else ""))
    hz = next((r for r in results if r["target"] == "hazelcast"), None)

    print()
    print(
        "Point lookups: %s sequential operations per kind, random keys over %s entries (json-flat), "
        "one client thread; latency as the client sees it, CPU per operation of the member process "
        "and of the client (Python) process."
        % (format(args.point_ops, ","), format(args.point_entries, ","))
    )
    print()
    print("| target | operation | p50 µs | p99 µs | mean µs | server CPU µs/op | client CPU µs/op | SQL / get (p50) | SQL / get (mean) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, r in zip(labels, results):
        point = r.get("point", {})
        if "error" in point:
            table_row(9, label, "(failed)", point["error"])
            continue
        sql, get = point["sql"], point["get"]
        for kind, op_name, d in (("sql", "`SELECT name … WHERE __key = ?`", sql), ("get", "`map.get(k)`", get)):
            if "error" in d:
                table_row(9, label, op_name, "failed: " + d["error"])
                continue
            ratios = ()
            if kind == "sql" and "error" not in get:
                ratios = ("**%.2f**" % (sql["p50_us"] / get["p50_us"]), "**%.2f**" % (sql["mean_us"] / get["mean_us"]))
            table_row(
                9, label, op_name, fmt(d["p50_us"]), fmt(d["p99_us"]), fmt(d["mean_us"]),
                fmt(d["cpu_us_per_op"], ",.1f"), fmt(d["client_cpu_us_per_op"]), *ratios,
            )

    print()
    print(
        "Aggregation over Compact values: %s entries, 10 symbols, %d timed runs per query after %d warm-up runs."
        % (format(args.entries, ","), args.agg_runs, args.agg_warmup)
    )
    print()
    print("| target | query | median ms | p90 ms | queries/s | server CPU-ms/query | median vs Hazelcast | CPU/query vs Hazelcast |")
    print("|---|---|---|---|---|---|---|---|")
    for label, r in zip(labels, results):
        agg = r.get("agg", {})
        if "error" in agg:
            table_row(8, label, "(failed)", agg["error"])
            continue
        for name, _ in AGG_QUERIES:
            d = agg.get(name, {"error": "not run"})
            if "error" in d:
                table_row(8, label, name, "failed: " + d["error"])
                continue
            h = (hz or {}).get("agg", {}).get(name, {})
            vs_med = "%.2f×" % (d["median_ms"] / h["median_ms"]) if "median_ms" in h else ""
            vs_cpu = "%.2f×" % (d["cpu_ms_per_query"] / h["cpu_ms_per_query"]) if h.get("cpu_ms_per_query") else ""
            table_row(
                8, label, name, fmt(d["median_ms"], ",.1f"), fmt(d["p90_ms"], ",.1f"), fmt(d["qps"], ",.1f"),
                fmt(d["cpu_ms_per_query"], ",.1f"), vs_med, vs_cpu,
            )
    print()
    print("(ratios vs Hazelcast: ferrogrid / Hazelcast; below 1 means ferrogrid is faster / cheaper)")
    disturbed = []
    for label, r in zip(labels, results):
        for phase in ("point", "agg"):
            for name, d in r.get(phase, {}).items():
                if isinstance(d, dict) and d.get("other_cores", 0) > DISTURBED:
                    disturbed.append("%s %s %s: %.2f cores" % (label, phase, name, d["other_cores"]))
    print()
    if disturbed:
        print("WARNING: other processes (or steal) used CPU during these timed windows; their numbers are")
        print("not comparable: " + "; ".join(disturbed))
    else:
        worst = max((d.get("other_cores", 0) for r in results for ph in ("point", "agg")
                     for d in r.get(ph, {}).values() if isinstance(d, dict)), default=0)
        print("Quiet machine: at most %.2f cores used by other processes (+ steal) in any timed window." % worst)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    env = os.environ.get
    parser.add_argument("--quick", action="store_true", help="a small run (2,000 point ops, 10,000 trades, 5 runs)")
    parser.add_argument("--targets", default=env("BENCH_TARGETS", "ferrogrid,hazelcast,ferrogrid"))
    parser.add_argument("--point-ops", type=int, default=None)
    parser.add_argument("--point-entries", type=int, default=None)
    parser.add_argument("--point-warmup", type=int, default=None)
    parser.add_argument("--entries", type=int, default=None)
    parser.add_argument("--agg-runs", type=int, default=None)
    parser.add_argument("--agg-warmup", type=int, default=None)
    parser.add_argument("--seed", type=int, default=int(env("BENCH_SEED", "18")))
    parser.add_argument("--json", default=env("BENCH_JSON"), help="also write the raw results here")
    args = parser.parse_args()
    defaults = {  # name: (env var, full, quick)
        "point_ops": ("BENCH_POINT_OPS", 20_000, 2_000),
        "point_entries": ("BENCH_POINT_ENTRIES", 10_000, 10_000),
        "point_warmup": ("BENCH_POINT_WARMUP", 1_000, 200),
        "entries": ("BENCH_ENTRIES", 100_000, 10_000),
        "agg_runs": ("BENCH_AGG_RUNS", 20, 5),
        "agg_warmup": ("BENCH_AGG_WARMUP", 3, 2),
    }
    for name, (var, full, quick) in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, int(env(var, quick if args.quick else full)))

    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    results = [run_target(t, args) for t in targets]
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    report(results, args)
    settings = ["%s=%s" % (var, getattr(args, name)) for name, (var, full, quick) in defaults.items()
                if getattr(args, name) != (quick if args.quick else full)]
    if targets != ["ferrogrid", "hazelcast", "ferrogrid"]:
        settings.append("BENCH_TARGETS=%s" % ",".join(targets))
    if args.seed != 18:
        settings.append("BENCH_SEED=%d" % args.seed)
    print()
    print("Reproduce: %s" % " ".join(settings + ["scripts/bench-sql"] + (["--quick"] if args.quick else [])))
    failed = any("error" in r.get(p, {"error": 1}) for r in results for p in ("point", "agg")) or any(
        "error" in d for r in results for p in ("point", "agg") for d in r.get(p, {}).values() if isinstance(d, dict)
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
