#!/usr/bin/env bash
# Runs inside the lane's guest (see run.sh): a VD served over NVMe-oF by
# the kernel's target (vd export --nvmf), with the real daemon and CLI.
# RAID 5 over 4 emulated NVMe (a 5th becomes its spare). The remote host is
# a second network namespace ("remote", 10.99.0.2) joined to the guest's by a
# veth pair: the target listens on the root side's 10.99.0.1, nvme-cli and fio
# run in the namespace. Usage:
#   guest-nvmf.sh BINDIR [STEP...]   (default: every step, in order)
# Steps:
#   modules:   export refused while nvmet / nvmet-tcp are not loaded (says which modprobe)
#   bad_input: no host list, any host on a non-loopback address (10.99.0.1),
#              an address not on the host, a port another application listens on, a
#              duplicate NQN, rdma://: refused, configfs and the VD unchanged
#   export:    export on 10.99.0.1 with a DH-HMAC-CHAP key (--dhchap-secret-file),
#              a second export refused; from the remote namespace: nvme connect
#              with the allowed host NQN and its key (namespace UUID = the one vd
#              show reports), its TCP connections in that namespace and coming
#              from 10.99.0.2; a host NQN not allowed, no key or a wrong key:
#              refused; vd show lists the connection from 10.99.0.2, and so do
#              the metrics (the export, its connected host and its state); the
#              key only in its 0600 file and nvmet's host entry
#   fio_kill:  the remote host's fio crc32c verify on its namespace while
#              gpuraidd is SIGKILLed and restarted: fio completes and verifies,
#              the host's connections still come from the remote namespace
#   failure:   a member failed while the remote host writes (fio crc32c
#              verify): the spare (a 5th emulated NVMe) rebuilds, the data
#              verifies, the connections still come from the remote namespace
#   unexport:  with the host connected (and another subsystem sharing the
#              daemon's port): the host's controller goes away; configfs
#              differs from before the export only by the shared port; the
#              key file is gone; the metrics no longer show the export
#   restart:   a clean stop takes the subsystem away, the next start brings
#              it back with the same namespace identity; with --ublk-on-exit
#              keep a clean stop leaves it serving and the next start takes it
#              over unchanged; the key is set again after the clean restart
set -uo pipefail
BIN=$1
shift
STEPS=${*:-modules bad_input export fio_kill failure unexport restart}
W=${VMLANE_WORK:-/run/lane}
R=/run/nvmf   # sockets and state: 9p cannot hold a socket
mkdir -p $W $R
RESULTS=${VMLANE_RESULTS:-$W/results}
SOCK=$R/gpuraid.sock
CFG=/sys/kernel/config/nvmet
HOST=nqn.2026-11.io.gpuraid.lane:host1      # the allowed host
BADHOST=nqn.2026-11.io.gpuraid.lane:intruder
OTHER=nqn.2026-11.io.gpuraid.lane:bystander # someone else's subsystem: never touched
PORT=4420
NETNS=remote      # the remote host's network namespace
TADDR=10.99.0.1   # the target's address: the root namespace's end of the veth pair
HADDR=10.99.0.2   # the remote host's address, in $NETNS
KEYFILE=$R/host1.key                        # HOST's DH-HMAC-CHAP key (made in the export step)
SECRET=$R/state/secrets/nvmf-vd0.dhchap     # where the daemon keeps it
failures=0

