#!/usr/bin/env bash
# Build under sanitizers and run the unit and model lanes (ctest labels; nothing
# that needs a GPU or a VM): scripts/sanitize.sh [asan|tsan|all] (default all).
#   asan: AddressSanitizer + LeakSanitizer + UndefinedBehaviorSanitizer (preset asan, build-asan/),
#         the daemon too: the NBD transmission and gRPC API fuzzers run against a sanitized
#         gpuraidd (ctest daemon_nbd_fuzz_tx, api_fuzz; issue 19), then every daemon e2e script
#         (ctest daemon_*: the CLI, nbdcopy, openssl... against a sanitized gpuraidd: gRPC, NBD and
#         its TLS pumps, the event hook and log, rebuilds, hot replace, import, two daemons;
#         GPURAID_ASAN_E2E=0 leaves them out, a ctest -R pattern runs those it names);
#         GPURAID_SANITIZE_DAEMON=0 skips all of that
#   tsan: ThreadSanitizer, engine only (preset tsan, build-tsan/)
#   tsan-daemon: ThreadSanitizer over the daemon's threads (preset tsan-daemon, build-tsan-daemon/):
#         gpuraidd and the CLI built with TSan, the daemon's e2e scripts of its threads (gRPC, NBD
#         and its TLS pumps, the event hook and log, rebuilds, hot replace, import, two daemons; the
#         GPURAID_ASAN_E2E list of .ci/run, or GPURAID_TSAN_E2E) against it. gRPC, protobuf, absl and
#         OpenSSL are Debian's, not instrumented: what they synchronise by their own atomics TSan
#         does not see, so reports with their frames are silenced (scripts/sanitize/tsan-daemon.supp
#         says what that costs: races between a gRPC handler and our other threads go unseen). By
#         .ci/run runs it after the asan lane (2026-11-28, 2-core AMD EPYC, no compiler cache:
#         build 99 s, the 11 scripts 73 s). It found the reactor counters' race and a use after
#         free at a stop during a rebuild (background.h, live_), both fixed. The CLI is build/'s
#         (a TSan CLI spent minutes making `vd write --pattern`'s bytes), GPURAID_TIMEOUT=600, and
#         interceptors called from gRPC, protobuf and OpenSSL are not checked (tsan-daemon.supp:
#         each word they copied was a suppressed race, and a 4 MiB ReadVolume took up to minutes).
# Every sanitizer stops the test at its first report and fails it. Suppressions
# (scripts/sanitize/*.supp) are for third-party code only, each with its reason.
# Extra arguments go to ctest, e.g. scripts/sanitize.sh asan -R group_test.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
which=${1:-all}
shift || true
case $which in
  asan) lanes=(asan) ;;
  tsan) lanes=(tsan) ;;
  tsan-daemon) lanes=(tsan-daemon) ;;
  all) lanes=(asan tsan) ;;
  *) echo "usage: $0 [asan|tsan|tsan-daemon|all] [ctest args...]" >&2; exit 2 ;;
esac
jobs=${JOBS:-$(nproc)}
launchers=()
if command -v ccache >/dev/null; then
  launchers=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi

# halt_on_error: the first report ends the test (and fails it).
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1"
export LSAN_OPTIONS="suppressions=$root/scripts/sanitize/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1"
export TSAN_OPTIONS="halt_on_error=1:abort_on_error=1:second_deadlock_stack=1:suppressions=$root/scripts/sanitize/tsan.supp"

# cli_target DIR CHOICE: with CHOICE release and build/bin/gpuraid there,
# links it into DIR/bin and prints nothing; otherwise removes such a link
# (never build through it into build/) and prints gpuraid, the target to build.
cli_target() {
  if [[ $2 == release && -x build/bin/gpuraid ]]; then
    mkdir -p "$1/bin" && ln -sf "$root/build/bin/gpuraid" "$1/bin/gpuraid"
  else
    if [[ -L $1/bin/gpuraid ]]; then rm -f "$1/bin/gpuraid"; fi
    echo gpuraid
  fi
}

