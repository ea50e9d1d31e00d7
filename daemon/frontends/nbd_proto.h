// NBD wire protocol constants (newstyle fixed handshake, simple replies),
// from the protocol document (github.com/NetworkBlockDevice/nbd, doc/proto.md).
#pragma once
#include <endian.h>

#include <cstdint>
#include <cstring>

namespace gpuraid::nbd {

constexpr uint64_t kInitMagic = 0x4e42444d41474943ull;   // "NBDMAGIC"
constexpr uint64_t kOptMagic = 0x49484156454F5054ull;    // "IHAVEOPT"
constexpr uint64_t kRepMagic = 0x3e889045565a9ull;       // option reply
constexpr uint32_t kRequestMagic = 0x25609513;
constexpr uint32_t kSimpleReplyMagic = 0x67446698;

// Handshake flags (server) and client flags.
constexpr uint16_t kFlagFixedNewstyle = 1 << 0;
constexpr uint16_t kFlagNoZeroes = 1 << 1;

// Options.
enum : uint32_t {
  kOptExportName = 1, kOptAbort = 2, kOptList = 3, kOptStartTls = 5, kOptInfo = 6, kOptGo = 7,
  kOptStructuredReply = 8, kOptListMetaContext = 9, kOptSetMetaContext = 10,
};
// Option replies.
constexpr uint32_t kRepAck = 1, kRepServer = 2, kRepInfo = 3;
constexpr uint32_t kRepErr = 1u << 31;
constexpr uint32_t kRepErrUnsup = kRepErr | 1, kRepErrPolicy = kRepErr | 2, kRepErrInvalid = kRepErr | 3,
                   kRepErrTlsReqd = kRepErr | 5,
                   kRepErrUnknown = kRepErr | 6, kRepErrTooBig = kRepErr | 9;
// NBD_INFO types.
enum : uint16_t { kInfoExport = 0, kInfoName = 1, kInfoDescription = 2, kInfoBlockSize = 3 };

// Transmission flags.
enum : uint16_t {
  kTxHasFlags = 1 << 0, kTxReadOnly = 1 << 1, kTxSendFlush = 1 << 2, kTxSendFua = 1 << 3,
  kTxRotational = 1 << 4, kTxSendTrim = 1 << 5, kTxSendWriteZeroes = 1 << 6, kTxCanMultiConn = 1 << 8,
};
// Commands and their flags.
enum : uint16_t {
  kCmdRead = 0, kCmdWrite = 1, kCmdDisc = 2, kCmdFlush = 3, kCmdTrim = 4, kCmdCache = 5, kCmdWriteZeroes = 6,
  kCmdBlockStatus = 7,
};
constexpr uint16_t kCmdFlagFua = 1 << 0;
constexpr uint16_t kCmdFlagNoHole = 1 << 1;

// Errors on the wire (Linux values, as the protocol defines them).
enum : uint32_t { kEPERM = 1, kEIO = 5, kENOMEM = 12, kEINVAL = 22, kENOSPC = 28, kEOVERFLOW = 75,
                  kENOTSUP = 95, kESHUTDOWN = 108 };

constexpr size_t kRequestBytes = 28;
constexpr size_t kReplyBytes = 16;

inline uint16_t get16(const uint8_t* p) { uint16_t v; memcpy(&v, p, 2); return be16toh(v); }
inline uint32_t get32(const uint8_t* p) { uint32_t v; memcpy(&v, p, 4); return be32toh(v); }
inline uint64_t get64(const uint8_t* p) { uint64_t v; memcpy(&v, p, 8); return be64toh(v); }
inline void put16(uint8_t* p, uint16_t v) { v = htobe16(v); memcpy(p, &v, 2); }
inline void put32(uint8_t* p, uint32_t v) { v = htobe32(v); memcpy(p, &v, 4); }
inline void put64(uint8_t* p, uint64_t v) { v = htobe64(v); memcpy(p, &v, 8); }

// An engine result (-errno) as an NBD error.
inline uint32_t wire_error(int neg_errno) {
  switch (-neg_errno) {
    case 0: return 0;
    case 1: return kEPERM;
    case 12: return kENOMEM;
    case 22: return kEINVAL;
    case 28: return kENOSPC;
    case 75: return kEOVERFLOW;
    case 95: return kENOTSUP;
    case 108: return kESHUTDOWN;
    default: return kEIO;
  }
}

}  // namespace gpuraid::nbd