METRICS=9464
DAEMON_ARGS=(--ublk-depth 64 --metrics $METRICS)
source "$(dirname "$0")/guest-lib.sh"
nvmf() { gp vd show vd0 --json | json "d.get('export',{}).get('nvmf',{}).get('$1','')"; }
# The daemon's Prometheus text, in $W/metrics.
get_metrics() {
  python3 -c 'import sys, urllib.request as u; sys.stdout.write(u.urlopen(sys.argv[1], timeout=10).read().decode())' \
    http://127.0.0.1:$METRICS/metrics >$W/metrics || fail "GET /metrics"
}
# Every configfs entry with its value or link target: what "nothing else changed" compares.
snapshot() {  # (grep exits 2 for the write-only attributes it cannot read)
  { find $CFG -mindepth 1 -printf '%p -> %l\n'; grep -rs "" $CFG || true; } | sort
}
# The key $1 is nowhere but in its files: not in the registry, the daemon's
# log and output, or what the API answers.
key_leaks() {
  local body=${1:10:24}
  { gp vd show vd0 --json; gp status --json; } >$W/api.json 2>&1
  grep -l -- "$body" $R/state/registry.json $W/gpuraidd.log $W/gpuraidd.out $W/api.json && fail "the key is in the files above"
  return 0
}
# The host's controllers of subsystem $1.
host_ctrls() {
  for c in /sys/class/nvme/nvme*; do [ "$(cat $c/subsysnqn 2>/dev/null)" = "$1" ] && basename $c; done
}
wait_ctrls() {  # NQN COUNT SECONDS
  for _ in $(seq 1 $(($3 * 10))); do [ "$(host_ctrls $1 | wc -l)" -eq $2 ] && return 0; sleep 0.1; done
  fail "$1: $(host_ctrls $1 | wc -l) host controller(s) after $3 s, expected $2"
}
RH="ip netns exec $NETNS"  # $RH CMD...: CMD on the remote host (in its network namespace)
# The remote host: the namespace $NETNS, joined to this one by the veth pair
# nvmf0 (here, $TADDR) - nvmf1 (there, $HADDR).
make_remote_host() {
  modprobe veth && ip netns add $NETNS && ip link add nvmf0 type veth peer name nvmf1 netns $NETNS &&
    ip addr add $TADDR/24 dev nvmf0 && ip link set nvmf0 up && ip -n $NETNS link set lo up &&
    ip -n $NETNS addr add $HADDR/24 dev nvmf1 && ip -n $NETNS link set nvmf1 up
}
# The host's TCP connections to the target are the remote namespace's: the
# host's ends are there (to $TADDR:$PORT), none in this namespace, and as many
# target ends here with the peer $HADDR. On 6.12 nvme-tcp makes its sockets in
# the namespace of the process that writes /dev/nvme-fabrics (nvme connect), but
# a reset or error-recovery reconnect runs in a kernel worker, in the init
# namespace (tried: a reset_controller written from $NETNS reconnected from
# $TADDR to itself), so a reconnect shows here as host ends in this namespace.
remote_path() {  # WHAT
  local there here_host here_target
  there=$($RH ss -Htn state established dst $TADDR:$PORT | wc -l)
  here_host=$(ss -Htn state established dport = :$PORT | wc -l)
  here_target=$(ss -Htn state established src $TADDR:$PORT dst $HADDR | wc -l)
  [ "$there" -ge 2 ] && [ "$here_host" -eq 0 ] && [ "$here_target" -eq "$there" ] ||
    { fail "$1: the host's connections are not the remote namespace's: $there there, $here_host host end(s) here,"\
" $here_target target end(s) from $HADDR: $(ss -Htn state established; echo "in $NETNS:"; $RH ss -Htn state established)"\
"; the host's log: $(dmesg | grep -iE 'error recovery|reconnect|timeout' | tail -3)"; return 1; }
  log "$1: $there TCP connections from $HADDR in $NETNS to $TADDR:$PORT"
}
# The remote namespace's block device (the head node of the subsystem's namespace 1).
remote_ns() {
  for b in /sys/block/nvme*n*; do
    [[ $(basename $b) =~ ^nvme[0-9]+n[0-9]+$ ]] || continue  # not the hidden per-path nodes
    [ "$(cat $b/device/subsysnqn 2>/dev/null || cat $b/device/../subsysnqn 2>/dev/null)" = "$1" ] && { echo /dev/$(basename $b); return; }
  done
}

