#!/usr/bin/env bash
# Runs inside the lane's guest (see run.sh), twice per round, by
# powerloss.sh: a power cut under real applications, then the next boot.
# Usage: guest-powerloss.sh BINDIR cut|check SHARE normal|degraded|rebuilding [volatile|durable]
# volatile (run.sh VMLANE_VOLATILE=1): every drive has a volatile write
# cache that the cut loses (nbdkit's cache filter on the host); the host
# cuts the power when SHARE/cut-now appears. durable: the drives keep what
# they were given (qemu cache=none) and the guest cuts with sysrq b.
# Drives: vmlane0..3 the RAID 5 members, vmlane4 the system disk (ext4:
# gpuraidd's state dir, as an operator's root filesystem would hold it),
# vmlane5 the replacement, vmlane6 a probe of the drive model (volatile:
# a FUA write survives the cut, a plain write beside it does not). With
# volatile caches the drives are SCSI disks (run.sh VMLANE_BUS=scsi:
# qemu's NVMe model acknowledges FUA writes it has not made durable).
# The group's state at the cut (the life cycle):
#   normal:     every member online;
#   degraded:   member 1 failed, no replacement (the write-hole guard's log
#               is what makes torn stripes consistent);
#   rebuilding: member 1 failed and replaced, its rebuild held at 1 MiB/s
#               so that it runs at the cut.
#   cut:   gpuraidd, a RAID 5 VD exported over ublk, ext4 on it; a SQLite
#          database (WAL, synchronous=FULL) taking transactions and a
#          writer of fsynced files, each logging what was acknowledged to
#          SHARE (a host folder: it outlives the guest); fio writes beside
#          them so that stripes are in flight. Then the power is cut
#          (sysrq b: no sync, no unmount, the daemon's memory gone).
#   check: the next boot. gpuraidd starts on the same state dir by itself
#          and exports the VD again; fsck is clean after the journal
#          replay; every acknowledged transaction and file is there and
#          intact, SQLite's integrity check passes and each transaction
#          was all or nothing; the unclean stop's resync ends and a scrub
#          finds no parity mismatch. Degraded: the group comes back
#          degraded by itself, the data checks pass, then the replacement is
#          rebuilt. Rebuilding: the rebuild resumes and completes.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
PHASE=${2:?cut|check}
SHARE=${3:?SHARE}
SCENARIO=${4:?normal|degraded|rebuilding}
CACHE=${5:-durable}
DAEMON_LOG_COPY=$SHARE/daemon-$PHASE.log
source "$here/guest-e2e-lib.sh" "$1"
all_drives() { local i; for i in 0 1 2 3 4 5 6; do dev_of vmlane$i >/dev/null || return 1; done; }
for _ in $(seq 300); do all_drives && break; sleep 0.1; done
D=() P=()   # each drive's device node; the path gpuraid is given
for i in 0 1 2 3 4 5 6; do
  D[$i]=$(dev_of vmlane$i) || fail "no drive with serial vmlane$i"
  P[$i]=$(stable_path_of vmlane$i)
done
SYS=${D[4]} PROBE=${D[6]}
STATE_DIR=/srv/sys/state   # lib.sh's start_daemon
start_daemon_on_sys() { start_daemon --reactors 2 --ublk-depth 64; }
vd_dev() { gp --json vd show vol0 | json 'd.get("export", {}).get("dev_path", "")'; }
group() { gp --json dg show r5 | json "$1"; }

