// Which host memory a device may read and write in place, and at which
// device address: the registry behind ParityBackend::register_memory. One
// per kind of device (the CUDA runtime's, the host shim's), process-wide,
// as CUDA host registrations are. Ranges are counted: registering a range
// again (same start) only counts it, and the last unregister removes it.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <shared_mutex>
#include <vector>

namespace gpuraid::kern {

class AddressRegistry {
 public:
  // What add() does when the range is new: pin and map it (CUDA), and say
  // where the device sees it. false when that failed.
  struct Mapper {
    virtual ~Mapper() = default;
    virtual bool map(void* p, size_t len, uint64_t* dev) = 0;
    virtual void unmap(void* p) = 0;
  };

  // Registers [p, p+len) through m unless a range starting at p is there
  // already (then only counted; its length must be the same). false when m
  // failed, or when the range overlaps another one.
  enum class Add { Added, Counted, Overlaps, Refused };
  Add add(void* p, size_t len, Mapper& m);
  // Undoes one add(p); unmaps through m when it was the last. false when
  // no range starts at p.
  bool remove(void* p, Mapper& m);
  // Device address of [host, host+len) when it lies inside one range.
  bool translate(uint64_t host, size_t len, uint64_t* dev) const;
  size_t ranges() const;

  struct Entry {
    uint64_t host, len, dev;
  };
  // Changes whenever a range comes or goes.
  uint64_t generation() const { return gen_.load(std::memory_order_acquire); }
  std::vector<Entry> snapshot() const;

 private:
  struct Range {
    size_t len;
    uint64_t dev;  // device address of the first byte
    uint32_t refs;
  };
  mutable std::shared_mutex mu_;
  std::map<uint64_t, Range> ranges_;  // by host start address
  std::atomic<uint64_t> gen_{0};
};

// One executor's copy of a registry, looked up without a lock on the data
// path (a batch translates every pointer it has): it copies the ranges
// again only when the registry's generation moved.
class AddressView {
 public:
  // identity: the device reads any host address in place (ATS, e.g. Grace
  // Hopper): every translation succeeds unchanged.
  explicit AddressView(const AddressRegistry& r, bool identity = false) : r_(r), identity_(identity) {}
  bool translate(uint64_t host, size_t len, uint64_t* dev);

 private:
  const AddressRegistry& r_;
  bool identity_;
  uint64_t gen_ = ~uint64_t(0);
  std::vector<AddressRegistry::Entry> v_;  // sorted by host
  size_t last_ = 0;                        // the range of the last hit
};

}  // namespace gpuraid::kern
