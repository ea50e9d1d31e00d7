#!/usr/bin/env bash
# Builds the Debian package from the build tree (scripts/package.sh, no
# compile) and checks it as an operator would meet it: the files where the
# layout says, Depends computed and free of CUDA, no CUDA library needed at
# run time, the conffile, lintian without errors, the systemd units verified,
# the man pages rendering, the completion loading, and the packaged gpuraidd
# started as its unit starts it (with the packaged configuration; the paths
# moved into a temporary dir) answering the packaged gpuraid.
# Usage: package_check.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
SRC=${1:?usage: $0 SOURCE_DIR BUILD_DIR}
B=$(cd "${2:?usage: $0 SOURCE_DIR BUILD_DIR}" && pwd)
# T (a temporary dir, removed at exit with any daemon DPID left), step, fail.
source "$SRC/tests/e2e/lib.sh" "$B/bin"
for tool in dpkg-deb dh lintian man systemd-analyze; do
  command -v $tool >/dev/null || fail "$tool is missing: run scripts/setup.sh (debhelper, lintian, man-db, systemd)"
done

step "scripts/package.sh builds the package from the build tree"
start=$SECONDS
BUILDDIR=$B "$SRC/scripts/package.sh" >"$T/package.log" 2>&1 || { tail -40 "$T/package.log"; fail "scripts/package.sh failed"; }
version=$("$B/bin/gpuraid" --version | awk '{print $2}')
DEB=$B/gpuraid_${version}_$(dpkg --print-architecture).deb
[ -f "$DEB" ] || fail "no $DEB"
echo "   ok: $(basename "$DEB"), $(du -h "$DEB" | cut -f1), $((SECONDS - start)) s"

step "contents: the install layout"
dpkg-deb -c "$DEB" | awk '{print $1, $NF}' >"$T/contents"
want() { grep -qE "^$1 \\./$2\$" "$T/contents" || fail "the package has no $2 ($1)"; }
want -rwxr-xr-x usr/bin/gpuraid
want -rwxr-xr-x usr/sbin/gpuraidd
want -rw-r--r-- etc/gpuraid/gpuraidd.conf
for u in gpuraidd.service gpuraid-scrub.service gpuraid-scrub.timer; do want -rw-r--r-- "lib/systemd/system/$u"; done
want -rw-r--r-- usr/lib/sysusers.d/gpuraid.conf
want -rwxr-xr-x usr/libexec/gpuraid/gpuraid-scrub-all
want -rwxr-xr-x usr/libexec/gpuraid/gpuraid-alert
want -rw-r--r-- usr/share/man/man8/gpuraid.8.gz
want -rw-r--r-- usr/share/man/man8/gpuraidd.8.gz
want -rw-r--r-- usr/share/bash-completion/completions/gpuraid
want -rw-r--r-- usr/share/gpuraid/grafana/gpuraid-dashboard.json
want -rw-r--r-- 'usr/share/doc/gpuraid/OPERATIONS.md(.gz)?'
want -rw-r--r-- usr/share/doc/gpuraid/copyright
! grep -qE '\./(usr/)?(include|lib/x86_64-linux-gnu)/|/usr/local/|tests?/|bench' "$T/contents" ||
  fail "the package holds files it should not: $(grep -E '(include|/usr/local/|test|bench)' "$T/contents" | head -3)"
echo "   ok: $(wc -l <"$T/contents") entries"

step "control: Depends from dh_shlibdeps (no CUDA), the conffile, the group and the units in postinst"
DEPENDS=$(dpkg-deb -f "$DEB" Depends)
echo "   Depends: $DEPENDS"
for lib in libc6 liburing2 libisal2 libgrpc; do [[ "$DEPENDS" == *"$lib"* ]] || fail "Depends lacks $lib"; done
[[ "$DEPENDS" != *cuda* ]] || fail "Depends names CUDA: $DEPENDS"
[[ "$DEPENDS" == *sysusers* ]] || fail "Depends has no systemd-sysusers (the gpuraid group): $DEPENDS"
dpkg-deb --ctrl-tarfile "$DEB" | tar -x -C "$T" ./conffiles ./postinst ./prerm ./postrm
grep -qx /etc/gpuraid/gpuraidd.conf "$T/conffiles" || fail "gpuraidd.conf is not a conffile: $(cat "$T/conffiles")"
grep -q '^ *systemd-sysusers .*gpuraid\.conf' "$T/postinst" || fail "postinst does not run systemd-sysusers gpuraid.conf"
grep -q 'deb-systemd-helper.*gpuraidd.service' "$T/postinst" || fail "postinst does not enable gpuraidd.service"
grep -q "deb-systemd-helper enable 'gpuraid-scrub.timer'" "$T/postinst" || fail "postinst does not enable the scrub timer"
# Started (restarted on upgrade): the daemon and the timer; never a scrub or the failure mail.
STARTS=$(grep 'deb-systemd-invoke \$_dh_action' "$T/postinst")
[[ "$STARTS" == *gpuraidd.service* && "$STARTS" != *scrub.service* && "$STARTS" != *alert* ]] ||
  fail "postinst starts: $STARTS"

