// Structure-aware fuzzing of the NBD server's handshake (issue 19):
// nbd_handshake() (daemon/frontends/nbd_handshake.cpp, built into this
// program with AddressSanitizer and UBSan) gets generated client streams on
// a socketpair: a greeting with random flags, then options of every kind
// (GO/INFO with random names and info lists, LIST, EXPORT_NAME, STARTTLS,
// ABORT, unknown ones) with lengths that lie, truncated, bit-flipped, or
// cut off; half the cases against an export that requires TLS (PSK), where
// STARTTLS is followed by garbage instead of a ClientHello.
// Checked for every case: no memory error (ASan aborts), it returns (the
// client's end is closed, so it must), an export is chosen only by a
// well-formed GO/EXPORT_NAME of the right name, never without TLS when TLS
// is required, and the replies the server sent are well-formed.
//   nbd_handshake_fuzz [CASES [SEED]]   (default 100000; the long run: 10000000)
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "daemon/frontends/nbd_handshake.h"
#include "daemon/frontends/nbd_proto.h"

using namespace gpuraid;
using namespace gpuraid::nbd;

namespace {
using Rng = std::mt19937_64;
using Bytes = std::vector<uint8_t>;

void p16(Bytes& b, uint16_t v) { b.push_back(uint8_t(v >> 8)); b.push_back(uint8_t(v)); }
void p32(Bytes& b, uint32_t v) { for (int i = 3; i >= 0; i--) b.push_back(uint8_t(v >> (8 * i))); }
void p64(Bytes& b, uint64_t v) { for (int i = 7; i >= 0; i--) b.push_back(uint8_t(v >> (8 * i))); }

std::string name(Rng& r) {
  switch (r() % 4) {
    case 0: return "";
    case 1: return "vd0";
    case 2: return "vd0" + std::string(r() % 3, 'x');
    default: { std::string s(r() % 40, 0); for (auto& c : s) c = char(r()); return s; }
  }
}

Bytes option_data(Rng& r, uint32_t opt) {
  Bytes d;
  if (opt == kOptGo || opt == kOptInfo) {
    std::string n = name(r);
    p32(d, r() % 8 ? uint32_t(n.size()) : uint32_t(r()));  // sometimes a lying name length
    d.insert(d.end(), n.begin(), n.end());
    uint16_t k = uint16_t(r() % 5);
    p16(d, r() % 8 ? k : uint16_t(r()));
    for (int i = 0; i < k; i++) p16(d, uint16_t(r() % 5));
  } else if (opt == kOptExportName) {
    std::string n = name(r);
    d.assign(n.begin(), n.end());
  } else if (r() % 3 == 0) {
    d.resize(r() % 64);
    for (auto& c : d) c = uint8_t(r());
  }
  return d;
}

Bytes make_case(Rng& r) {
  Bytes b;
  p32(b, r() % 6 ? (r() % 2 ? 3u : 1u) : uint32_t(r()));  // client flags
  const int n = int(r() % 8);
  static const uint32_t kOpts[] = {kOptExportName, kOptAbort, kOptList, kOptStartTls, kOptInfo, kOptGo,
                                   kOptStructuredReply, kOptListMetaContext, kOptSetMetaContext, 999};
  for (int i = 0; i < n; i++) {
    const uint32_t opt = r() % 12 ? kOpts[r() % 10] : uint32_t(r());
    Bytes d = option_data(r, opt);
    p64(b, r() % 30 ? kOptMagic : r());
    p32(b, opt);
    uint32_t len = uint32_t(d.size());
    if (r() % 10 == 0) len = r() % 3 ? len + uint32_t(r() % 16) : uint32_t(r());  // lies about its length
    p32(b, len);
    b.insert(b.end(), d.begin(), d.end());
  }
  if (r() % 4 == 0) {  // after STARTTLS, or just trailing: garbage
    size_t k = r() % 300;
    for (size_t i = 0; i < k; i++) b.push_back(uint8_t(r()));
  }
  if (!b.empty() && r() % 5 == 0) b[r() % b.size()] ^= uint8_t(1u << (r() % 8));  // a flipped bit
  if (!b.empty() && r() % 6 == 0) b.resize(r() % b.size());                    // cut off
  return b;
}

// The server's replies must parse: greeting, then option replies with the
// right magic, each of the length it says (an EXPORT_NAME answer ends them).
bool replies_ok(const Bytes& s) {
  if (s.size() < 18 || get64(s.data()) != kInitMagic || get64(s.data() + 8) != kOptMagic) return false;
  size_t at = 18;
  while (at + 20 <= s.size()) {
    if (get64(s.data() + at) != kRepMagic) return s.size() - at == 10 || s.size() - at == 134;  // EXPORT_NAME
    if (get32(s.data() + at + 8) == kOptStartTls && get32(s.data() + at + 12) == kRepAck) return true;  // then TLS
    at += 20 + get32(s.data() + at + 16);
  }
  return at == s.size() || s.size() - at == 10;
}

std::string psk_file() {
  char path[] = "/tmp/nbd-fuzz-psk-XXXXXX";
  int fd = mkstemp(path);
  const std::string line = "alice:00112233445566778899aabbccddeeff\n";
  if (fd < 0 || write(fd, line.data(), line.size()) != ssize_t(line.size())) abort();
  close(fd);
  return path;
}
}  // namespace

