#!/usr/bin/env bash
# Starts (or stops) the Redis deployments the HA tests run against, from the
# redis-server binary alone (Debian's redis-server 7.0 is enough):
#
#   cluster   3 masters + 3 replicas, one replica per master,
#             ports CLUSTER_BASE+1..+6 (default 7001-7006)
#   sentinel  a master, a replica and one sentinel (quorum 1),
#             ports SENTINEL_BASE+1, +2 (default 7101, 7102) and SENTINEL_PORT (26379)
#
# Usage: .ci/redis-ha.sh start|stop|env [cluster|sentinel|all]
# "start" prints the TEST_REDIS_CLUSTER_URL / TEST_REDIS_SENTINEL_URL lines
# to export; "env" prints them without starting anything. Everything lives
# under HA_DIR (default /tmp/shopbot-redis-ha) and listens on 127.0.0.1 only.
set -euo pipefail

HA_DIR=${HA_DIR:-/tmp/shopbot-redis-ha}
CLUSTER_BASE=${CLUSTER_BASE:-7000}
SENTINEL_BASE=${SENTINEL_BASE:-7100}
SENTINEL_PORT=${SENTINEL_PORT:-26379}
MASTER_NAME=${MASTER_NAME:-shopbot}
what=${2:-all}

up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_up() {
  for _ in $(seq 100); do up "$1" && return 0; sleep 0.1; done
  echo "redis on port $1 did not start (see $HA_DIR/$1/log)" >&2; return 1
}
# wait_for PORT CMD... EXPECTED: poll until the reply contains EXPECTED.
wait_for() {
  local port=$1 want=${!#}; shift
  local cmd=("${@:1:$#-1}")
  for _ in $(seq 300); do
    if redis-cli -p "$port" "${cmd[@]}" 2>/dev/null | grep -q -- "$want"; then return 0; fi
    sleep 0.1
  done
  echo "port $port: '${cmd[*]}' never answered '$want'" >&2; return 1
}

server() { # PORT extra args...
  local port=$1; shift
  mkdir -p "$HA_DIR/$port"
  if up "$port"; then return 0; fi
  redis-server --daemonize yes --bind 127.0.0.1 --port "$port" --dir "$HA_DIR/$port" \
    --logfile "$HA_DIR/$port/log" --pidfile "$HA_DIR/$port/pid" --save "" \
    --appendonly yes --appendfsync everysec --maxmemory-policy noeviction "$@" >/dev/null
  wait_up "$port"
}

env_cluster() {
  echo "TEST_REDIS_CLUSTER_URL=redis://127.0.0.1:$((CLUSTER_BASE + 1))?addr=127.0.0.1:$((CLUSTER_BASE + 2))&addr=127.0.0.1:$((CLUSTER_BASE + 3))"
}
env_sentinel() {
  echo "TEST_REDIS_SENTINEL_URL=redis://127.0.0.1:$SENTINEL_PORT?master_name=$MASTER_NAME"
}

start_cluster() {
  local ports=()
  for i in 1 2 3 4 5 6; do
    local port=$((CLUSTER_BASE + i))
    ports+=("127.0.0.1:$port")
    server "$port" --cluster-enabled yes --cluster-config-file nodes.conf \
      --cluster-node-timeout 2000 --cluster-replica-validity-factor 0
  done
  if ! redis-cli -p $((CLUSTER_BASE + 1)) cluster info | grep -q 'cluster_state:ok'; then
    redis-cli --cluster create "${ports[@]}" --cluster-replicas 1 --cluster-yes >"$HA_DIR/cluster-create.log"
  fi
  for i in 1 2 3 4 5 6; do wait_for $((CLUSTER_BASE + i)) cluster info cluster_state:ok; done
  # Every replica has caught up with its master before the tests write.
  for i in 1 2 3 4 5 6; do
    local port=$((CLUSTER_BASE + i))
    if redis-cli -p "$port" role | head -1 | grep -q slave; then
      wait_for "$port" info replication master_link_status:up
    fi
  done
  env_cluster
}

# sentinel_ready: the sentinel names a master and knows a replica whose
# link to it is up (after a failover the two servers have swapped roles).
sentinel_ready() {
  redis-cli -p "$SENTINEL_PORT" sentinel replicas "$MASTER_NAME" 2>/dev/null |
    grep -A1 '^master-link-status$' | grep -q '^ok$'
}

start_sentinel() {
  local m=$((SENTINEL_BASE + 1)) r=$((SENTINEL_BASE + 2))
  mkdir -p "$HA_DIR/$SENTINEL_PORT"
  if up "$SENTINEL_PORT" && up "$m" && up "$r"; then
    # Already running, maybe failed over: wait until it is whole again.
    for _ in $(seq 300); do sentinel_ready && { env_sentinel; return 0; }; sleep 0.1; done
    echo "the running sentinel setup has no healthy replica" >&2; return 1
  fi
  server "$m"
  server "$r" --replicaof 127.0.0.1 "$m"
  wait_for "$r" info replication master_link_status:up
  if ! up "$SENTINEL_PORT"; then
    cat >"$HA_DIR/$SENTINEL_PORT/sentinel.conf" <<EOF
bind 127.0.0.1
port $SENTINEL_PORT
daemonize yes
dir $HA_DIR/$SENTINEL_PORT
logfile $HA_DIR/$SENTINEL_PORT/log
pidfile $HA_DIR/$SENTINEL_PORT/pid
sentinel monitor $MASTER_NAME 127.0.0.1 $m 1
sentinel down-after-milliseconds $MASTER_NAME 2000
sentinel failover-timeout $MASTER_NAME 10000
sentinel parallel-syncs $MASTER_NAME 1
EOF
    redis-server "$HA_DIR/$SENTINEL_PORT/sentinel.conf" --sentinel >/dev/null
    wait_up "$SENTINEL_PORT"
  fi
  # The sentinel knows the replica before a test asks it to fail over.
  for _ in $(seq 300); do sentinel_ready && { env_sentinel; return 0; }; sleep 0.1; done
  echo "the sentinel does not see the replica" >&2; return 1
}

stop_port() {
  local port=$1
  if up "$port"; then redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; fi
  for _ in $(seq 50); do up "$port" || break; sleep 0.1; done
}

stop() {
  if [ "$what" = all ] || [ "$what" = sentinel ]; then
    stop_port "$SENTINEL_PORT"
    stop_port $((SENTINEL_BASE + 1)); stop_port $((SENTINEL_BASE + 2))
    rm -rf "${HA_DIR:?}/$SENTINEL_PORT" "${HA_DIR:?}/$((SENTINEL_BASE + 1))" "${HA_DIR:?}/$((SENTINEL_BASE + 2))"
  fi
  if [ "$what" = all ] || [ "$what" = cluster ]; then
    for i in 1 2 3 4 5 6; do stop_port $((CLUSTER_BASE + i)); rm -rf "${HA_DIR:?}/$((CLUSTER_BASE + i))"; done
  fi
}

case "${1:-}" in
start)
  mkdir -p "$HA_DIR"
  if [ "$what" = all ] || [ "$what" = cluster ]; then start_cluster; fi
  if [ "$what" = all ] || [ "$what" = sentinel ]; then start_sentinel; fi
  ;;
stop) stop ;;
env)
  if [ "$what" = all ] || [ "$what" = cluster ]; then env_cluster; fi
  if [ "$what" = all ] || [ "$what" = sentinel ]; then env_sentinel; fi
  ;;
*) echo "usage: $0 start|stop|env [cluster|sentinel|all]" >&2; exit 2 ;;
esac
