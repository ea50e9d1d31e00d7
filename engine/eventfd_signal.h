// Raising an eventfd (a wake-up). Its only failure that can happen is
// EAGAIN when the counter is full, and a full counter is readable anyway,
// so the wake-up is never lost; any other failure (EBADF, EINVAL: a closed
// or wrong fd) is a bug and stops the process.
#pragma once
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "engine/invariant.h"

namespace gpuraid {

inline void signal_eventfd(int fd) {
  const uint64_t one = 1;
  const ssize_t n = write(fd, &one, sizeof one);
  GPR_ASSERT(n == ssize_t(sizeof one) || errno == EAGAIN, "eventfd %d could not be raised (errno %d)", fd, errno);
}

}  // namespace gpuraid
