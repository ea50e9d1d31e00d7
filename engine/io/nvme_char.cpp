#include "engine/io/nvme_char.h"

#include <linux/nvme_ioctl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace gpuraid {

namespace {
// NVMe I/O command opcodes (NVM Command Set).
constexpr uint8_t kOpFlush = 0x00, kOpWrite = 0x01, kOpRead = 0x02;
constexpr uint32_t kCdw12Fua = 1u << 30;

bool read_u64(const std::string& file, uint64_t* v) {
  std::ifstream f(file);
  return bool(f >> *v);
}
}  // namespace

std::string nvme_block_twin(const std::string& char_path) {
  const size_t slash = char_path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "" : char_path.substr(0, slash + 1);
  const std::string base = char_path.substr(slash + 1);
  if (base.rfind("ng", 0) != 0 || base.size() < 5) return "";
  return dir + "nvme" + base.substr(2);
}

std::string nvme_char_twin(const std::string& block_path) {
  const size_t slash = block_path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "" : block_path.substr(0, slash + 1);
  const std::string base = block_path.substr(slash + 1);
  if (base.rfind("nvme", 0) != 0 || base.size() < 7) return "";
  return dir + "ng" + base.substr(4);
}

bool probe_nvme_char(int fd, const std::string& path, NvmeCharInfo* out, std::string* err) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode)) {
    *err = path + " is not a character device (NVMe passthrough takes /dev/ngXnY)";
    return false;
  }
  int nsid = ioctl(fd, NVME_IOCTL_ID);
  if (nsid <= 0) {
    *err = path + " is not an NVMe namespace's generic device (NVME_IOCTL_ID: " + strerror(errno) + ")";
    return false;
  }
  out->nsid = uint32_t(nsid);
  // ngXnY is the generic twin of the block device nvmeXnY.
  const std::string twin = nvme_block_twin(path);
  if (twin.empty()) {
    *err = path + ": expected a name like ngXnY";
    return false;
  }
  const std::string sys = "/sys/block/" + twin.substr(twin.find_last_of('/') + 1);
  uint64_t lba = 0, sectors = 0, max_kb = 0;
  if (!read_u64(sys + "/queue/logical_block_size", &lba) || !read_u64(sys + "/size", &sectors) ||
      !read_u64(sys + "/queue/max_hw_sectors_kb", &max_kb)) {
    *err = path + ": cannot read " + sys + " (the namespace's block device)";
    return false;
  }
  if (lba < 512 || lba > 4096 || (lba & (lba - 1))) {
    *err = path + ": LBA size " + std::to_string(lba) + " bytes is not usable (the engine writes 4 KiB units)";
    return false;
  }
  out->lba_shift = uint32_t(__builtin_ctzll(lba));
  out->size_bytes = sectors << 9;
  out->max_io_bytes = uint32_t(std::min<uint64_t>(max_kb * 1024, 8u << 20));
  return true;
}

int nvme_sync_cmd(int fd, NvmeIo op, uint32_t nsid, uint32_t lba_shift, uint32_t max_io, void* buf, size_t len,
                  uint64_t off) {
  const uint64_t lba = 1ull << lba_shift;
  if ((off | len) & (lba - 1)) return -EINVAL;
  if (max_io < lba) max_io = uint32_t(lba);
  size_t done = 0;
  do {
    nvme_passthru_cmd64 c{};
    c.nsid = nsid;
    if (op == NvmeIo::Flush) {
      c.opcode = kOpFlush;
    } else {
      const uint32_t n = uint32_t(std::min<uint64_t>(len - done, max_io & ~(lba - 1)));
      const uint64_t slba = (off + done) >> lba_shift;
      c.opcode = op == NvmeIo::Write ? kOpWrite : kOpRead;
      c.addr = reinterpret_cast<uint64_t>(static_cast<uint8_t*>(buf) + done);
      c.data_len = n;
      c.cdw10 = uint32_t(slba);
      c.cdw11 = uint32_t(slba >> 32);
      c.cdw12 = (n >> lba_shift) - 1;
      done += n;
    }
    int r = ioctl(fd, NVME_IOCTL_IO64_CMD, &c);
    if (r != 0) return r < 0 ? -errno : -EIO;
  } while (done < len);
  return 0;
}

void prep_nvme_cmd(io_uring_sqe* sqe, int slot, const NvmeCmd& c) {
  memset(sqe, 0, 2 * sizeof(io_uring_sqe));  // SQE128: the command lives in the second half too
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = slot;
  sqe->flags = IOSQE_FIXED_FILE;
  sqe->cmd_op = c.iov ? NVME_URING_CMD_IO_VEC : NVME_URING_CMD_IO;
  auto* cmd = reinterpret_cast<nvme_uring_cmd*>(sqe->cmd);
  cmd->nsid = c.nsid;
  if (c.op == NvmeIo::Flush) {
    cmd->opcode = kOpFlush;
    return;
  }
  cmd->opcode = c.op == NvmeIo::Write ? kOpWrite : kOpRead;
  const uint64_t slba = c.offset >> c.lba_shift;
  const uint32_t nlb = (c.len >> c.lba_shift) - 1;  // zero-based
  cmd->cdw10 = uint32_t(slba);
  cmd->cdw11 = uint32_t(slba >> 32);
  cmd->cdw12 = nlb | (c.op == NvmeIo::Write && c.fua ? kCdw12Fua : 0);
  if (c.iov) {
    cmd->addr = reinterpret_cast<uint64_t>(c.iov);
    cmd->data_len = c.iov_count;
  } else {
    cmd->addr = reinterpret_cast<uint64_t>(c.buf);
    cmd->data_len = c.len;
    if (c.fixed_buffer >= 0) {
      sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
      sqe->buf_index = uint16_t(c.fixed_buffer);
    }
  }
}

}  // namespace gpuraid