# The applications. SQLite: each transaction inserts a row (its blob's
# SHA-256 beside it) and sets the counter row to its id, so after the cut
# the counter must equal the largest id (all or nothing); the id goes to
# the host log only after COMMIT returned.
cat >"$W/sqlite_load.py" <<'EOF'
import hashlib, os, sqlite3, sys
db, ack = sys.argv[1], sys.argv[2]
c = sqlite3.connect(db, isolation_level=None)
c.execute("PRAGMA journal_mode=WAL")
c.execute("PRAGMA synchronous=FULL")
c.execute("CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, data BLOB, sum TEXT)")
c.execute("CREATE TABLE IF NOT EXISTS counter(k INTEGER PRIMARY KEY, v INTEGER)")
c.execute("INSERT OR IGNORE INTO counter VALUES(0, 0)")
fd = os.open(ack, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
i = 0
while True:
    i += 1
    data = os.urandom(512 + (i * 997) % 7680)
    c.execute("BEGIN")
    c.execute("INSERT INTO t VALUES(?, ?, ?)", (i, data, hashlib.sha256(data).hexdigest()))
    c.execute("UPDATE counter SET v = ? WHERE k = 0", (i,))
    c.execute("COMMIT")
    os.write(fd, b"%d\n" % i)
EOF
# Files: written, fsynced, renamed into place, the directory fsynced; then
# the name and checksum go to the host log.
cat >"$W/file_load.py" <<'EOF'
import hashlib, os, sys
d, ack = sys.argv[1], sys.argv[2]
fd = os.open(ack, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
dfd = os.open(d, os.O_RDONLY)
i = 0
while True:
    i += 1
    data = os.urandom(4096 * (1 + (i * 7) % 64))
    tmp, final = f"{d}/.f{i}.tmp", f"{d}/f{i}"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, final)
    os.fsync(dfd)
    os.write(fd, b"f%d %s\n" % (i, hashlib.sha256(data).hexdigest().encode()))
EOF

# The drive model, checked on the probe drive (volatile caches): a FUA
# write issued as gpuraidd issues it (io_uring, O_DIRECT|O_DSYNC), then a
# plain write beside it that nothing flushes. After the cut the first must
# be there (else acknowledged data is lost by the model, not by gpuraidd)
# and the second gone (else the cache was not volatile).
probe_fio() {  # NAME OFFSET PATTERN [FIO OPTION...]: one 4 KiB write of PATTERN (hex) to the probe
  fio --name="$1" --filename=$PROBE --rw=write --bs=4k --size=4k --offset="$2" --ioengine=io_uring --direct=1 \
    --buffer_pattern=0x"$3" "${@:4}" >"$W/probe.fio" 2>&1 || fail "probe $1 write: $(tail -3 "$W/probe.fio")"
}
probe_write() {
  # Patterns of 4 random bytes, the first fixed (not 00: fio reads the hex as a number).
  local fua=a5$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n') plain=5a$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
  probe_fio fua 0 "$fua" --sync=dsync
  probe_fio plain 8k "$plain"
  echo "$fua $plain" >"$SHARE/probe"
}
probe_check() {
  local fua plain
  read -r fua plain <"$SHARE/probe" || fail "no probe record from the cut"
  python3 - "$PROBE" "$fua" "$plain" <<'EOF' || fail "the drive model after the cut"
import sys
dev, fua, plain = sys.argv[1], bytes.fromhex(sys.argv[2]) * 1024, bytes.fromhex(sys.argv[3]) * 1024
with open(dev, "rb") as f:
    first = f.read(4096)
    f.seek(8192)
    beside = f.read(4096)
assert first == fua, "a FUA write was lost at the cut: this drive model does not honour FUA"
assert beside != plain, "a write with neither FUA nor a flush survived the cut: the cache is not volatile"
print("probe drive: its FUA write survived the cut, the plain write beside it was lost")
EOF
}

phase_cut() {
  echo 1 >/proc/sys/kernel/sysrq
  mkfs.ext4 -q -F $SYS && mkdir -p /srv/sys && mount $SYS /srv/sys || fail "system disk"
  start_daemon_on_sys
  local ids=() i
  for i in 0 1 2 3; do
    blkdiscard -z ${D[$i]} || fail "blkdiscard -z ${D[$i]}"
    gp pd add ${P[$i]} --id pd$i >/dev/null || fail "pd add ${P[$i]}"
    ids+=(pd$i)
  done
  gp dg create --level 5 --strip 64K --name r5 --assume-zeroed "${ids[@]}" >/dev/null || fail "dg create"
  gp pd add ${P[5]} --id pd5 >/dev/null || fail "pd add ${P[5]}"
  case $SCENARIO in
    degraded) gp pd fail pd1 >/dev/null || fail "pd fail pd1" ;;
    rebuilding)
      gp dg rates r5 --rebuild 1M >/dev/null || fail "dg rates"
      gp pd fail pd1 >/dev/null || fail "pd fail pd1"
      gp dg replace r5 --member 1 --with pd5 >/dev/null || fail "dg replace"
      ;;
  esac
  gp vd create r5 --rest --name vol0 >/dev/null || fail "vd create"
  gp vd export vol0 --ublk >/dev/null || fail "vd export --ublk"
  local dev=$(vd_dev)
  [ -b "$dev" ] || fail "no ublk device ($dev)"
  echo "$dev" >"$SHARE/dev"
  mkfs.ext4 -q -F -E nodiscard $dev && mkdir -p /mnt/vd && mount $dev /mnt/vd || fail "ext4 on $dev"
  mkdir -p /mnt/vd/files
  : >"$SHARE/sqlite.ack"
  : >"$SHARE/files.ack"
  python3 "$W/sqlite_load.py" /mnt/vd/db.sqlite "$SHARE/sqlite.ack" 2>"$W/sqlite.err" &
  python3 "$W/file_load.py" /mnt/vd/files "$SHARE/files.ack" 2>"$W/files.err" &
  fio --name=bg --filename=/mnt/vd/bg.dat --size=48M --ioengine=io_uring --direct=1 --rw=randwrite \
    --bsrange=4k-256k --iodepth=16 --time_based --runtime=600 >"$W/fio.bg" 2>&1 &
  # Cut once the applications have been acknowledged a while (TCG speed
  # varies): 150 transactions and 20 files, or 90 s.
  local t
  for t in $(seq 180); do
    [ "$(wc -l <"$SHARE/sqlite.ack")" -ge 150 ] && [ "$(wc -l <"$SHARE/files.ack")" -ge 20 ] && break
    sleep 0.5
  done
  local tx=$(wc -l <"$SHARE/sqlite.ack") files=$(wc -l <"$SHARE/files.ack") state=$(group 'd["state"]')
  [ "$state" = "$SCENARIO" ] || [ "$SCENARIO" = normal ] || fail "r5 is $state at the cut, not $SCENARIO" 
  [ "$tx" -gt 0 ] || fail "SQLite acknowledged nothing: $(tail -3 "$W/sqlite.err")"
  [ "$files" -gt 0 ] || fail "no file acknowledged: $(tail -3 "$W/files.err")"
  jobs -r | grep >/dev/null fio || fail "fio is not running at the cut: $(tail -3 "$W/fio.bg")"
  if [ "$CACHE" = volatile ]; then
    # The guard must have had to make room durable (a flush of the members
    # before log room was reused), and the members must really have a
    # volatile cache for that to mean anything.
    for i in 0 1 2 3; do
      check "write cache of ${D[$i]}" "write back" "$(cat /sys/block/$(basename ${D[$i]})/queue/write_cache)"
    done
    local rounds=$(gp --json stats | json 'int(next(g for g in d["groups"] if g["name"] == "r5").get("guard_flush_rounds", 0))')
    [ "$rounds" -gt 0 ] || fail "the write-hole guard never flushed before reusing log room ($rounds rounds)"
    log "write-hole guard: $rounds flush rounds before log room was reused"
    probe_write
  fi
  cp -f "$T/daemon.log" "$SHARE/daemon-cut.log"
  log "cutting the power ($state, $CACHE caches): $tx transactions and $files files acknowledged, fio writing"
  echo "$state" >"$SHARE/cut"
  if [ "$CACHE" = volatile ]; then
    : >"$SHARE/cut-now"   # the host kills the drives' caches, then qemu
    sleep 30
    fail "still running 30 s after asking the host to cut the power"
  fi
  echo b >/proc/sysrq-trigger
  sleep 30
  fail "still running 30 s after sysrq b"
}

