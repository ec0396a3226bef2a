# Shared by scripts/bench-tenants and scripts/bench-tenants-pinned (sourced; needs $work, $port).

# The two tenants' test: StringStringMapTest, 32 threads, 10% puts, 10,000 keys, 100-byte values.
tenant_test_files() {
  local tenant
  for tenant in a b; do
    cat > "$work/$tenant.properties" <<P
class=StringStringMapTest
threadCount=32
keyLength=20
valueLength=100
keyCount=10000
valueCount=1000
putProb=0.1
basename=map
probe-getLatency=latency
probe-putLatency=latency
P
  done
}

# Starts a member with tenants a (alice) and b (bob), weight 1 each; sets $member to its pid.
#   start_tenants_member <fair-scheduling> [extra ferrogrid: lines] [command prefix...]
start_tenants_member() {
  local fair=$1 extra=$2
  shift 2
  cat > "$work/member.yaml" <<Y
hazelcast:
  properties: {hazelcast.io.balancer.interval.seconds: -1}
ferrogrid:
  metrics: {file: '', http-enabled: false}
  fair-scheduling: $fair
$extra
  tenants:
    - {name: a, username: alice, password: a-secret, weight: 1}
    - {name: b, username: bob, password: b-secret, weight: 1}
Y
  "$@" target/release/ferrogrid member --port "$port" --no-port-auto-increment --config "$work/member.yaml" \
    >"$work/member-$fair.log" 2>&1 &
  member=$!
  for _ in $(seq 100); do
    if (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null; then break; fi
    sleep 0.1
  done
}
