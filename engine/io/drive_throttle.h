// A drive that behaves like a drive (issue 34): per-direction bandwidth and
// IOPS caps over any drive type (mem and null have none of their own), so
// that rebuild and degraded figures are bound by drive speed as on
// hardware. Two virtual clocks per direction, shared by every reactor, one
// per cap, as cgroup io.max's rbps and riops: an I/O takes bytes /
// bandwidth of the bandwidth clock and 1 / IOPS of the IOPS clock, and
// completes when both say the drive would have finished it (token buckets
// one I/O deep: no burst above the caps). The caps are independent: 4 KiB
// random reads at half the IOPS cap leave most of the bandwidth to a
// rebuild's large reads, as on a drive whose small-I/O rate is bound by its
// flash dies and whose large-I/O rate by its channels and link. (One clock
// charging each I/O the larger of its two costs made the two kinds of load
// add up to more than the drive's time: the foreground kept 0.46 of its
// rate under a rebuild at half its ideal speed, 2026-11-27; 0.69 with
// independent caps, bench/results/2026-11-28-room-rebuild.)
// The I/O itself runs at once; only its completion is held (the reactor's
// delayed list, as injected latency).
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
    uint64_t done = now_ns;
    if (bw) done = take(write ? write_bw_ns_ : read_bw_ns_, bytes * 1000000000ull / bw, now_ns);
    if (iops) {
      const uint64_t t = take(write ? write_iops_ns_ : read_iops_ns_, 1000000000ull / iops, now_ns);
      done = t > done ? t : done;
    }
    return done;
  }

 private:
  // Advances `clock` (when that cap is free again) by cost from
  // max(clock, now_ns); returns its new value.
  static uint64_t take(std::atomic<uint64_t>& clock, uint64_t cost, uint64_t now_ns) {
    uint64_t free = clock.load(std::memory_order_relaxed), done;
    do {
      done = (free > now_ns ? free : now_ns) + cost;
    } while (!clock.compare_exchange_weak(free, done, std::memory_order_relaxed));
    return done;
  }
  DriveLimits limits_;
  std::atomic<uint64_t> read_bw_ns_{0}, write_bw_ns_{0}, read_iops_ns_{0}, write_iops_ns_{0};
};

}  // namespace gpuraid
