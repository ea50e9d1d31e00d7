// Waits as a reactor does for a parity backend's next poll(): no longer than
// its poll_within_ns() says (at most max_ns), on its event fd when it has
// one (Completion::Event), asleep otherwise (a polled completion word).
#pragma once
#include <poll.h>
#include <time.h>

#include <algorithm>
#include <cstdint>

#include "engine/parity/parity_backend.h"

namespace gpuraid::test {

inline void wait_for_parity(ParityBackend& be, uint64_t max_ns) {
  const uint64_t ns = std::min(be.poll_within_ns(), max_ns);
  if (ns == 0) return;
  const timespec ts{time_t(ns / 1000000000), long(ns % 1000000000)};
  if (be.event_fd() >= 0) {
    pollfd p{be.event_fd(), POLLIN, 0};
    ::ppoll(&p, 1, &ts, nullptr);
  } else {
    nanosleep(&ts, nullptr);
  }
}

}  // namespace gpuraid::test
