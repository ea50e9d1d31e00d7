// A volume: a drive group's members under one geometry, serving logical
// reads, writes and flushes. Requests are split per stripe; writes to one
// stripe are ordered by the stripe lock table; parity goes through the
// submitting reactor's parity backend; member I/O through its io_uring.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/codec.h"
#include "engine/engine.h"
#include "engine/geometry.h"
#include "engine/io_request.h"
#include "engine/stripe_lock.h"

namespace gpuraid {

struct Op;
class OpPool;
// Deletes an OpPool where its type is complete (ops/), so that volume.h
// need not expose it.
struct OpPoolDeleter {
  void operator()(OpPool* p) const;
};

struct VolumeStats {
  std::atomic<uint64_t> full_stripe_writes{0}, rmw_writes{0}, rcw_writes{0}, degraded_writes{0};
  std::atomic<uint64_t> degraded_reads{0}, merged_writes{0}, retried_reads{0};
};

class Volume {
 public:
  struct Events {
    // Called once per member failure, from the reactor thread that saw it.
    std::function<void(uint32_t member, int err)> member_failed;
    // Called once when failures exceed what the level survives.
    std::function<void()> group_failed;
  };

  ~Volume();
  // Checks members against the geometry (count, sizes). data_offset: bytes
  // reserved at the start of every member (metadata), a multiple of 4 KiB.
  static std::unique_ptr<Volume> create(Engine& engine, const Geometry& geo,
                                        std::vector<Drive*> members, uint64_t data_offset,
                                        std::string* err);
  // The geometry these drives allow: the smallest member sets the size,
  // and *note says so when members differ.
  static bool fit_geometry(Level level, uint32_t ec_parity, uint32_t strip_bytes,
                           const std::vector<Drive*>& members, uint64_t data_offset, Geometry* out,
                           std::string* note, std::string* err);

  const Geometry& geometry() const { return geo_; }
  const Codec& codec() const { return codec_; }
  uint64_t size_bytes() const { return geo_.capacity_bytes(); }
  uint64_t data_offset() const { return data_offset_; }
  Drive* member(uint32_t i) const { return members_[i]; }
  uint32_t member_slot(uint32_t i) const { return slots_[i]; }
  const VolumeStats& stats() const { return stats_; }
  void set_events(Events ev) { events_ = std::move(ev); }

  // Starts a request on reactor r (the calling thread must own r). Bad
  // input is refused here with -EINVAL/-ERANGE, nothing started, and
  // *why (if given) says what was wrong; otherwise returns 0 and
  // req->done runs later on r.
  int submit(Reactor& r, IoRequest* req, std::string* why = nullptr);
  bool validate(const IoRequest& req, std::string* why) const;

  uint64_t failed_mask() const { return failed_.load(std::memory_order_acquire); }
  bool failed() const { return !geo_.survives(failed_mask()); }
  // Marks a member failed (an I/O error, a vanished drive, or an operator).
  // Returns true when this call changed its state.
  bool fail_member(uint32_t member, int err);
  // Parity of this stripe may be stale (set by the write-intent bitmap):
  // writes there must not use read-modify-write.
  std::function<bool(uint64_t stripe)> parity_suspect;

  // Engine-internal (ops).
  StripeLockTable& locks() { return locks_; }
  OpPool& op_pool(uint32_t reactor);
  VolumeStats& mutable_stats() { return stats_; }
  void dispatch_read(Reactor& r, IoRequest* req, uint64_t off, uint64_t len, uint8_t* buf);
  static void finish_part(IoRequest* req, int result);

 private:
  Volume(Engine& e, const Geometry& g) : engine_(e), geo_(g), codec_(g) {}
  void dispatch_write(Reactor& r, IoRequest* req);
  void dispatch_flush(Reactor& r, IoRequest* req);

  Engine& engine_;
  Geometry geo_;
  Codec codec_;
  std::vector<Drive*> members_;
  std::vector<uint32_t> slots_;
  uint64_t data_offset_ = 0;
  std::atomic<uint64_t> failed_{0};
  std::atomic<bool> group_failed_reported_{false};
  StripeLockTable locks_;
  std::vector<std::unique_ptr<OpPool, OpPoolDeleter>> op_pools_;  // one per reactor
  Events events_;
  VolumeStats stats_;
};

}  // namespace gpuraid