phase_check() {
  [ "$CACHE" = volatile ] && probe_check
  mkdir -p /srv/sys && mount $SYS /srv/sys || fail "the system disk does not mount after the cut"
  start_daemon_on_sys
  local dev
  for _ in $(seq 600); do dev=$(vd_dev); [ -b "$dev" ] && break; sleep 0.1; done
  [ -b "$dev" ] || fail "gpuraidd did not export vol0 again after the power cut: '$dev'"
  [ "$dev" = "$(cat "$SHARE/dev")" ] || log "note: vol0 is $dev now (was $(cat "$SHARE/dev"))"
  local state=$(group 'd["state"]')
  log "group r5 after the cut: $state"
  case $SCENARIO in
    normal) [ "$state" = resyncing ] || [ "$state" = optimal ] || fail "r5 is $state after the cut" ;;
    *) [ "$state" = "$SCENARIO" ] || fail "r5 is $state after the cut (want $SCENARIO, by itself)" ;;
  esac
  # The journal replays at mount (as at boot); then fsck must find nothing.
  mkdir -p /mnt/vd && mount $dev /mnt/vd || fail "ext4 does not mount after the cut"
  umount /mnt/vd
  fsck.ext4 -fn $dev >"$W/fsck" 2>&1 || { cat "$W/fsck"; fail "fsck after the cut"; }
  mount $dev /mnt/vd || fail "mount after fsck"
  python3 - /mnt/vd/db.sqlite "$SHARE/sqlite.ack" <<'EOF' || fail "SQLite after the power cut"
