// A drive that behaves like a drive (issue 34): per-direction bandwidth and
// IOPS caps over any drive type (mem and null have none of their own), so
// that rebuild and degraded figures are bound by drive speed as on
// hardware. A virtual clock per direction, shared by every reactor: an I/O
// costs max(bytes / bandwidth, 1 / IOPS) of the drive's time and completes
// when the drive would have finished it (a token bucket one I/O deep:
// no burst above the caps). The I/O itself runs at once; only its
// completion is held (the reactor's delayed list, as injected latency).
//
// An I/O larger than kChunkBytes is served in chunks, each reserved when the
// one before is done (the reactor keeps it on its delayed list meanwhile,
// MemberIo::throttle_left), so that I/Os issued in between take their turn:
// a drive's internal parallelism shares its bandwidth among what it has
// queued, and a 4 KiB read never waits for a whole 1 MiB one, as it did
// when each I/O took the clock whole (a rebuild's runs on a 16 MiB/s drive
// held each foreground read behind 62 ms of them: issue 34's figures under
// load). The IOPS floor counts once, on the first chunk.
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
  static constexpr uint32_t kChunkBytes = 128u << 10;

  explicit DriveThrottle(const DriveLimits& l) : limits_(l) {}
  const DriveLimits& limits() const { return limits_; }
  // The time (now_ns's clock) at which `bytes` issued at now_ns are done on
  // this drive; now_ns when its direction has no cap. first: an I/O's first
  // (or only) chunk, which pays the IOPS floor; a later chunk pays its bytes.
  uint64_t reserve(bool write, uint64_t bytes, uint64_t now_ns, bool first = true) {
    const uint64_t bw = write ? limits_.write_bytes_s : limits_.read_bytes_s;
    const uint64_t iops = write ? limits_.write_iops : limits_.read_iops;
    uint64_t cost = 0;
    if (bw) cost = bytes * 1000000000ull / bw;
    if (iops && first) cost = cost > 1000000000ull / iops ? cost : 1000000000ull / iops;
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
