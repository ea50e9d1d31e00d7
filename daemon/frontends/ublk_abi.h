// The ublk UAPI as Linux 6.12 defines it (include/uapi/linux/ublk_cmd.h),
// declared here from the documented ABI: Debian 12's linux-libc-dev (6.1)
// lacks the ioctl-encoded commands, GET_FEATURES and USER_COPY. Layouts are
// checked with static_asserts; names carry a gpuraid prefix so that they
// never clash with a system <linux/ublk_cmd.h>.
#pragma once
#include <linux/ioctl.h>
#include <cstdint>

namespace gpuraid::ublk {

struct CtrlCmd {              // struct ublksrv_ctrl_cmd
  uint32_t dev_id;
  uint16_t queue_id;
  uint16_t len;
  uint64_t addr;
  uint64_t data[1];
  uint16_t dev_path_len;
  uint16_t pad;
  uint32_t reserved;
};
static_assert(sizeof(CtrlCmd) == 32);

struct DevInfo {              // struct ublksrv_ctrl_dev_info
  uint16_t nr_hw_queues;
  uint16_t queue_depth;
  uint16_t state;
  uint16_t pad0;
  uint32_t max_io_buf_bytes;
  uint32_t dev_id;
  int32_t ublksrv_pid;
  uint32_t pad1;
  uint64_t flags;
  uint64_t ublksrv_flags;
  uint32_t owner_uid;
  uint32_t owner_gid;
  uint64_t reserved1;
  uint64_t reserved2;
};
static_assert(sizeof(DevInfo) == 64);

struct IoDesc {               // struct ublksrv_io_desc (read-only mmap of /dev/ublkcN)
  uint32_t op_flags;          // op in bits 0..7, flags above
  uint32_t nr_sectors;
  uint64_t start_sector;
  uint64_t addr;
};
static_assert(sizeof(IoDesc) == 24);

struct IoCmd {                // struct ublksrv_io_cmd (fits a 64-byte SQE)
  uint16_t q_id;
  uint16_t tag;
  int32_t result;
  uint64_t addr;
};
static_assert(sizeof(IoCmd) == 16);

struct ParamBasic {
  uint32_t attrs;
  uint8_t logical_bs_shift;
  uint8_t physical_bs_shift;
  uint8_t io_opt_shift;
  uint8_t io_min_shift;
  uint32_t max_sectors;
  uint32_t chunk_sectors;
  uint64_t dev_sectors;
  uint64_t virt_boundary_mask;
};
static_assert(sizeof(ParamBasic) == 32);

struct ParamDiscard {
  uint32_t discard_alignment;
  uint32_t discard_granularity;
  uint32_t max_discard_sectors;
  uint32_t max_write_zeroes_sectors;
  uint16_t max_discard_segments;
  uint16_t reserved0;
};
static_assert(sizeof(ParamDiscard) == 20);

struct ParamDevt {
  uint32_t char_major, char_minor, disk_major, disk_minor;
};

struct ParamZoned {
  uint32_t max_open_zones, max_active_zones, max_zone_append_sectors;
  uint8_t reserved[20];
};

struct Params {               // struct ublk_params
  uint32_t len;
  uint32_t types;
  ParamBasic basic;
  ParamDiscard discard;
  ParamDevt devt;
  ParamZoned zoned;
};
static_assert(sizeof(Params) == 112);

// Control commands (ioctl-encoded; the kernel also checks the direction bits
// of GET_FEATURES, so the encodings must be exact).
constexpr uint32_t kCmdGetDevInfo = _IOR('u', 0x02, CtrlCmd);
constexpr uint32_t kCmdAddDev = _IOWR('u', 0x04, CtrlCmd);
constexpr uint32_t kCmdDelDev = _IOWR('u', 0x05, CtrlCmd);
constexpr uint32_t kCmdStartDev = _IOWR('u', 0x06, CtrlCmd);
constexpr uint32_t kCmdStopDev = _IOWR('u', 0x07, CtrlCmd);
constexpr uint32_t kCmdSetParams = _IOWR('u', 0x08, CtrlCmd);
constexpr uint32_t kCmdGetParams = _IOR('u', 0x09, CtrlCmd);
constexpr uint32_t kCmdStartUserRecovery = _IOWR('u', 0x10, CtrlCmd);
constexpr uint32_t kCmdEndUserRecovery = _IOWR('u', 0x11, CtrlCmd);
constexpr uint32_t kCmdGetFeatures = _IOR('u', 0x13, CtrlCmd);

// I/O commands.
constexpr uint32_t kIoFetchReq = _IOWR('u', 0x20, IoCmd);
constexpr uint32_t kIoCommitAndFetchReq = _IOWR('u', 0x21, IoCmd);

// CQE results of I/O commands.
constexpr int kIoResOk = 0;
constexpr int kIoResNeedGetData = 1;
// UBLK_IO_RES_ABORT is -ENODEV: the device is stopping, do not re-arm.

// Ops in IoDesc::op_flags & 0xff, and flags above.
enum : uint8_t {
  kOpRead = 0, kOpWrite = 1, kOpFlush = 2, kOpDiscard = 3, kOpWriteSame = 4, kOpWriteZeroes = 5,
};
constexpr uint32_t kIoFFua = 1u << 13;
constexpr uint32_t kIoFNoUnmap = 1u << 15;

// Device feature flags (UBLK_F_*).
constexpr uint64_t kFSupportZeroCopy = 1ull << 0;
constexpr uint64_t kFUringCmdCompInTask = 1ull << 1;
constexpr uint64_t kFNeedGetData = 1ull << 2;
constexpr uint64_t kFUserRecovery = 1ull << 3;
constexpr uint64_t kFUserRecoveryReissue = 1ull << 4;
constexpr uint64_t kFUnprivilegedDev = 1ull << 5;
constexpr uint64_t kFCmdIoctlEncode = 1ull << 6;
constexpr uint64_t kFUserCopy = 1ull << 7;
constexpr uint64_t kFZoned = 1ull << 8;

// Device states (DevInfo::state).
enum : uint16_t { kStateDead = 0, kStateLive = 1, kStateQuiesced = 2 };

// Parameter types and attributes.
constexpr uint32_t kParamBasic = 1u << 0;
constexpr uint32_t kParamDiscard = 1u << 1;
constexpr uint32_t kAttrReadOnly = 1u << 0;
constexpr uint32_t kAttrRotational = 1u << 1;
constexpr uint32_t kAttrVolatileCache = 1u << 2;
constexpr uint32_t kAttrFua = 1u << 3;

constexpr uint32_t kMaxQueueDepth = 4096;  // UBLK_MAX_QUEUE_DEPTH
constexpr uint32_t kMaxDevId = 1u << 20;   // ids are below 2^20 (idr range)

// Queue q's descriptor array in the mmap of /dev/ublkcN.
constexpr uint64_t desc_mmap_offset(uint32_t q) { return uint64_t(q) * kMaxQueueDepth * sizeof(IoDesc); }

}  // namespace gpuraid::ublk