import hashlib, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok", "integrity_check"
acked = [int(x) for x in open(sys.argv[2]).read().split()]
ids = {}
for i, data, s in c.execute("SELECT id, data, sum FROM t"):
    assert hashlib.sha256(data).hexdigest() == s, f"row {i}: blob does not match its checksum"
    ids[i] = True
top = max(ids) if ids else 0
counter = c.execute("SELECT v FROM counter WHERE k = 0").fetchone()[0]
assert counter == top, f"counter {counter} but largest id {top}: a transaction was split"
assert sorted(ids) == list(range(1, top + 1)), "ids with gaps"
lost = [i for i in acked if i not in ids]
assert not lost, f"{len(lost)} acknowledged transactions lost, first {lost[:5]}"
print(f"sqlite: {len(acked)} acknowledged, {top} present, counter {counter}, integrity ok")
EOF
  python3 - /mnt/vd/files "$SHARE/files.ack" <<'EOF' || fail "files after the power cut"
import hashlib, sys
n = 0
for line in open(sys.argv[2]):
    name, s = line.split()
    data = open(f"{sys.argv[1]}/{name}", "rb").read()
    assert hashlib.sha256(data).hexdigest() == s, f"{name}: other bytes than acknowledged"
    n += 1
print(f"files: {n} acknowledged, all intact")
EOF
  umount /mnt/vd
  case $SCENARIO in
    degraded) gp dg replace r5 --member 1 --with pd5 >/dev/null || fail "dg replace after the cut" ;;
    rebuilding)
      grep -q "rebuild of member 1 resumes" "$T/daemon.log" || fail "the rebuild did not resume from its checkpoint"
      gp dg rates r5 --rebuild 0 >/dev/null || fail "dg rates"
      ;;
  esac
  # The unclean stop's resync (or the rebuild), then a scrub over every stripe.
  for _ in $(seq 1200); do [ "$(group 'd["state"]')" = optimal ] && break; sleep 0.5; done
  [ "$(group 'd["state"]')" = optimal ] || fail "r5 not optimal after its resync: $(gp dg show r5)"
  grep -qi "unclean\|dirty" "$T/daemon.log" || fail "the daemon did not see an unclean stop"
  expect_rc 0 gp dg scrub r5 start
  for _ in $(seq 1200); do
    [ "$(group 'd["scrub"]["running"]')" = False ] && break
    sleep 0.5
  done
  check "scrub running" False "$(group 'd["scrub"]["running"]')"
  check "mismatched stripes" 0 "$(group 'int(d["last_scrub"]["mismatched_stripes"])')"
  result "power cut, RAID 5 $SCENARIO, $CACHE drive caches, under SQLite (WAL, FULL) + fsynced files + fio through ublk (TCG):" \
    "$(wc -l <"$SHARE/sqlite.ack") transactions and $(wc -l <"$SHARE/files.ack") files acknowledged, all there" \
    "after the next boot; fsck clean; $(group 'd["state"]') and scrub clean after the $([ $SCENARIO = normal ] && echo resync || echo rebuild)"
  stop_daemon
}

phase_$PHASE
