// A member drive: a regular file, a block device, a RAM-backed file (`mem`,
// in /dev/shm, through the same io_uring path) or `null` (no I/O at all, to
// measure engine overhead), or an NVMe namespace's generic char device
// (`nvme-char`, /dev/ngXnY: NVMe commands through io_uring passthrough, see
// nvme_char.h). Opened O_DIRECT; shared by every reactor.
#pragma once
#include <cerrno>
#include <cstdint>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "engine/io/drive_identity.h"
#include "engine/io/drive_throttle.h"
#include "engine/io/fault_injector.h"
#include "engine/io/meta_lane.h"

namespace gpuraid {

enum class DriveType : uint8_t { File, Block, Mem, Null, NvmeChar };
const char* drive_type_name(DriveType t);
bool parse_drive_type(const std::string& s, DriveType* out);
// The type a path names: a block device, a char device (nvme-char), else a file.
DriveType guess_drive_type(const std::string& path);

struct DriveSpec {
  DriveType type = DriveType::File;
  std::string path;          // file/block path; mem: optional (/dev/shm/... made up if empty)
  uint64_t size_bytes = 0;   // file/mem: size to create (0 = use the existing file's size)
  bool create = false;       // file: create (or extend) the file to size_bytes
};

class Drive {
 public:
  ~Drive();
  // Opens (or creates) a drive. nullptr with a reason on error.
  static std::unique_ptr<Drive> open(const DriveSpec& spec, std::string* err);

  DriveType type() const { return type_; }
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }
  uint64_t size_bytes() const { return size_; }
  // Largest single I/O the engine issues to it (block: queue/max_sectors_kb).
  uint32_t max_io_bytes() const { return max_io_; }
  // nvme-char: the namespace id and log2 of its LBA size.
  uint32_t nsid() const { return nsid_; }
  uint32_t lba_shift() const { return lba_shift_; }
  // Whether acknowledged writes may sit in a volatile cache until a flush:
  // files (their device may cache) and block devices whose queue says
  // "write back" (NVMe with a volatile write cache, ...) yes; mem, null and
  // "write through" devices no. The write-hole guard flushes before it
  // reuses log room only where this is true.
  bool volatile_cache() const { return volatile_cache_; }
  // What file or device it is, whatever path named it (see drive_identity.h).
  const DriveIdentity& identity() const { return identity_; }
  // Synchronous I/O off the data path (metadata, probes): pread/pwrite/
  // fdatasync, or NVMe commands by ioctl on an nvme-char drive, run on the
  // drive's metadata lane (meta_lane.h) within the metadata time limit.
  // Return 0 or -errno (a short transfer or an NVMe status is -EIO; past
  // the time limit -ETIMEDOUT). Never call them on a reactor.
  int sync_read(void* buf, size_t len, uint64_t off);
  int sync_write(const void* buf, size_t len, uint64_t off);
  int sync_flush();
  // The lane itself, to issue to several drives at once (nullptr for null
  // drives, which have no storage).
  MetaLane* meta_lane() { return lane_.get(); }
  // The time limit of every synchronous metadata I/O (all drives; the
  // daemon's --metadata-timeout-ms). Default 10 s.
  static void set_metadata_timeout_ms(uint64_t ms);
  static uint64_t metadata_timeout_ns();
  // Claims the drive for this drive object alone (drive_claim.cpp): a
  // second process (another gpuraidd over a copied registry) that claims
  // it fails, saying why, until this object is gone. A group claims its
  // members and spares; idempotent; null drives need none.
  bool claim(std::string* err) const;
  // Lets it go (a drive that left its group while the group keeps the
  // object for I/O still in flight).
  void release_claim() const;
  // Takes over `from`'s claim (the same storage under a new drive object).
  void adopt_claim(const Drive& from) const {
    if (claim_fd_ < 0) std::swap(claim_fd_, from.claim_fd_);
  }
  // A throttled drive (drive_throttle.h; the bench's --drive-bw and
  // friends, tests): set before I/O starts; nullptr when none.
  void set_limits(const DriveLimits& l) { throttle_ = l.any() ? std::make_unique<DriveThrottle>(l) : nullptr; }
  DriveThrottle* throttle() const { return throttle_.get(); }
  // Fault injection: always present, inactive unless a test arms it.
  FaultInjector& faults() { return *faults_; }

 private:
  Drive() = default;
  static std::unique_ptr<Drive> open_unlaned(const DriveSpec& spec, std::string* err);
  static std::unique_ptr<Drive> open_nvme_char(std::unique_ptr<Drive> d, std::string* err);
  DriveType type_ = DriveType::File;
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  uint32_t max_io_ = 1u << 20;
  uint32_t nsid_ = 0, lba_shift_ = 9;
  bool unlink_on_close_ = false;
  mutable int claim_fd_ = -1;  // claim(): the descriptor that holds it (moved by adopt_claim)
  bool volatile_cache_ = true;
  DriveIdentity identity_;
  // Shared with the metadata lane's thread, which may outlive the drive.
  std::shared_ptr<FaultInjector> faults_ = std::make_shared<FaultInjector>();
  std::unique_ptr<MetaLane> lane_;
  std::unique_ptr<DriveThrottle> throttle_;
  void start_lane();
};

// Whether a read's result says the drive lost the block, not the path: a
// medium error (NVMe Unrecovered Read Error, which the block layer returns
// as -ENODATA) or a protection-information mismatch (-EILSEQ).
inline bool medium_error(int err) { return err == -ENODATA || err == -EILSEQ; }

// Why two of these drives are one storage (the same file or device by two
// paths, a partition of another's disk, a loop device over another's
// file), naming both by path; "" when none is. Null drives share nothing.
std::string shared_storage(const std::vector<const Drive*>& drives);

}  // namespace gpuraid
