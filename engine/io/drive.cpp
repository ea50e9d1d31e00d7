#include "engine/io/drive.h"

#include "engine/io/nvme_char.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace gpuraid {

const char* drive_type_name(DriveType t) {
  switch (t) {
    case DriveType::File: return "file";
    case DriveType::Block: return "block";
    case DriveType::Mem: return "mem";
    case DriveType::Null: return "null";
    case DriveType::NvmeChar: return "nvme-char";
  }
  return "?";
}

bool parse_drive_type(const std::string& s, DriveType* out) {
  if (s == "file") *out = DriveType::File;
  else if (s == "block") *out = DriveType::Block;
  else if (s == "nvme-char") *out = DriveType::NvmeChar;
  else if (s == "mem") *out = DriveType::Mem;
  else if (s == "null") *out = DriveType::Null;
  else return false;
  return true;
}

static std::atomic<uint64_t> g_metadata_timeout_ns{10'000'000'000ull};

void Drive::set_metadata_timeout_ms(uint64_t ms) { g_metadata_timeout_ns.store(ms * 1'000'000ull); }
uint64_t Drive::metadata_timeout_ns() { return g_metadata_timeout_ns.load(std::memory_order_relaxed); }

// The lane works on a descriptor of its own (see meta_lane.h).
void Drive::start_lane() {
  if (fd_ < 0) return;
  MetaTarget t;
  t.fd = fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  t.type = type_;
  t.nsid = nsid_;
  t.lba_shift = lba_shift_;
  t.max_io = max_io_;
  t.faults = faults_;
  lane_ = std::make_unique<MetaLane>(std::move(t));
}

int Drive::sync_read(void* buf, size_t len, uint64_t off) {
  if (!lane_) return -EBADF;
  return lane_->run([len, off](const MetaTarget& t, uint8_t* b) { return t.read(b, len, off); }, len, nullptr, buf,
                    metadata_timeout_ns());
}

int Drive::sync_write(const void* buf, size_t len, uint64_t off) {
  if (!lane_) return -EBADF;
  return lane_->run([len, off](const MetaTarget& t, uint8_t* b) { return t.write(b, len, off); }, len, buf, nullptr,
                    metadata_timeout_ns());
}

int Drive::sync_flush() {
  if (!lane_) return -EBADF;
  return lane_->run([](const MetaTarget& t, uint8_t*) { return t.flush(); }, 0, nullptr, nullptr,
                    metadata_timeout_ns());
}

DriveType guess_drive_type(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return DriveType::File;
  if (S_ISBLK(st.st_mode)) return DriveType::Block;
  if (S_ISCHR(st.st_mode)) return DriveType::NvmeChar;
  return DriveType::File;
}

Drive::~Drive() {
  if (claim_fd_ >= 0) close(claim_fd_);
  if (fd_ >= 0) close(fd_);
  if (unlink_on_close_) unlink(path_.c_str());
}

static std::string errno_msg(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + strerror(errno);
}

// The kernel's per-request limit for a block device, from sysfs.
static uint32_t block_max_io(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return 1u << 20;
  std::ifstream f("/sys/dev/block/" + std::to_string(major(st.st_rdev)) + ":" +
                  std::to_string(minor(st.st_rdev)) + "/queue/max_sectors_kb");
  uint64_t kb = 0;
  if (!(f >> kb) || kb < 4) return 1u << 20;
  return uint32_t(std::min<uint64_t>(kb * 1024, 8u << 20));
}

// Whether a block device's writes may sit in a volatile cache until a
// flush: its queue's write_cache ("write back" or "write through"; a
// partition reads its disk's). Unknown: assumed volatile.
static bool block_volatile_cache(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return true;
  const std::string dev = "/sys/dev/block/" + std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev));
  for (const char* q : {"/queue/write_cache", "/../queue/write_cache"}) {
    std::ifstream f(dev + q);
    std::string mode;
    if (std::getline(f, mode)) return mode != "write through";
  }
  return true;
}

