# Shared by the raw-driver benchmarks, scripts/bench-member and scripts/bench-scaling-raw
# (sourced from the repository root): the Hazelcast jar, the load example, a work directory
# removed on exit, and one member at a time in $server.

jar="$HOME/.m2/repository/com/hazelcast/hazelcast/5.6.0/hazelcast-5.6.0.jar"
[ -f "$jar" ] || mvn -q dependency:get -Dartifact=com.hazelcast:hazelcast:5.6.0
# Two builds: with `--example`, cargo builds only the example of the packages named.
cargo build -q --release -p ferrogrid
cargo build -q --release -p ferrogrid-member --example load
work=$(mktemp -d)
cleanup() { [ -n "${server:-}" ] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

wait_port() { for _ in $(seq 1 600); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }

# One ferrogrid member ($FERROGRID_BIN, default target/release/ferrogrid) on 127.0.0.1:<port>
# (more member options may follow); sets $server once
# it has its partition table ("member started": the port alone accepts a little earlier, and the
# raw driver does not retry the errors it would get then).
start_ferrogrid() { # port [options...]
  local port=$1
  shift
  "${FERROGRID_BIN:-./target/release/ferrogrid}" member --port "$port" --no-port-auto-increment "$@" >/dev/null 2>"$work/ferrogrid.log" &
  server=$!
  for _ in $(seq 1 600); do grep -q "member started" "$work/ferrogrid.log" && return 0; sleep 0.1; done
  return 1
}

# One Hazelcast 5.6.0 member on 127.0.0.1:<port> (no multicast); sets $server once it listens.
start_hazelcast() { # port
  cat > "$work/hazelcast.yaml" <<YAML
hazelcast:
  cluster-name: dev
  network:
    port: {port: $1, auto-increment: false}
    join:
      multicast: {enabled: false}
      tcp-ip: {enabled: true, member-list: ["127.0.0.1:$1"]}
    interfaces: {enabled: true, interfaces: ["127.0.0.1"]}
YAML
  java -Xms1g -Xmx1g -Dhazelcast.config="$work/hazelcast.yaml" -Dhazelcast.phone.home.enabled=false \
    -cp "$jar" com.hazelcast.core.server.HazelcastMemberStarter >"$work/hazelcast.log" 2>&1 &
  server=$!
  wait_port "$1"
}
