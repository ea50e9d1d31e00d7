#include "daemon/frontends/nbd_handshake.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "daemon/frontends/nbd_proto.h"

namespace gpuraid {

namespace {

using namespace nbd;
constexpr uint32_t kMaxOptionBytes = 64 << 10;  // options are small: names and info lists
constexpr int kMaxOptions = 256;                // haggling must end

bool sock_read_full(int fd, void* p, size_t n) {
  auto* b = static_cast<uint8_t*>(p);
  while (n) {
    ssize_t r = recv(fd, b, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    b += r;
    n -= size_t(r);
  }
  return true;
}

bool sock_write_full(int fd, const void* p, size_t n) {
  auto* b = static_cast<const uint8_t*>(p);
  while (n) {
    ssize_t r = send(fd, b, n, MSG_NOSIGNAL);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    b += r;
    n -= size_t(r);
  }
  return true;
}

// The client's stream: the socket, or the TLS session on it after STARTTLS.
struct Channel {
  int fd;
  std::unique_ptr<NbdTlsSession> tls;
};

bool read_full(Channel& c, void* p, size_t n) { return c.tls ? c.tls->read_full(p, n) : sock_read_full(c.fd, p, n); }
bool write_full(Channel& c, const void* p, size_t n) {
  return c.tls ? c.tls->write_full(p, n) : sock_write_full(c.fd, p, n);
}

bool reply(Channel& fd, uint32_t opt, uint32_t type, const std::vector<uint8_t>& data = {}) {
  uint8_t h[20];
  put64(h, kRepMagic);
  put32(h + 8, opt);
  put32(h + 12, type);
  put32(h + 16, uint32_t(data.size()));
  return write_full(fd, h, sizeof h) && (data.empty() || write_full(fd, data.data(), data.size()));
}

// NBD_OPT_INFO / NBD_OPT_GO: name, then a list of requested info types.
// Returns the option reply error to send, or 0 when the request is valid.
uint32_t parse_info(const std::vector<uint8_t>& d, const NbdExportInfo& ex, bool* want_name) {
  if (d.size() < 6) return kRepErrInvalid;
  const uint32_t nlen = get32(d.data());
  if (nlen > d.size() - 6) return kRepErrInvalid;
  const std::string name(reinterpret_cast<const char*>(d.data() + 4), nlen);
  const uint16_t nreq = get16(d.data() + 4 + nlen);
  if (d.size() != 6 + nlen + size_t(nreq) * 2) return kRepErrInvalid;
  for (uint16_t i = 0; i < nreq; i++)
    if (get16(d.data() + 6 + nlen + 2 * i) == kInfoName) *want_name = true;
  if (!name.empty() && name != ex.name) return kRepErrUnknown;
  return 0;
}

bool send_info(Channel& fd, uint32_t opt, const NbdExportInfo& ex, bool want_name) {
  std::vector<uint8_t> e(12);
  put16(e.data(), kInfoExport);
  put64(e.data() + 2, ex.size);
  put16(e.data() + 10, ex.tx_flags);
  // Block sizes are always sent: the engine needs 4 KiB-aligned requests.
  std::vector<uint8_t> b(14);
  put16(b.data(), kInfoBlockSize);
  put32(b.data() + 2, ex.min_block);
  put32(b.data() + 6, ex.preferred_block);
  put32(b.data() + 10, ex.max_block);
  if (!reply(fd, opt, kRepInfo, e) || !reply(fd, opt, kRepInfo, b)) return false;
  if (want_name) {
    std::vector<uint8_t> n(2 + ex.name.size());
    put16(n.data(), kInfoName);
    memcpy(n.data() + 2, ex.name.data(), ex.name.size());
    if (!reply(fd, opt, kRepInfo, n)) return false;
  }
  return reply(fd, opt, kRepAck);
}

}  // namespace

bool nbd_handshake(int sock, const NbdExportInfo& ex, const NbdTlsContext* tls,
                   std::unique_ptr<NbdTlsSession>* session, std::string* why) {
  Channel fd{sock, nullptr};
  uint8_t hello[18];
  put64(hello, kInitMagic);
  put64(hello + 8, kOptMagic);
  put16(hello + 16, kFlagFixedNewstyle | kFlagNoZeroes);
  if (!write_full(fd, hello, sizeof hello)) return *why = "client went away before the greeting", false;
  uint8_t cf[4];
  if (!read_full(fd, cf, 4)) return *why = "client sent no flags", false;
  const uint32_t client_flags = get32(cf);
  if (client_flags & ~uint32_t(kFlagFixedNewstyle | kFlagNoZeroes))
    return *why = "client sent unknown handshake flags (not an NBD client?)", false;
  const bool no_zeroes = client_flags & kFlagNoZeroes;

  for (int n = 0; n < kMaxOptions; n++) {
    uint8_t h[16];
    if (!read_full(fd, h, sizeof h)) return *why = "client left during option haggling", false;
    if (get64(h) != kOptMagic) return *why = "bad option magic (garbage handshake)", false;
    const uint32_t opt = get32(h + 8), len = get32(h + 12);
    if (len > kMaxOptionBytes) return *why = "option of " + std::to_string(len) + " bytes refused", false;
    std::vector<uint8_t> d(len);
    if (len && !read_full(fd, d.data(), len)) return *why = "client left inside an option", false;
    // TLS required and not yet on: only STARTTLS and ABORT are answered
    // (NBD_OPT_EXPORT_NAME has no error reply: the protocol says close).
    if (tls && tls->required() && !fd.tls && opt != kOptStartTls && opt != kOptAbort) {
      if (opt == kOptExportName) return *why = "client chose an export without TLS, which this export requires", false;
      if (!reply(fd, opt, kRepErrTlsReqd)) return *why = "client left", false;
      continue;
    }
    switch (opt) {
      case kOptStartTls: {
        const uint32_t e = !tls ? kRepErrUnsup : fd.tls || len ? kRepErrInvalid : 0;
        if (e) {
          if (!reply(fd, opt, e)) return *why = "client left", false;
          break;
        }
        if (!reply(fd, opt, kRepAck)) return *why = "client left", false;
        if (!(fd.tls = tls->handshake(sock, why))) return false;
        break;
      }
      case kOptExportName: {
        // No error reply exists for this option: an unknown name closes.
        const std::string name(d.begin(), d.end());
        if (!name.empty() && name != ex.name) return *why = "unknown export '" + name + "'", false;
        uint8_t r[10 + 124] = {};
        put64(r, ex.size);
        put16(r + 8, ex.tx_flags);
        if (!write_full(fd, r, no_zeroes ? 10 : sizeof r)) return *why = "client left", false;
        *session = std::move(fd.tls);
        return true;
      }
      case kOptAbort:
        reply(fd, opt, kRepAck);
        return *why = "client aborted the handshake", false;
      case kOptList: {
        if (len) {
          if (!reply(fd, opt, kRepErrInvalid)) return *why = "client left", false;
          break;
        }
        std::vector<uint8_t> s(4 + ex.name.size());
        put32(s.data(), uint32_t(ex.name.size()));
        memcpy(s.data() + 4, ex.name.data(), ex.name.size());
        if (!reply(fd, opt, kRepServer, s) || !reply(fd, opt, kRepAck)) return *why = "client left", false;
        break;
      }
      case kOptInfo:
      case kOptGo: {
        bool want_name = false;
        if (uint32_t e = parse_info(d, ex, &want_name)) {
          if (!reply(fd, opt, e)) return *why = "client left", false;
          break;
        }
        if (!send_info(fd, opt, ex, want_name)) return *why = "client left", false;
        if (opt == kOptGo) {
          *session = std::move(fd.tls);
          return true;
        }
        break;
      }
      default:
        // Structured replies, meta contexts, ...: simple replies only.
        if (!reply(fd, opt, kRepErrUnsup)) return *why = "client left", false;
    }
  }
  return *why = "too many options", false;
}

}  // namespace gpuraid
