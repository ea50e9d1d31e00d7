#!/usr/bin/env bash
# Runs inside the lane's guest (see run.sh): NVMe-oF members through the
# real daemon and CLI. An nvmet TCP target on 127.0.0.1 offers two
# subsystems (null_blk, memory backed), one per port; gpuraid discovers and
# connects them and builds a RAID 6 over 4 emulated NVMe + the 2 TCP
# namespaces (a 5th emulated NVMe is its spare). Usage:
#   guest-fabrics.sh BINDIR [STEP...]   (default: every step, in order)
# Steps: bad_input connect raid6 path_return path_timeout reboot nbd_tls
#   reboot: gpuraidd stopped and the TCP paths disconnected (as a host reboot
#           leaves them): the next start connects them again, dg0 is whole
#   nbd_tls: vd0 exported over NBD with TLS required (X.509, client
#           certificates): the kernel's NBD client (nbd-client's TLS proxy)
#           runs fio with verify on /dev/nbd0; with a self-signed
#           certificate, or without TLS, it is refused (issue 19)
# Figures go to $VMLANE_RESULTS (a file) when set; timings are TCG.
set -uo pipefail
BIN=$1
shift
STEPS=${*:-bad_input connect raid6 path_return path_timeout reboot nbd_tls}
W=${VMLANE_WORK:-/run/lane}
R=/run/fabrics   # sockets and state: 9p cannot hold a socket
mkdir -p $W $R
RESULTS=${VMLANE_RESULTS:-$W/results}
SOCK=$R/gpuraid.sock
CFG=/sys/kernel/config/nvmet
NQN=nqn.2026-11.io.gpuraid.lane:tcp
LOSS_TMO=45   # ctrl-loss-tmo of the TCP paths (s)
failures=0

source "$(dirname "$0")/guest-lib.sh"
# wait_event KIND SECONDS: until the daemon has logged an event of KIND (e.g. member_missing).
wait_event() {
  local kind=$1 n=$(($2 * 10))
  for _ in $(seq 1 $n); do
    gp events | grep -i >/dev/null " $kind " && return 0
    sleep 0.1
  done
  fail "no $kind event within $2 s"; gp events | tail -20
  return 1
}
member_state() { gp dg show dg0 --json | json "d['members'][$1]['state']"; }
tcp_ctrls() { grep -l tcp /sys/class/nvme/nvme*/transport 2>/dev/null | wc -l; }
fio_nbd() {  # name offset size extra...: random writes with crc32c verify through the NBD export
  local name=$1 off=$2 size=$3
  shift 3
  fio --name=$name --ioengine=nbd --uri="nbd+unix:///?socket=$R/vd.sock" --rw=randwrite --bs=4k --iodepth=8 \
      --offset=$off --size=$size --verify=crc32c --do_verify=1 --verify_fatal=1 "$@" >$W/fio.$name 2>&1 ||
    { fail "fio $name"; tail -5 $W/fio.$name; return 1; }
}
# port_up|port_down N NQN: nvmet port N (127.0.0.1:4419+N) offering NQN, or gone
# altogether (reconnects are refused: the host keeps trying until
# ctrl-loss-tmo; a port without the subsystem would answer "do not retry").
port_up() {
  local p=$CFG/ports/$1
  mkdir $p && echo tcp >$p/addr_trtype && echo ipv4 >$p/addr_adrfam && echo 127.0.0.1 >$p/addr_traddr &&
    echo $((4419 + $1)) >$p/addr_trsvcid && ln -s $CFG/subsystems/$2 $p/subsystems/$2
}
port_down() { rm $CFG/ports/$1/subsystems/$2 && rmdir $CFG/ports/$1; }

# ---- the target: two subsystems on two ports of 127.0.0.1 ----
for m in nvme nvme-tcp nvmet nvmet-tcp; do modprobe $m || { log "FAIL: modprobe $m"; exit 1; }; done
modprobe null_blk nr_devices=2 gb=1 memory_backed=1 bs=4096 || { log "FAIL: null_blk"; exit 1; }
ip link set lo up
for i in 0 1; do
  s=$CFG/subsystems/$NQN$i
  mkdir $s && echo 1 >$s/attr_allow_any_host && mkdir $s/namespaces/1 &&
    echo -n /dev/nullb$i >$s/namespaces/1/device_path && echo 1 >$s/namespaces/1/enable &&
    port_up $((i + 1)) $NQN$i || { log "FAIL: nvmet target"; exit 1; }