for lane in "${lanes[@]}"; do
  dir=build-$lane
  if [[ $lane == tsan-daemon ]]; then
    start=$SECONDS
    cmake --preset "$lane" "${launchers[@]}" >/dev/null
    # tsan.supp's entries and the lane's own (tsan-daemon.supp says what they cost).
    cat "$root/scripts/sanitize/tsan.supp" "$root/scripts/sanitize/tsan-daemon.supp" >"$dir/tsan.supp"
    export TSAN_OPTIONS="halt_on_error=1:abort_on_error=1:second_deadlock_stack=1:suppressions=$root/$dir/tsan.supp"
    # The CLI from build/ when there is one (GPURAID_TSAN_CLI=tsan: its own):
    # the lane is about the daemon's threads, and a TSan CLI spent minutes
    # making `vd write --pattern`'s bytes (the e2e scripts timed out).
    cmake --build "$dir" -j"$jobs" --target gpuraidd $(cli_target "$dir" "${GPURAID_TSAN_CLI:-release}")
    built=$SECONDS
    # A TSan daemon answers 5-15 times slower: the CLI's 60 s deadline cut
    # long calls (vd write of 48 MiB) short.
    export GPURAID_TIMEOUT=${GPURAID_TIMEOUT:-600}
    pattern=${GPURAID_TSAN_E2E:-'^daemon_(lifecycle|bad_input|event_hook|events_persist|states|readd|hot_replace|import|two_daemons|nbd_tls|nbd_inflight)$'}
    ctest --test-dir "$dir" --output-on-failure -j"$jobs" -L '^e2e$' -R "$pattern" "$@"
    echo "sanitize.sh: $lane: build $((built - start)) s, daemon e2e scripts $((SECONDS - built)) s" |
      tee -a "${GPURAID_TIMES:-/dev/null}"
    continue
  fi
  skip=()
  # The asan lane also fuzzes a sanitized daemon (the CLI drives the NBD one).
  daemon_tests=()
  # (Not when ctest arguments pick tests: scripts/sanitize.sh asan -R group_test.)
  [[ $lane == asan && $# -eq 0 && ${GPURAID_SANITIZE_DAEMON:-1} == 1 ]] && daemon_tests=(daemon_nbd_fuzz_tx api_fuzz)
  # parity_backend_test is single-threaded parity arithmetic: nothing for
  # TSan to check, and 350 s under it (ASan runs it).
  [[ $lane == tsan ]] && skip=(-E '^parity_backend_test$')
  # GPURAID_ASAN_SKIP: a ctest -E pattern of unit and model tests the asan
  # lane leaves out (.ci/run: the crash tests, which it runs on the release build).
  [[ $lane == asan && -n ${GPURAID_ASAN_SKIP:-} ]] && skip=(-E "$GPURAID_ASAN_SKIP")
  start=$SECONDS
  cmake --preset "$lane" "${launchers[@]}" >/dev/null
  # Build only what the unit and model tests run: a test's program is the
  # target of the test's name, except for tests that run another test's
  # program with other arguments (crash_test_degraded_raid5 runs crash_test,
  # itself a test): test names that are no target are left out.
  mapfile -t targets < <(comm -12 \
    <(ctest --test-dir "$dir" -N -L '^(unit|model)$' | sed -n 's/^ *Test *#[0-9]*: //p' | sort -u) \
    <(cmake --build "$dir" -- -t targets all | sed -n 's/^\([A-Za-z0-9_]*\): phony$/\1/p' | sort -u))
  if ((${#daemon_tests[@]})); then
    targets+=(gpuraidd api_fuzz_test)
    # The CLI only sets the NBD fuzzer's daemon up: GPURAID_ASAN_CLI=release
    # (.ci/run, right after building build/) takes build/bin/gpuraid instead
    # of building a sanitized one (a few minutes on 2 cores).
    targets+=($(cli_target "$dir" "${GPURAID_ASAN_CLI:-asan}"))
  fi
  cmake --build "$dir" -j"$jobs" --target "${targets[@]}"
  built=$SECONDS
  # ASan: as many at once as there are cores (they pass beside the VM lanes
  # in the release run too); TSan, slower and hungrier: one at a time.
  par=1
  [[ $lane == asan ]] && par=$jobs
  ctest --test-dir "$dir" --output-on-failure -j"$par" -L '^(unit|model)$' "${skip[@]}" "$@"
  if ((${#daemon_tests[@]})); then
    fuzz=$SECONDS
    # Side by side (each fuzzes a daemon of its own).
    ctest --test-dir "$dir" --output-on-failure -j"$par" -R "^($(IFS='|'; echo "${daemon_tests[*]}"))\$"
    # Their case counts (ctest shows a passing test's output only in its log).
    grep -h -E '^(fuzz-tx|api_fuzz): ' "$dir/Testing/Temporary/LastTest.log" || true
    echo "sanitize.sh: $lane: daemon fuzzers $((SECONDS - fuzz)) s"
    echo "$lane: daemon fuzzers                $((SECONDS - fuzz)) s" >>"${GPURAID_TIMES:-/dev/null}"
    e2e_pattern=${GPURAID_ASAN_E2E:-^daemon_}
    if [[ $e2e_pattern != 0 ]]; then
      e2e=$SECONDS
      ctest --test-dir "$dir" --output-on-failure -j"$par" -L '^e2e$' -R "$e2e_pattern" -E '^daemon_nbd_fuzz_tx$'
      echo "sanitize.sh: $lane: daemon e2e scripts $((SECONDS - e2e)) s"
      echo "$lane: daemon e2e scripts            $((SECONDS - e2e)) s" >>"${GPURAID_TIMES:-/dev/null}"
    fi
  fi
  echo "sanitize.sh: $lane: build $((built - start)) s, tests $((SECONDS - built)) s"
  echo "$lane: build $((built - start)) s, unit+model tests, fuzzers, e2e $((SECONDS - built)) s" >>"${GPURAID_TIMES:-/dev/null}"
done