std::unique_ptr<Drive> Drive::open_nvme_char(std::unique_ptr<Drive> d, std::string* err) {
  d->fd_ = ::open(d->path_.c_str(), O_RDWR | O_CLOEXEC);
  if (d->fd_ < 0) {
    *err = errno_msg("cannot open", d->path_);
    return nullptr;
  }
  NvmeCharInfo info;
  if (!probe_nvme_char(d->fd_, d->path_, &info, err)) return nullptr;
  d->size_ = info.size_bytes;
  d->max_io_ = info.max_io_bytes;
  d->nsid_ = info.nsid;
  d->lba_shift_ = info.lba_shift;
  d->identity_ = identify_fd(d->fd_);
  return d;
}

std::unique_ptr<Drive> Drive::open(const DriveSpec& spec, std::string* err) {
  std::unique_ptr<Drive> d = open_unlaned(spec, err);
  if (d) d->start_lane();
  return d;
}

std::unique_ptr<Drive> Drive::open_unlaned(const DriveSpec& spec, std::string* err) {
  std::unique_ptr<Drive> d(new Drive());
  d->type_ = spec.type;
  d->path_ = spec.path;
  if (spec.type == DriveType::Null) {
    if (spec.size_bytes == 0) {
      *err = "a null drive needs a size";
      return nullptr;
    }
    d->size_ = spec.size_bytes;
    if (d->path_.empty()) d->path_ = "null";
    d->volatile_cache_ = false;
    return d;
  }
  bool create = spec.create;
  if (spec.type == DriveType::Mem) {
    if (spec.size_bytes == 0) {
      *err = "a mem drive needs a size";
      return nullptr;
    }
    d->volatile_cache_ = false;  // RAM: nothing a flush would add
    if (d->path_.empty()) {
      static std::atomic<int> seq{0};
      d->path_ = "/dev/shm/gpuraid-mem-" + std::to_string(getpid()) + "-" + std::to_string(seq++);
      d->unlink_on_close_ = true;
    }
    create = true;
  }
  if (spec.type == DriveType::NvmeChar) return open_nvme_char(std::move(d), err);
  int flags = O_RDWR | O_DIRECT | O_CLOEXEC;
  if (spec.type == DriveType::Block) flags |= O_EXCL;  // exclusive claim, as md does
  if (create) flags |= O_CREAT;
  d->fd_ = ::open(d->path_.c_str(), flags, 0600);
  if (d->fd_ < 0) {
    *err = errno_msg("cannot open", d->path_);
    return nullptr;
  }
  struct stat st;
  if (fstat(d->fd_, &st) != 0) {
    *err = errno_msg("cannot stat", d->path_);
    return nullptr;
  }
  d->identity_ = identify_fd(d->fd_);
  if (S_ISBLK(st.st_mode)) {
    if (spec.type != DriveType::Block) {
      *err = d->path_ + " is a block device: add it as drive type block";
      return nullptr;
    }
    uint64_t bytes = 0;
    if (ioctl(d->fd_, BLKGETSIZE64, &bytes) != 0) {
      *err = errno_msg("cannot read the size of", d->path_);
      return nullptr;
    }
    d->size_ = bytes;
    d->max_io_ = block_max_io(d->fd_);
    d->volatile_cache_ = block_volatile_cache(d->fd_);
    return d;
  }
  if (!S_ISREG(st.st_mode)) {
    *err = d->path_ + " is neither a regular file nor a block device";
    return nullptr;
  }
  if (spec.type == DriveType::Block) {
    *err = d->path_ + " is a regular file, not a block device";
    return nullptr;
  }
  if (create && spec.size_bytes > uint64_t(st.st_size)) {
    if (ftruncate(d->fd_, off_t(spec.size_bytes)) != 0) {
      *err = errno_msg("cannot size", d->path_);
      return nullptr;
    }
    st.st_size = off_t(spec.size_bytes);
  }
  d->size_ = uint64_t(st.st_size);
  return d;
}

std::string shared_storage(const std::vector<const Drive*>& drives) {
  for (size_t i = 0; i < drives.size(); i++)
    for (size_t j = i + 1; j < drives.size(); j++) {
      std::string why = shared_storage(drives[j]->identity(), drives[j]->path(), drives[i]->identity(), drives[i]->path());
      if (!why.empty()) return why;
    }
  return "";
}

}  // namespace gpuraid