done
for _ in $(seq 1 100); do [ "$(ls /sys/class/nvme 2>/dev/null | wc -l)" -ge 5 ] && break; sleep 0.1; done
LOCAL=()   # emulated NVMe by serial: vmlane0..3 members, vmlane4 the spare
for i in 0 1 2 3 4; do
  for c in /sys/class/nvme/nvme*; do
    [ "$(cat $c/serial 2>/dev/null | tr -d ' ')" = "vmlane$i" ] && LOCAL+=("/dev/$(basename $c)n1")
  done
done
[ ${#LOCAL[@]} -eq 5 ] || { log "FAIL: expected 5 emulated NVMe drives, found ${LOCAL[*]}"; exit 1; }

ulimit -c unlimited && echo "$W/core.%e.%p" >/proc/sys/kernel/core_pattern   # a crash leaves its core for gdb on the host
start_daemon || { tail -20 $W/gpuraidd.log; exit 1; }

step_bad_input() {
  local ctrls=$(tcp_ctrls)
  refused "unreachable target" "cannot reach" gp pd discover --traddr 127.0.0.1 --trsvcid 4430
  refused "connect to an unreachable target" "cannot reach" gp pd connect --traddr 127.0.0.1 --trsvcid 4430 --nqn ${NQN}0
  refused "wrong NQN" "offers no subsystem" gp pd connect --traddr 127.0.0.1 --trsvcid 4420 --nqn nqn.2026-11.io.nowhere:x
  refused "NQN offered on the other port" "offers no subsystem" gp pd connect --traddr 127.0.0.1 --trsvcid 4420 --nqn ${NQN}1
  refused "bad address" "not an IPv4 or IPv6" gp pd discover --traddr 127.0.0.300 --trsvcid 4420
  refused "bad port" "not a number" gp pd discover --traddr 127.0.0.1 --trsvcid 70000
  refused "bad transport" "not supported" gp pd discover --transport rdma --traddr 127.0.0.1
  refused "bad NQN" "nqn." gp pd connect --traddr 127.0.0.1 --nqn foo
  refused "timeouts" "shorter than" gp pd connect --traddr 127.0.0.1 --nqn ${NQN}0 --ctrl-loss-tmo 5 --fast-io-fail-tmo 5
  refused "disconnect what is not connected" "not connected" gp pd disconnect --traddr 127.0.0.1 --nqn ${NQN}0
  [ "$(gp pd list --json | json 'len(d.get("drives", []))')" = 0 ] || fail "a refused request left drives behind"
  [ "$(tcp_ctrls)" = "$ctrls" ] || fail "a refused request left a controller behind"
  kill -0 $DPID || fail "gpuraidd died"
}

step_connect() {
  for i in 0 1; do
    gp pd discover --traddr 127.0.0.1 --trsvcid $((4420 + i)) | tee $W/discover$i | grep >/dev/null "$NQN$i" ||
      fail "discover on port $((4420 + i)) does not list $NQN$i"
  done
  for i in 0 1; do
    gp pd connect --traddr 127.0.0.1 --trsvcid $((4420 + i)) --nqn $NQN$i --ctrl-loss-tmo $LOSS_TMO \
      --reconnect-delay 1 --fast-io-fail-tmo 2 --json >$W/connect$i || { fail "connect $NQN$i"; continue; }
    TCP[$i]=$(json 'd["drives"][0]["id"]' <$W/connect$i)
    log "$NQN$i: $(json 'd["controller"]' <$W/connect$i) -> ${TCP[$i]} $(json 'd["drives"][0]["path"]' <$W/connect$i)"
  done
  refused "connect twice" "already connected" gp pd connect --traddr 127.0.0.1 --trsvcid 4420 --nqn ${NQN}0
  [ -s $R/state/hostnqn ] || fail "no host NQN saved in the state dir"
  result "host $(cat $R/state/hostnqn); TCP drives ${TCP[*]}"
}

step_raid6() {
  local ids=()
  for d in "${LOCAL[@]}"; do ids+=("$(gp pd add $d --json | json 'd["id"]')"); done
  gp dg create --level 6 --strip 64K --name dg0 --assume-zeroed \
    ${ids[0]} ${ids[1]} ${TCP[0]} ${ids[2]} ${ids[3]} ${TCP[1]} || { fail "dg create"; return 1; }
  gp pd spare ${ids[4]} --group dg0 >/dev/null || fail "spare"
  refused "disconnect a member's subsystem" "member" gp pd disconnect --traddr 127.0.0.1 --trsvcid 4420 --nqn ${NQN}0
  gp vd create dg0 --rest --name vd0 && gp vd export vd0 --nbd --listen unix:$R/vd.sock || { fail "vd"; return 1; }
  fio_nbd base 0 32M
  MEMBER_BYTES=$(gp dg show dg0 --json | json 'int(d["capacity_bytes"]) // 4')
}

step_path_return() {
  # Member 5 is ${NQN}1 on port 2: its path goes away, I/O goes on, it comes back.
  port_down 2 ${NQN}1 || fail "port down"
  wait_event member_missing 30 || return 1
  [ "$(member_state 5)" = missing ] || fail "member 5 is $(member_state 5), not missing"
  # Short, so that the path is back well within ctrl-loss-tmo even on a loaded TCG host.
  gp vd write vd0 --pattern 7 --offset 96M --length 2M >/dev/null || fail "write while missing"
  port_up 2 ${NQN}1 || fail "port up"
  wait_event member_resynced 60 || return 1
  local msg=$(gp events | grep -i " member_resynced " | tail -1)
  log "$msg"
  local done=$(sed -n 's/.*resynced: \([0-9]*\) of \([0-9]*\) bytes.*/\1/p' <<<"$msg")
  local all=$(sed -n 's/.*resynced: \([0-9]*\) of \([0-9]*\) bytes.*/\2/p' <<<"$msg")
  [ -n "$done" ] && [ "$done" -gt 0 ] && [ "$done" -lt "$all" ] || fail "not a partial resync: '$msg'"
  gp events | grep -i >/dev/null " member_failed " && fail "a member failed during the path loss"
  [ "$(gp dg show dg0 --json | json 'd["state"]')" = optimal ] || fail "dg0 is not optimal again"
  [ "$(gp dg show dg0 --json | json 'len(d["spares"])')" = 1 ] || fail "the spare was used"
  result "path loss within ctrl-loss-tmo: member resynced $done of $all bytes ($((done * 100 / all))%)"
  fio_nbd base 0 32M --verify_only
  gp vd read vd0 --offset 96M --length 2M --verify-pattern 7 >/dev/null || fail "data written while missing"
  gp dg scrub dg0 start >/dev/null || fail "scrub start"
  for _ in $(seq 1 600); do [ "$(gp dg show dg0 --json | json 'd["scrub"].get("running", False)')" = False ] && break; sleep 0.5; done
  local mism=$(gp dg show dg0 --json | json 'int(d["last_scrub"].get("mismatched_stripes", 0))')
  local checked=$(gp dg show dg0 --json | json 'int(d["last_scrub"].get("stripes_checked", 0))')
  [ "$mism" = 0 ] && [ "$checked" -gt 0 ] || fail "scrub after the resync: $mism mismatches, $checked checked"
  result "scrub after the resync: $checked stripes checked, $mism mismatched"
}

step_path_timeout() {
  port_down 2 ${NQN}1 || fail "port down"
  local t0=$(date +%s)
  for _ in $(seq 1 300); do [ "$(member_state 5)" = missing ] && break; sleep 0.1; done
  gp vd write vd0 --pattern 9 --offset 160M --length 4M >/dev/null || fail "write while missing"
  wait_event member_failed $((LOSS_TMO + 60)) || return 1
  log "member failed $(( $(date +%s) - t0 )) s after the path went away (ctrl-loss-tmo $LOSS_TMO s)"
  wait_event spare_taken 30 || return 1
  for _ in $(seq 1 1200); do
    [ "$(gp dg show dg0 --json | json 'd["state"]')" = optimal ] && break
    sleep 0.5
  done
  [ "$(gp dg show dg0 --json | json 'd["state"]')" = optimal ] || fail "no rebuild onto the spare"
  result "path lost past ctrl-loss-tmo: member failed, spare rebuilt in $(( $(date +%s) - t0 )) s"
  fio_nbd base 0 32M --verify_only
  gp vd read vd0 --offset 96M --length 2M --verify-pattern 7 >/dev/null || fail "data of the first path loss"
  gp vd read vd0 --offset 160M --length 4M --verify-pattern 9 >/dev/null || fail "data written while missing"
  port_up 2 ${NQN}1 || fail "port up"
}

step_reboot() {
  stop_daemon
  for i in 0 1; do timeout 60 nvme disconnect -n $NQN$i >/dev/null 2>&1; done  # (1 is gone after path_timeout)
  [ "$(tcp_ctrls)" = 0 ] || { fail "TCP controllers left after the disconnect"; return 1; }
  start_daemon || return 1
  [ "$(tcp_ctrls)" -ge 1 ] || fail "no TCP controller after the start"
  grep -q "reconnected at start" $W/gpuraidd.log || fail "the daemon's log says nothing of a reconnect"
  [ "$(gp pd show ${TCP[0]} --json | json 'd["state"]')" = online ] ||
    fail "${TCP[0]} is not online after the start: $(gp pd show ${TCP[0]})"
  [ "$(gp dg show dg0 --json | json 'd["state"]')" = optimal ] || fail "dg0 is $(gp dg show dg0 --json | json 'd["state"]')"
  fio_nbd base 0 32M --verify_only && result "pd connect paths reconnected at daemon start: dg0 optimal, data verified"
}

# make_certs DIR: a CA, a server certificate for localhost, a client
# certificate from that CA and a self-signed one, rogue.pem (EC keys: RSA
# key generation is slow under TCG).
make_certs() {
  local C=$1 ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  mkdir -p $C && (
    cd $C &&
      openssl req -x509 "${ec[@]}" -days 2 -subj "/CN=lane CA" -keyout ca.key -out ca.pem &&
      openssl req "${ec[@]}" -subj "/CN=localhost" -keyout server.key -out server.csr &&
      printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >san.ext &&
      openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out server.pem &&
      openssl req "${ec[@]}" -subj "/CN=operator" -keyout client.key -out client.csr &&
      openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out client.pem &&
      openssl req -x509 "${ec[@]}" -days 2 -subj "/CN=intruder" -keyout rogue.key -out rogue.pem
  ) >$W/certs.log 2>&1
}

step_nbd_tls() {
  local C=$R/certs port=10809
  command -v nbd-client >/dev/null || { fail "nbd-client is missing (scripts/setup.sh installs it)"; return 1; }
  modprobe nbd nbds_max=2 || { fail "modprobe nbd"; return 1; }
  make_certs $C || { fail "openssl: $(tail -3 $W/certs.log)"; return 1; }
  gp vd unexport vd0 >/dev/null || fail "unexport vd0"
  gp vd export vd0 --nbd --listen tcp:127.0.0.1:$port --tls require \
    --nbd-tls-cert $C/server.pem --nbd-tls-key $C/server.key --nbd-tls-ca $C/ca.pem >/dev/null ||
    { fail "TLS export of vd0"; return 1; }
  # nbd-client does the handshake (and TLS) in user space, then hands the
  # kernel one end of a socketpair and proxies it through TLS.
  if timeout 60 nbd-client 127.0.0.1 $port /dev/nbd1 -N vd0 -nonetlink >$W/nbd.plain 2>&1; then
    fail "a plain kernel NBD client was served"; nbd-client -d /dev/nbd1
  else log "refused as expected (no TLS): $(tail -1 $W/nbd.plain)"; fi
  if timeout 60 nbd-client 127.0.0.1 $port /dev/nbd1 -N vd0 -certfile $C/rogue.pem -keyfile $C/rogue.key \
    -cacertfile $C/ca.pem -tlshostname localhost >$W/nbd.rogue 2>&1; then
    fail "a kernel NBD client with a certificate from no known CA was served"; nbd-client -d /dev/nbd1
  else log "refused as expected (self-signed client certificate): $(tail -1 $W/nbd.rogue)"; fi
  grep -q "TLS handshake failed" $W/gpuraidd.log || fail "the daemon did not log the rejected certificate"
  tls_connect() {
    timeout 60 nbd-client 127.0.0.1 $port /dev/nbd0 -N vd0 -certfile $C/client.pem -keyfile $C/client.key \
      -cacertfile $C/ca.pem -tlshostname localhost >$W/nbd.tls 2>&1 || { fail "nbd-client over TLS: $(tail -3 $W/nbd.tls)"; return 1; }
  }
  tls_connect || return 1
  local size=$(blockdev --getsize64 /dev/nbd0)
  [ "$size" = "$(gp vd show vd0 --json | json 'int(d["size_bytes"])')" ] || fail "/dev/nbd0 is $size bytes"
  timeout 300 fio --name=tls --filename=/dev/nbd0 --ioengine=libaio --direct=1 --rw=randwrite --bs=4k --iodepth=8 \
    --offset=64M --size=4M --verify=crc32c --do_verify=1 --verify_fatal=1 >$W/fio.tls 2>&1 ||
    { fail "fio over the kernel NBD client with TLS"; tail -5 $W/fio.tls; }
  nbd-client -d /dev/nbd0 >/dev/null 2>&1 || fail "nbd-client -d"
  # A new connection reads the same bytes back from the daemon (direct I/O:
  # no page cache of the first connection in between).
  tls_connect || return 1
  timeout 300 fio --name=tls --filename=/dev/nbd0 --ioengine=libaio --direct=1 --rw=randwrite --bs=4k --iodepth=8 \
    --offset=64M --size=4M --verify=crc32c --verify_only=1 --verify_fatal=1 >$W/fio.tls2 2>&1 ||
    { fail "the data read back over a second TLS connection"; tail -5 $W/fio.tls2; }
  nbd-client -d /dev/nbd0 >/dev/null 2>&1 || fail "nbd-client -d (second connection)"
  result "NBD over TLS: the kernel's nbd-client (client certificate) wrote 4 MiB with fio, verified over a second connection; plain and self-signed clients refused"
}

run_steps $STEPS