step "no CUDA library needed at run time (the CUDA runtime is linked in statically when built)"
mkdir "$T/root"
dpkg-deb -x "$DEB" "$T/root"
for p in usr/sbin/gpuraidd usr/bin/gpuraid; do
  NEEDED=$(readelf -d "$T/root/$p" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  [[ "$NEEDED" != *cuda* ]] || fail "$p needs a CUDA library: $NEEDED"
  ldd "$T/root/$p" | grep >/dev/null 'not found' && fail "$p: $(ldd "$T/root/$p" | grep 'not found')"
done
echo "   ok: gpuraidd needs $(readelf -d "$T/root/usr/sbin/gpuraidd" | grep -c NEEDED) libraries, none of CUDA"

step "lintian: no errors"
# Errors fail; warnings are shown (none today); info tags: docs/OPERATIONS.md, Install.
lintian --fail-on error --tag-display-limit 0 "$DEB" >"$T/lintian.txt" 2>&1 || { cat "$T/lintian.txt"; fail "lintian reports errors"; }
grep -E '^[EWX]: ' "$T/lintian.txt" | sed 's/^/   /' || echo "   ok: no errors, no warnings"

step "systemd-analyze verify: the units, with no complaint"
# The packaged programs are not installed on this machine: the unit copies
# point at them in the unpacked package (verify checks that they exist).
mkdir "$T/units"
UNITS=()
for u in gpuraidd.service gpuraid-scrub.service gpuraid-scrub.timer gpuraid-alert-daemon.service; do
  sed -e "s#=\(-\?\)/usr/sbin/#=\1$T/root/usr/sbin/#; s#=/usr/libexec/#=$T/root/usr/libexec/#" \
    "$T/root/lib/systemd/system/$u" >"$T/units/$u"
  UNITS+=("$T/units/$u")
done
# verify exits 0 on unknown keys and the like: any output is a failure.
systemd-analyze verify --man=no "${UNITS[@]}" >"$T/verify.txt" 2>&1 || { cat "$T/verify.txt"; fail "systemd-analyze verify failed"; }
[ ! -s "$T/verify.txt" ] || { cat "$T/verify.txt"; fail "systemd-analyze verify complains"; }
echo "   ok: ${#UNITS[@]} units"

step "man -l renders both pages without a warning"
for p in gpuraid gpuraidd; do
  MANWIDTH=100 man --warnings=all -l "$T/root/usr/share/man/man8/$p.8.gz" >"$T/$p.txt" 2>"$T/man.err" || fail "man -l $p.8.gz failed"
  [ ! -s "$T/man.err" ] || fail "man -l $p.8.gz warns: $(cat "$T/man.err")"
  grep -q '^EXIT STATUS$' "$T/$p.txt" || fail "$p(8) has no EXIT STATUS"
done
echo "   ok: $(wc -l <"$T/gpuraid.txt") and $(wc -l <"$T/gpuraidd.txt") lines"

step "the completion loads in bash and completes gpuraid dg <TAB>"
GOT=$(bash -c 'source "$1" && COMP_WORDS=(gpuraid dg "") COMP_CWORD=2 && _gpuraid_complete && echo "${COMPREPLY[*]}"' \
  _ "$T/root/usr/share/bash-completion/completions/gpuraid") || fail "the completion does not load"
[[ " $GOT " == *" create "*" scrub "* ]] || fail "gpuraid dg <TAB> gave '$GOT'"
echo "   ok: $GOT"

step "the packaged gpuraidd, started as its unit's ExecStart with the packaged config, answers the packaged CLI"
EXEC=$(sed -n 's/^ExecStart=//p' "$T/root/lib/systemd/system/gpuraidd.service")
[ "$EXEC" = "/usr/sbin/gpuraidd --config /etc/gpuraid/gpuraidd.conf" ] || fail "ExecStart is '$EXEC'"
# The config's paths moved under $T (flags win over the file).
"$T/root/usr/sbin/gpuraidd" --config "$T/root/etc/gpuraid/gpuraidd.conf" --state-dir "$T/state" \
  --socket "$T/gpuraid.sock" --socket-group "$(id -gn)" >"$T/daemon.log" 2>&1 &
DPID=$!
for _ in $(seq 100); do
  "$T/root/usr/bin/gpuraid" --socket "$T/gpuraid.sock" info >"$T/info.txt" 2>/dev/null && break
  kill -0 $DPID 2>/dev/null || fail "the packaged gpuraidd exited at start"
  sleep 0.1
done
grep -qE "^version: +$version\$" "$T/info.txt" || fail "gpuraid info did not answer in 10 s: $(cat "$T/info.txt")"
[ "$(stat -c %a "$T/gpuraid.sock")" = 660 ] || fail "socket mode $(stat -c %a "$T/gpuraid.sock"), want 660"
kill -TERM $DPID
rc=0
wait $DPID || rc=$?
DPID=
[ $rc -eq 0 ] || fail "SIGTERM (systemctl stop): gpuraidd exited $rc, want 0 (clean stop)"
echo "   ok: answered, socket 0660, SIGTERM exit 0"
echo "package_deb: OK in $SECONDS s"
