// A drive's synchronous metadata I/O (superblocks, bitmap blocks, the log
// area's invalidation, the flushes before checkpoints) runs on a thread of
// the drive's own, each request with a time limit: the caller waits at
// most that long, then gets -ETIMEDOUT and goes on (the member is then
// failed, as for any metadata write error), while the I/O may stay stuck in
// the kernel (a member behind a lost NVMe-oF path, a hung device). Until it
// returns, the lane answers every new request with -ETIMEDOUT at once
// ("stuck"), so that one hung member costs a caller one time limit, not one
// per metadata write.
//
// The lane works on its own copy of the bytes and its own descriptor (a dup
// of the drive's), so that an I/O that returns after the caller gave up, or
// after the drive closed, never touches freed memory or a descriptor number
// reused meanwhile. Written by hand: no packaged library bounds a blocking
// pwrite or fdatasync.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace gpuraid {

class FaultInjector;
enum class DriveType : uint8_t;

// What the lane's thread does its I/O on. Each call returns 0 or -errno (a
// short transfer or an NVMe status is -EIO); faults armed on the drive's
// injector apply (kHangSyncWrites holds a write until disarmed or the lane
// stops).
struct MetaTarget {
  int fd = -1;
  DriveType type{};
  uint32_t nsid = 0, lba_shift = 9, max_io = 1u << 20;
  std::shared_ptr<FaultInjector> faults;
  const std::atomic<bool>* stopping = nullptr;
  int read(void* buf, size_t len, uint64_t off) const;
  int write(const void* buf, size_t len, uint64_t off) const;
  int flush() const;
};

class MetaLane {
 public:
  // Runs on the lane's thread over the request's own buffer.
  using Fn = std::function<int(const MetaTarget&, uint8_t* buf)>;
  struct Job;
  using Ticket = std::shared_ptr<Job>;

  // Takes the target's descriptor (closed by the lane's thread when it ends).
  explicit MetaLane(MetaTarget t);
  // Stops the thread; one stuck in the kernel is left to end on its own.
  ~MetaLane();
  MetaLane(const MetaLane&) = delete;
  MetaLane& operator=(const MetaLane&) = delete;

  // Queues fn over a buffer of len bytes (4 KiB-aligned, zeroed; in, when
  // given, copied into it first). A stuck lane answers -ETIMEDOUT at once.
  Ticket submit(Fn fn, size_t len = 0, const void* in = nullptr);
  // Waits for the request until deadline_ns (mono_ns): its result, with
  // the buffer copied to out (out_len bytes) when it succeeded; or
  // -ETIMEDOUT, after which the lane counts as stuck until it returns.
  // Only time the lane spends in the device counts: past the deadline it
  // looks at the lane every 5 ms and gives up once the lane's thread was
  // in the device (not runnable) at every look for 50 ms, or after one
  // limit more of looks; a pause of the whole process (stopped, starved of
  // CPU) counts as one look.
  int wait(const Ticket& t, uint64_t deadline_ns, void* out = nullptr, size_t out_len = 0);
  int run(Fn fn, size_t len, const void* in, void* out, uint64_t timeout_ns) {
    return wait(submit(std::move(fn), len, in), deadline_after(timeout_ns), out, len);
  }
  bool stuck() const;
  // The lane's thread is inside a request and asleep in the kernel (not
  // runnable): waiting for the device.
  bool waiting_for_device() const;
  static uint64_t deadline_after(uint64_t timeout_ns);

 private:
  struct State;
  static void loop(std::shared_ptr<State> s);
  std::shared_ptr<State> s_;
};

}  // namespace gpuraid