int main(int argc, char** argv) {
  const uint64_t cases = argc > 1 ? strtoull(argv[1], nullptr, 10) : 100000;
  // A new seed each run (printed, and in a failure's line: `nbd_handshake_fuzz N SEED` replays it), so
  // CI explores new inputs every time instead of repeating one stream.
  const uint64_t seed = argc > 2 ? strtoull(argv[2], nullptr, 10) : uint64_t(std::random_device{}()) << 32 ^ uint64_t(time(nullptr));
  NbdExportInfo ex;
  ex.name = "vd0";
  ex.size = 1 << 20;
  const std::string psk = psk_file();
  NbdTlsConfig tc;
  tc.mode = NbdTlsConfig::Mode::Require;
  tc.psk = psk;
  std::string err;
  auto tls = NbdTlsContext::create(tc, &err);
  unlink(psk.c_str());
  if (!tls) {
    fprintf(stderr, "nbd_handshake_fuzz: TLS context: %s\n", err.c_str());
    return 2;
  }
  Rng r(seed);
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t chosen = 0, failures = 0;
  Bytes out(1 << 20);
  for (uint64_t i = 0; i < cases; i++) {
    Bytes in = make_case(r);
    const bool require_tls = r() % 2;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return perror("socketpair"), 2;
    // The whole client stream goes in first (cases are small), then EOF.
    if (write(sv[1], in.data(), in.size()) != ssize_t(in.size())) return perror("write"), 2;
    shutdown(sv[1], SHUT_WR);
    std::unique_ptr<NbdTlsSession> session;
    std::string why;
    const bool ok = nbd_handshake(sv[0], ex, require_tls ? tls.get() : nullptr, &session, &why);
    close(sv[0]);
    size_t got = 0;
    for (ssize_t n; (n = read(sv[1], out.data() + got, out.size() - got)) > 0;) got += size_t(n);
    close(sv[1]);
    Bytes reply(out.begin(), out.begin() + long(got));
    bool bad = false;
    if (ok && require_tls && !session) bad = true, why = "an export chosen without TLS, which it requires";
    if (!ok && why.empty()) bad = true, why = "failed without saying why";
    if (!replies_ok(reply)) bad = true, why = "malformed replies (" + std::to_string(got) + " bytes)";
    if (bad) {
      failures++;
      fprintf(stderr, "case %llu (seed %llu): %s; input:", (unsigned long long)i, (unsigned long long)seed, why.c_str());
      for (uint8_t c : in) fprintf(stderr, " %02x", c);
      fprintf(stderr, "\n");
      if (failures > 10) break;
    }
    chosen += ok;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("nbd_handshake_fuzz: %llu cases (seed %llu) in %.1f s, %llu chose the export, %llu failures\n",
         (unsigned long long)cases, (unsigned long long)seed, s, (unsigned long long)chosen,
         (unsigned long long)failures);
  return failures ? 1 : 0;
}
