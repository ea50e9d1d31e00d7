// A drive that behaves like a drive (issue 34): per-direction bandwidth and
// IOPS caps over any drive type (mem and null have none of their own), so
// that rebuild and degraded figures are bound by drive speed as on
// hardware. A virtual clock per direction, shared by every reactor: an I/O
// costs max(bytes / bandwidth, 1 / IOPS) of the drive's time and completes
// when the drive would have finished it (a token bucket one I/O deep:
// no burst above the caps). The I/O itself runs at once; only its
// completion is held (the reactor's delayed list, as injected latency).
#pragma once
#include <atomic>
#include <cstdint>

namespace gpuraid {

struct DriveLimits {
  uint64_t read_bytes_s = 0, write_bytes_s = 0;  // 0: no cap
  uint64_t read_iops = 0, write_iops = 0;
  bool any() const { return read_bytes_s || write_bytes_s || read_iops || write_iops; }
};

class DriveThrottle {
 public:
  explicit DriveThrottle(const DriveLimits& l) : limits_(l) {}
  const DriveLimits& limits() const { return limits_; }
  // The time (now_ns's clock) at which an I/O of `bytes` issued at now_ns
  // completes on this drive; now_ns when its direction has no cap.
  uint64_t reserve(bool write, uint64_t bytes, uint64_t now_ns) {
    const uint64_t bw = write ? limits_.write_bytes_s : limits_.read_bytes_s;
    const uint64_t iops = write ? limits_.write_iops : limits_.read_iops;
    uint64_t cost = 0;
    if (bw) cost = bytes * 1000000000ull / bw;
    if (iops) cost = cost > 1000000000ull / iops ? cost : 1000000000ull / iops;
    if (!cost) return now_ns;
    std::atomic<uint64_t>& clock = write ? write_free_ns_ : read_free_ns_;
    uint64_t free = clock.load(std::memory_order_relaxed), done;
    do {
      done = (free > now_ns ? free : now_ns) + cost;
    } while (!clock.compare_exchange_weak(free, done, std::memory_order_relaxed));
    return done;
  }

 private:
  DriveLimits limits_;
  std::atomic<uint64_t> read_free_ns_{0}, write_free_ns_{0};  // when the drive is free again
};

}  // namespace gpuraid