for m in nvme nvme-tcp ublk_drv; do modprobe $m || { log "FAIL: modprobe $m"; exit 1; }; done
ip link set lo up
make_remote_host || { log "FAIL: the remote host's network namespace"; exit 1; }
# The host waits up to 120 s for an I/O (default 30) before it resets the
# controller: a reset reconnects from the init namespace (remote_path), and
# gpuraidd down for a SIGKILL under a loaded TCG guest must not look like one.
echo 120 >/sys/module/nvme_core/parameters/io_timeout || log "note: nvme_core io_timeout left at $(cat /sys/module/nvme_core/parameters/io_timeout) s"
for _ in $(seq 1 100); do [ "$(ls /sys/class/nvme 2>/dev/null | wc -l)" -ge 5 ] && break; sleep 0.1; done
DRIVES=()   # members vmlane0..3, then the spare vmlane4
for i in 0 1 2 3 4; do
  for c in /sys/class/nvme/nvme*; do
    [ "$(cat $c/serial 2>/dev/null | tr -d ' ')" = "vmlane$i" ] && DRIVES+=("/dev/$(basename $c)n1")
  done
done
[ ${#DRIVES[@]} -eq 5 ] || { log "FAIL: expected 5 emulated NVMe drives, found ${DRIVES[*]}"; exit 1; }
ulimit -c unlimited && echo "$W/core.%e.%p" >/proc/sys/kernel/core_pattern
start_daemon || exit 1
for i in 0 1 2 3; do gp pd add ${DRIVES[$i]} --id pd$i >/dev/null || { log "FAIL: pd add"; exit 1; }; done
gp dg create --level 5 --strip 64K --name r5 --assume-zeroed pd0 pd1 pd2 pd3 >/dev/null &&
  gp vd create r5 --rest --name vd0 >/dev/null || { log "FAIL: dg/vd create"; exit 1; }

step_modules() {
  refused "nvmet not loaded" "modprobe nvmet" gp vd export vd0 --nvmf tcp://127.0.0.1:$PORT --allow-host $HOST
  modprobe nvmet || { fail "modprobe nvmet"; return 1; }
  refused "nvmet-tcp not loaded" "modprobe nvmet-tcp" gp vd export vd0 --nvmf tcp://127.0.0.1:$PORT --allow-host $HOST
  modprobe nvmet-tcp || { fail "modprobe nvmet-tcp"; return 1; }
  [ -z "$(gp vd show vd0 --json | json "d.get('export','')")" ] || fail "a refused export left vd0 exported"
}

step_bad_input() {
  # Someone else's subsystem on null_blk, on its own port: must never change.
  modprobe null_blk nr_devices=1 gb=1 memory_backed=1 bs=4096 || { fail "null_blk"; return 1; }
  local s=$CFG/subsystems/$OTHER
  mkdir $s && echo 1 >$s/attr_allow_any_host && mkdir $s/namespaces/1 && echo -n /dev/nullb0 >$s/namespaces/1/device_path &&
    echo 1 >$s/namespaces/1/enable && mkdir $CFG/ports/7 && echo tcp >$CFG/ports/7/addr_trtype &&
    echo ipv4 >$CFG/ports/7/addr_adrfam && echo 127.0.0.1 >$CFG/ports/7/addr_traddr && echo 4430 >$CFG/ports/7/addr_trsvcid &&
    ln -s $s $CFG/ports/7/subsystems/$OTHER || { fail "bystander subsystem"; return 1; }
  snapshot >$W/cfg.before
  python3 -c 'import socket,time; s=socket.socket(); s.bind(("127.0.0.1",4431)); s.listen(); time.sleep(120)' &
  local lpid=$!
  sleep 1
  refused "no hosts named" "allow-host" gp vd export vd0 --nvmf tcp://127.0.0.1:$PORT
  refused "any host off loopback" "every host" gp vd export vd0 --nvmf tcp://$TADDR:$PORT --allow-any-host
  refused "address not on this host" "not an address of this host" gp vd export vd0 --nvmf tcp://192.0.2.1:$PORT --allow-host $HOST
  refused "port in use" "in use by another application" gp vd export vd0 --nvmf tcp://127.0.0.1:4431 --allow-host $HOST
  refused "duplicate NQN" "already exists" gp vd export vd0 --nvmf tcp://127.0.0.1:$PORT --allow-host $HOST --nqn $OTHER
  refused "rdma" "not supported" gp vd export vd0 --nvmf rdma://127.0.0.1:$PORT --allow-host $HOST
  refused "bad host NQN" "nqn." gp vd export vd0 --nvmf tcp://127.0.0.1:$PORT --allow-host foo
  refused "bad port" "1 to 65535" gp vd export vd0 --nvmf tcp://127.0.0.1:0 --allow-host $HOST
  kill $lpid; wait $lpid 2>/dev/null
  snapshot | diff $W/cfg.before - >$W/cfg.diff || { fail "a refused export changed configfs"; cat $W/cfg.diff; }
  [ -z "$(gp vd show vd0 --json | json "d.get('export','')")" ] || fail "a refused export left vd0 exported"
  ls /dev/ublkb* >/dev/null 2>&1 && fail "a refused export left a ublk device: $(ls /dev/ublkb*)"
  return 0
}

step_export() {
  [ -f $W/cfg.before ] || snapshot >$W/cfg.before
  local out key wrong
  key=$(nvme gen-dhchap-key --nqn $HOST --hmac 1) && wrong=$(nvme gen-dhchap-key --nqn $HOST --hmac 1) ||
    { fail "nvme gen-dhchap-key"; return 1; }
  (umask 077 && echo "$key" >$KEYFILE)
  out=$(gp vd export vd0 --nvmf tcp://$TADDR:$PORT --allow-host $HOST --dhchap-secret-file $KEYFILE) ||
    { fail "vd export --nvmf: $out"; return 1; }
  log "$out"
  NQN=$(nvmf nqn)
  [ -n "$NQN" ] && grep -q "$NQN" <<<"$out" || fail "export did not report the NQN '$NQN': $out"
  [ -d $CFG/subsystems/$NQN ] || fail "no subsystem $NQN in configfs"
  [ "$(cat $CFG/subsystems/$NQN/attr_allow_any_host)" = 0 ] || fail "any host allowed by default"
  refused "export twice" "already exported over NVMe-oF" gp vd export vd0 --nvmf tcp://$TADDR:4421 --allow-host $HOST
  refused "bad host connects" "" timeout 60 $RH nvme connect -t tcp -a $TADDR -s $PORT -n $NQN --hostnqn $BADHOST
  refused "no key" "" timeout 60 $RH nvme connect -t tcp -a $TADDR -s $PORT -n $NQN --hostnqn $HOST
  refused "wrong key" "" timeout 60 $RH nvme connect -t tcp -a $TADDR -s $PORT -n $NQN --hostnqn $HOST --dhchap-secret "$wrong"
  [ -z "$(host_ctrls $NQN)" ] || fail "a host not allowed, or without the key, got a controller"
  timeout 60 $RH nvme connect -t tcp -a $TADDR -s $PORT -n $NQN --hostnqn $HOST --dhchap-secret "$key" -l 8 -c 2 \
    >$W/connect 2>&1 || { fail "nvme connect with the key: $(cat $W/connect)"; return 1; }
  wait_ctrls $NQN 1 20 || return 1
  for _ in $(seq 1 100); do REMOTE=$(remote_ns $NQN); [ -n "$REMOTE" ] && break; sleep 0.1; done
  [ -b "$REMOTE" ] || { fail "no block device for $NQN"; return 1; }
  local uuid=$(cat /sys/block/$(basename $REMOTE)/uuid 2>/dev/null)
  [ "$uuid" = "$(nvmf ns_uuid)" ] || fail "the host sees namespace uuid '$uuid', vd show says '$(nvmf ns_uuid)'"
  UUID=$uuid
  remote_path "connect"
  gp vd show vd0 | tee $W/show | grep >/dev/null "connected.*$HADDR" || fail "vd show lists no connection: $(cat $W/show)"
  get_metrics
  local l="vd=\"vd0\",dg=\"[^\"]*\",nqn=\"$NQN\""
  grep -q "^gpuraid_vd_nvmf_info{$l,transport=\"tcp\",address=\"$TADDR:$PORT\",.*dhchap=\"1\".*} 1$" $W/metrics &&
    grep -q "^gpuraid_vd_nvmf_connected_hosts{$l} [1-9]" $W/metrics &&
    grep -q "^gpuraid_vd_nvmf_host_state{$l,host=\"[^\"]*\",address=\"$HADDR\",state=\"[^\"]*\"} [1-9]" $W/metrics ||
    fail "the metrics do not show the export and its connected host: $(grep nvmf $W/metrics)"
  grep -q "authenticated with DH-HMAC-CHAP" $W/show || fail "vd show does not say hosts authenticate: $(cat $W/show)"
  [ "$(nvmf dhchap)" = True ] || fail "vd show --json: dhchap is '$(nvmf dhchap)'"
  [ "$(stat -c %a $SECRET 2>&1)" = 600 ] || fail "the key file $SECRET: mode $(stat -c %a $SECRET 2>&1), want 600"
  [ "$(cat $CFG/hosts/$HOST/dhchap_key)" = "$key" ] || fail "nvmet's $HOST entry does not hold the key"
  key_leaks "$key"
  result "nvmf export $NQN: host $(host_ctrls $NQN) $REMOTE uuid $uuid"
}

step_fio_kill() {
  [ -b "${REMOTE:-}" ] || { fail "no remote namespace (export step)"; return 1; }
  $RH fio --name=nvmf --filename=$REMOTE --ioengine=io_uring --direct=1 --rw=randwrite --bs=4k --iodepth=16 --size=32M \
      --verify=crc32c --do_verify=1 --verify_fatal=1 >$W/fio.nvmf 2>&1 &
  local fpid=$! t0=$(date +%s)
  sleep 5
  kill -0 $fpid 2>/dev/null || fail "fio ended before the kill (make it longer)"
  kill -KILL $DPID; wait $DPID 2>/dev/null; DPID=""
  log "gpuraidd SIGKILLed under fio on $REMOTE"
  start_daemon || { kill $fpid; return 1; }
  timeout 300 tail --pid=$fpid -f /dev/null || { fail "fio still running 300 s after the restart"; kill $fpid; }
  wait $fpid || fail "fio across the daemon kill: $(tail -5 $W/fio.nvmf)"
  grep -q "err= 0" $W/fio.nvmf || fail "fio reported errors"
  [ "$(nvmf nqn)" = "$NQN" ] || fail "after the restart vd0 is exported as '$(nvmf nqn)'"
  [ "$(nvmf ns_uuid)" = "$UUID" ] || fail "namespace uuid changed across the restart"
  remote_path "after the daemon's SIGKILL"
  result "nvmf: fio crc32c verify of 32M across SIGKILL+restart of gpuraidd: ok in $(( $(date +%s) - t0 )) s (TCG)"
}

step_failure() {
  [ -b "${REMOTE:-}" ] || { fail "no remote namespace (export step)"; return 1; }
  gp pd add ${DRIVES[4]} --id pd4 >/dev/null && gp pd spare pd4 --group r5 >/dev/null || { fail "the spare"; return 1; }
  local io=(--name=failure --filename=$REMOTE --ioengine=io_uring --direct=1 --rw=randwrite --bs=4k --iodepth=16
            --offset=64M --size=32M --verify=crc32c --verify_fatal=1)
  $RH fio "${io[@]}" --do_verify=1 >$W/fio.failure 2>&1 &
  local fpid=$! t0=$(date +%s)
  sleep 3
  kill -0 $fpid 2>/dev/null || fail "fio ended before the failure (make it longer)"
  gp pd fail pd1 >/dev/null || fail "pd fail pd1"
  log "member pd1 failed under fio on $REMOTE"
  timeout 300 tail --pid=$fpid -f /dev/null || { fail "fio still running 300 s after the failure"; kill $fpid; }
  wait $fpid || fail "fio across the member failure: $(tail -5 $W/fio.failure)"
  local state
  for _ in $(seq 1 600); do state=$(gp dg show r5 --json | json 'd["state"]'); [ "$state" = optimal ] && break; sleep 0.5; done
  [ "$state" = optimal ] || { fail "r5 is $state 300 s after the failure, not rebuilt onto the spare"; return 1; }
  $RH fio "${io[@]}" --verify_only >$W/fio.failure.verify 2>&1 || fail "data after the rebuild: $(tail -5 $W/fio.failure.verify)"
  remote_path "after the rebuild"
  result "nvmf: member failed under the remote host's fio, spare rebuilt, data verified in $(( $(date +%s) - t0 )) s (TCG)"
}

step_unexport() {
  [ -n "${NQN:-}" ] || { fail "not exported (export step)"; return 1; }
  local pid=$(nvmf port_id)
  # Another subsystem now shares the daemon's port: the port must stay.
  ln -s $CFG/subsystems/$OTHER $CFG/ports/$pid/subsystems/$OTHER || fail "link $OTHER to port $pid"
  gp vd unexport vd0 >/dev/null || { fail "vd unexport"; return 1; }
  wait_ctrls $NQN 0 60 || return 1
  [ -d $CFG/subsystems/$NQN ] && fail "subsystem $NQN left behind"
  [ -d $CFG/ports/$pid ] || fail "port $pid removed although $OTHER still uses it"
  # configfs = before the export + the shared port (made by the daemon, now serving $OTHER).
  snapshot | grep -v -e "^$CFG/ports/$pid/" -e "^$CFG/ports/$pid -> " >$W/cfg.after
  diff $W/cfg.before $W/cfg.after >$W/cfg.diff || { fail "unexport changed configfs beyond its own"; cat $W/cfg.diff; }
  rm $CFG/ports/$pid/subsystems/$OTHER && rmdir $CFG/ports/$pid
  ls /dev/ublkb* >/dev/null 2>&1 && fail "the ublk device is still there: $(ls /dev/ublkb*)"
  [ "$(cat $CFG/subsystems/$OTHER/namespaces/1/enable)" = 1 ] || fail "$OTHER was disabled"
  [ -e $SECRET ] && fail "unexport left the key file $SECRET"
  get_metrics
  grep -q '^gpuraid_vd_nvmf_info{vd="vd0"' $W/metrics && fail "the metrics still show the export: $(grep nvmf $W/metrics)"
  result "nvmf unexport with a host connected: controller gone, $OTHER and the shared port untouched"
}

step_restart() {
  gp vd export vd0 --nvmf tcp://$TADDR:$PORT --allow-host $HOST --dhchap-secret-file $KEYFILE >/dev/null ||
    { fail "export again"; return 1; }
  NQN=$(nvmf nqn)
  local uuid=$(nvmf ns_uuid)
  [ -z "${UUID:-}" ] || [ "$uuid" = "$UUID" ] || fail "a re-export changed the namespace uuid"
  stop_daemon
  [ -d $CFG/subsystems/$NQN ] && fail "a clean stop left $NQN in configfs (its ublk device is gone)"
  start_daemon --ublk-on-exit keep || return 1
  [ -d $CFG/subsystems/$NQN ] || fail "the next start did not configure $NQN again: $(gp vd show vd0)"
  [ "$(cat $CFG/subsystems/$NQN/namespaces/1/device_uuid)" = "$uuid" ] || fail "uuid changed across a clean restart"
  [ "$(cat $CFG/hosts/$HOST/dhchap_key)" = "$(cat $KEYFILE)" ] || fail "the next start did not set $HOST's key again"
  # A planned restart (--ublk-on-exit keep): the target keeps serving the kept device.
  snapshot >$W/cfg.kept
  stop_daemon
  [ -d $CFG/subsystems/$NQN ] || fail "--ublk-on-exit keep: the clean stop removed $NQN"
  start_daemon || return 1
  snapshot | diff $W/cfg.kept - >$W/cfg.diff || { fail "a planned restart changed configfs"; cat $W/cfg.diff; }
  gp vd unexport vd0 >/dev/null || fail "unexport"
  snapshot | diff $W/cfg.before - >$W/cfg.diff || { fail "configfs differs after export/stop/start/unexport"; cat $W/cfg.diff; }
  [ -e $SECRET ] && fail "unexport left the key file $SECRET"
  key_leaks "$(cat $KEYFILE)"
}

run_steps $STEPS
