// NVMe passthrough commands as the reactor builds them (the bytes the
// controller sees), and the refusals of drives that are no NVMe generic
// device. The commands' effect on a real controller is checked in the VM
// lane (guest-ublk.sh, step passthru: the same bytes as the block path).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/nvme_ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/io/drive.h"
#include "engine/io/nvme_char.h"
#include "engine/sync_io.h"
#include "engine/volume.h"

namespace gpuraid {
namespace {

struct Sqe128 {
  io_uring_sqe sqe[2];
};

const nvme_uring_cmd& cmd_of(const Sqe128& s) { return *reinterpret_cast<const nvme_uring_cmd*>(s.sqe[0].cmd); }

TEST(NvmeChar, ReadOnA512ByteFormat) {
  Sqe128 s;
  memset(&s, 0xab, sizeof s);  // leftovers of an earlier command must not leak into this one
  alignas(4096) static uint8_t buf[64 << 10];
  NvmeCmd c;
  c.op = NvmeIo::Read;
  c.nsid = 3;
  c.lba_shift = 9;
  c.offset = (1ull << 33) + 8192;  // above 4 GiB: the SLBA's high word is used
  c.len = sizeof buf;
  c.buf = buf;
  prep_nvme_cmd(&s.sqe[0], 7, c);
  EXPECT_EQ(s.sqe[0].opcode, IORING_OP_URING_CMD);
  EXPECT_EQ(s.sqe[0].fd, 7);
  EXPECT_EQ(s.sqe[0].flags, IOSQE_FIXED_FILE);
  EXPECT_EQ(s.sqe[0].cmd_op, uint32_t(NVME_URING_CMD_IO));
  EXPECT_EQ(s.sqe[0].uring_cmd_flags, 0u);
  const auto& n = cmd_of(s);
  EXPECT_EQ(n.opcode, 0x02);
  EXPECT_EQ(n.nsid, 3u);
  const uint64_t slba = c.offset >> 9;
  EXPECT_EQ(n.cdw10, uint32_t(slba));
  EXPECT_EQ(n.cdw11, uint32_t(slba >> 32));
  EXPECT_EQ(n.cdw12, (sizeof buf >> 9) - 1) << "NLB is zero-based, no FUA on reads";
  EXPECT_EQ(n.addr, reinterpret_cast<uint64_t>(buf));
  EXPECT_EQ(n.data_len, sizeof buf);
  EXPECT_EQ(n.metadata, 0u);
  EXPECT_EQ(n.cdw13, 0u);
  EXPECT_EQ(n.timeout_ms, 0u);
}

TEST(NvmeChar, FuaWriteFromARegisteredBufferOnA4KFormat) {
  Sqe128 s;
  memset(&s, 0xcd, sizeof s);
  alignas(4096) static uint8_t buf[8192];
  NvmeCmd c;
  c.op = NvmeIo::Write;
  c.nsid = 1;
  c.lba_shift = 12;
  c.offset = 40960;
  c.len = sizeof buf;
  c.buf = buf;
  c.fixed_buffer = 2;
  c.fua = true;
  prep_nvme_cmd(&s.sqe[0], 0, c);
  const auto& n = cmd_of(s);
  EXPECT_EQ(n.opcode, 0x01);
  EXPECT_EQ(n.cdw10, 10u);
  EXPECT_EQ(n.cdw12, 1u | (1u << 30)) << "two 4 KiB blocks, FUA";
  EXPECT_EQ(s.sqe[0].uring_cmd_flags, IORING_URING_CMD_FIXED);
  EXPECT_EQ(s.sqe[0].buf_index, 2);
}

TEST(NvmeChar, VectoredReadAndFlush) {
  Sqe128 s;
  alignas(4096) static uint8_t a[4096], b[8192];
  iovec iov[2] = {{a, sizeof a}, {b, sizeof b}};
  NvmeCmd c;
  c.op = NvmeIo::Read;
  c.nsid = 1;
  c.lba_shift = 9;
  c.offset = 0;
  c.len = sizeof a + sizeof b;
  c.iov = iov;
  c.iov_count = 2;
  prep_nvme_cmd(&s.sqe[0], 1, c);
  EXPECT_EQ(s.sqe[0].cmd_op, uint32_t(NVME_URING_CMD_IO_VEC));
  EXPECT_EQ(cmd_of(s).addr, reinterpret_cast<uint64_t>(iov));
  EXPECT_EQ(cmd_of(s).data_len, 2u) << "a vector's length is its entry count";
  EXPECT_EQ(cmd_of(s).cdw12, uint32_t(c.len / 512 - 1));
  NvmeCmd f;
  f.op = NvmeIo::Flush;
  f.nsid = 9;
  prep_nvme_cmd(&s.sqe[0], 1, f);
  EXPECT_EQ(cmd_of(s).opcode, 0x00);
  EXPECT_EQ(cmd_of(s).nsid, 9u);
  EXPECT_EQ(cmd_of(s).addr, 0u);
  EXPECT_EQ(cmd_of(s).cdw12, 0u);
}

TEST(NvmeChar, BlockTwin) {
  EXPECT_EQ(nvme_block_twin("/dev/ng0n1"), "/dev/nvme0n1");
  EXPECT_EQ(nvme_block_twin("/dev/ng12n3"), "/dev/nvme12n3");
  EXPECT_EQ(nvme_block_twin("/dev/sda"), "");
  EXPECT_EQ(nvme_char_twin("/dev/nvme12n3"), "/dev/ng12n3");
  EXPECT_EQ(nvme_char_twin("/dev/sda"), "");
}

TEST(NvmeChar, ResultsMapToTheEngines) {
  EXPECT_EQ(nvme_cmd_result(0, 65536), 65536);
  EXPECT_EQ(nvme_cmd_result(0x281, 4096), -ENODATA) << "unrecovered read error: a medium error, as the block layer says";
  EXPECT_EQ(nvme_cmd_result(0x4281, 4096), -ENODATA) << "the same with Do Not Retry";
  EXPECT_EQ(nvme_cmd_result(0x280, 4096), -EIO) << "write fault: any other NVMe status";
  EXPECT_EQ(nvme_cmd_result(0x6, 4096), -EIO) << "internal error";
  EXPECT_EQ(nvme_cmd_result(-EINVAL, 4096), -EINVAL);
}

TEST(NvmeChar, OnlyGenericNvmeDevicesAreTaken) {
  std::string err;
  char path[] = "/tmp/gpuraid-nvme-char-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  DriveSpec s;
  s.type = DriveType::NvmeChar;
  s.path = path;
  EXPECT_FALSE(Drive::open(s, &err));
  EXPECT_NE(err.find("not a character device"), std::string::npos) << err;
  s.path = "/dev/null";  // a char device, but no NVMe namespace
  EXPECT_FALSE(Drive::open(s, &err));
  EXPECT_NE(err.find("NVME_IOCTL_ID"), std::string::npos) << err;
  unlink(path);
  EXPECT_EQ(guess_drive_type("/dev/null"), DriveType::NvmeChar);
  EXPECT_EQ(guess_drive_type("/nonexistent/x"), DriveType::File);
}

TEST(NvmeChar, BigRingsCarryOrdinaryMemberIoToo) {
  // EngineConfig::nvme_passthru sets every ring up with SQE128|CQE32; the
  // other members (and ublk's commands) share those rings.
  EngineConfig ec;
  ec.nvme_passthru = true;
  std::string err;
  auto e = Engine::create(ec, &err);
  ASSERT_TRUE(e) << "SQE128|CQE32 rings: " << err;
  std::vector<std::unique_ptr<Drive>> drives;
  std::vector<Drive*> members;
  for (int i = 0; i < 4; i++) {
    DriveSpec s;
    s.type = DriveType::Mem;
    s.size_bytes = 8u << 20;
    drives.push_back(Drive::open(s, &err));
    ASSERT_TRUE(drives.back()) << err;
    members.push_back(drives.back().get());
  }
  Geometry g;
  ASSERT_TRUE(Volume::fit_geometry(Level::R5, 0, 64 << 10, members, 0, &g, nullptr, &err)) << err;
  auto v = Volume::create(*e, g, members, 0, &err);
  ASSERT_TRUE(v) << err;
  Reactor& r = e->reactor(0);
  Reactor::set_current(&r);
  std::vector<uint8_t> out(256 << 10), in(out.size());
  for (size_t i = 0; i < out.size(); i++) out[i] = uint8_t(i * 31 + 7);
  uint8_t* wb = static_cast<uint8_t*>(aligned_alloc(4096, out.size()));
  uint8_t* rb = static_cast<uint8_t*>(aligned_alloc(4096, in.size()));
  memcpy(wb, out.data(), out.size());
  EXPECT_EQ(sync_io(*v, r, IoRequest::Write, 12288, out.size(), wb, true), 0);
  EXPECT_EQ(sync_io(*v, r, IoRequest::Read, 12288, in.size(), rb), 0);
  EXPECT_EQ(memcmp(wb, rb, in.size()), 0);
  free(wb);
  free(rb);
  DriveSpec s;
  s.type = DriveType::NvmeChar;
  s.path = "/dev/null";
  EXPECT_FALSE(Drive::open(s, &err)) << "no NVMe here";
}

}  // namespace
}  // namespace gpuraid
