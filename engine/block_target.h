// What a frontend (ublk, NBD) exports: a block target. A virtual drive is
// an extent of a drive group's volume.
#pragma once
#include <cerrno>
#include <cstdint>
#include <string>

#include "engine/volume.h"

namespace gpuraid {

class BlockTarget {
 public:
  virtual ~BlockTarget() = default;
  virtual uint64_t size_bytes() const = 0;
  virtual uint32_t min_io_bytes() const = 0;      // the strip: smaller writes cost a read-modify-write
  virtual uint32_t optimal_io_bytes() const = 0;  // the full stripe's data
  // As Volume::submit, with offsets relative to the target. On completion
  // req->offset is relative to the underlying volume.
  virtual int submit(Reactor& r, IoRequest* req, std::string* why = nullptr) = 0;
};

// A virtual drive: bytes [base, base + size) of a volume.
class VolumeExtent final : public BlockTarget {
 public:
  VolumeExtent(Volume& v, uint64_t base, uint64_t size) : v_(v), base_(base), size_(size) {}
  uint64_t size_bytes() const override { return size_; }
  uint32_t min_io_bytes() const override { return v_.geometry().strip_bytes; }
  uint32_t optimal_io_bytes() const override { return uint32_t(v_.geometry().stripe_data_bytes()); }
  int submit(Reactor& r, IoRequest* req, std::string* why = nullptr) override {
    if (req->op != IoRequest::Flush && (req->offset > size_ || req->length > size_ - req->offset)) {
      if (why) *why = "I/O past the end of the virtual drive";
      return -EINVAL;
    }
    if (req->op != IoRequest::Flush) req->offset += base_;
    int rc = v_.submit(r, req, why);
    if (rc != 0 && req->op != IoRequest::Flush) req->offset -= base_;
    return rc;
  }
  Volume& volume() { return v_; }
  uint64_t base() const { return base_; }

 private:
  Volume& v_;
  uint64_t base_, size_;
};

}  // namespace gpuraid
