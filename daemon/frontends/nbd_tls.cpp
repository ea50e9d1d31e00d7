#include "daemon/frontends/nbd_tls.h"
#include "engine/thread_name.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

namespace gpuraid {

namespace {
constexpr size_t kPumpBuf = 256 << 10;
// Pumped records: TLS carries at most 16 KiB of data a record.
constexpr const char* kX509Priority = "NORMAL";
constexpr const char* kPskPriority = "NORMAL:+ECDHE-PSK:+DHE-PSK:+PSK";

std::string tls_error(const char* what, int rc) { return std::string(what) + ": " + gnutls_strerror(rc); }

// A psktool file: USERNAME:HEXKEY lines. GnuTLS reads it at each handshake;
// checked here so that a bad file fails the export, not every client.
bool check_psk_file(const std::string& path, std::string* err) {
  std::ifstream f(path);
  if (!f) return *err = "cannot read the TLS PSK file " + path, false;
  std::string line;
  int keys = 0, n = 0;
  while (std::getline(f, line)) {
    n++;
    if (line.empty()) continue;
    const size_t c = line.find(':');
    const std::string hex = c == std::string::npos ? "" : line.substr(c + 1);
    if (c == 0 || hex.empty() || hex.size() % 2 || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
      return *err = path + " line " + std::to_string(n) + " is not USERNAME:HEXKEY (see psktool)", false;
    keys++;
  }
  if (!keys) return *err = "the TLS PSK file " + path + " holds no key", false;
  return true;
}
}  // namespace

NbdTlsSession::~NbdTlsSession() { gnutls_deinit(s_); }

bool NbdTlsSession::read_full(void* p, size_t n) {
  auto* b = static_cast<uint8_t*>(p);
  while (n) {
    ssize_t r = gnutls_record_recv(s_, b, n);
    if (r == GNUTLS_E_INTERRUPTED) continue;
    if (r <= 0) return false;
    b += r;
    n -= size_t(r);
  }
  return true;
}

bool NbdTlsSession::write_full(const void* p, size_t n) {
  auto* b = static_cast<const uint8_t*>(p);
  while (n) {
    ssize_t r = gnutls_record_send(s_, b, n);
    if (r == GNUTLS_E_INTERRUPTED) continue;
    if (r <= 0) return false;
    b += r;
    n -= size_t(r);
  }
  return true;
}

std::unique_ptr<NbdTlsContext> NbdTlsContext::create(const NbdTlsConfig& c, std::string* err) {
  std::unique_ptr<NbdTlsContext> t(new NbdTlsContext);
  t->mode_ = c.mode;
  if (c.mode == NbdTlsConfig::Mode::Off) {
    if (!c.cert.empty() || !c.key.empty() || !c.ca.empty() || !c.psk.empty())
      return *err = "TLS files were given but TLS is off (give --tls allow or --tls require)", nullptr;
    return t;
  }
  const bool x509 = !c.cert.empty() || !c.key.empty() || !c.ca.empty();
  if (x509 == !c.psk.empty())
    return *err = "TLS needs either a PSK file (--tls-psk) or a certificate, its key and the clients' CA "
                  "(--tls-cert, --tls-key, --tls-ca), not both",
           nullptr;
  if (!c.psk.empty()) {
    if (!check_psk_file(c.psk, err)) return nullptr;
    gnutls_psk_allocate_server_credentials(&t->psk_);
    if (int rc = gnutls_psk_set_server_credentials_file(t->psk_, c.psk.c_str()); rc < 0)
      return *err = tls_error(("TLS PSK file " + c.psk).c_str(), rc), nullptr;
    return t;
  }
  if (c.cert.empty() || c.key.empty() || c.ca.empty())
    return *err = "X.509 TLS needs --tls-cert, --tls-key and --tls-ca (clients must present a certificate from that CA)",
           nullptr;
  gnutls_certificate_allocate_credentials(&t->x509_);
  if (int rc = gnutls_certificate_set_x509_key_file(t->x509_, c.cert.c_str(), c.key.c_str(), GNUTLS_X509_FMT_PEM);
      rc < 0)
    return *err = tls_error(("TLS certificate " + c.cert + " / key " + c.key).c_str(), rc), nullptr;
  int n = gnutls_certificate_set_x509_trust_file(t->x509_, c.ca.c_str(), GNUTLS_X509_FMT_PEM);
  if (n < 0) return *err = tls_error(("TLS CA " + c.ca).c_str(), n), nullptr;
  if (n == 0) return *err = "TLS CA file " + c.ca + " holds no certificate", nullptr;
  gnutls_certificate_set_known_dh_params(t->x509_, GNUTLS_SEC_PARAM_MEDIUM);
  return t;
}

NbdTlsContext::~NbdTlsContext() {
  if (x509_) gnutls_certificate_free_credentials(x509_);
  if (psk_) gnutls_psk_free_server_credentials(psk_);
}

std::unique_ptr<NbdTlsSession> NbdTlsContext::handshake(int fd, std::string* why) const {
  gnutls_session_t s;
  if (int rc = gnutls_init(&s, GNUTLS_SERVER); rc < 0) return *why = tls_error("TLS session", rc), nullptr;
  auto session = std::make_unique<NbdTlsSession>(s);
  int rc;
  if (psk_) {
    rc = gnutls_priority_set_direct(s, kPskPriority, nullptr);
    if (rc >= 0) rc = gnutls_credentials_set(s, GNUTLS_CRD_PSK, psk_);
  } else {
    rc = gnutls_priority_set_direct(s, kX509Priority, nullptr);
    if (rc >= 0) rc = gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, x509_);
    gnutls_certificate_server_set_request(s, GNUTLS_CERT_REQUIRE);
    gnutls_session_set_verify_cert(s, nullptr, 0);  // the chain against the CA; no host name for clients
  }
  if (rc < 0) return *why = tls_error("TLS session setup", rc), nullptr;
  gnutls_transport_set_int(s, fd);
  do rc = gnutls_handshake(s);
  while (rc == GNUTLS_E_INTERRUPTED);
  if (rc < 0) {
    // A blocking socket: EAGAIN is its receive timeout.
    *why = rc == GNUTLS_E_AGAIN ? std::string("TLS handshake timed out") : tls_error("TLS handshake failed", rc);
    if (rc == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR) {
      gnutls_datum_t out{};
      if (gnutls_certificate_verification_status_print(gnutls_session_get_verify_cert_status(s),
                                                       GNUTLS_CRT_X509, &out, 0) == 0) {
        *why += std::string(" (") + reinterpret_cast<const char*>(out.data) + ")";
        gnutls_free(out.data);
      }
    }
    return nullptr;
  }
  return session;
}

std::unique_ptr<NbdTlsPump> NbdTlsPump::start(std::unique_ptr<NbdTlsSession> s, int fd, int* plain,
                                               std::string* err) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return *err = std::string("socketpair: ") + strerror(errno), nullptr;
  std::unique_ptr<NbdTlsPump> p(new NbdTlsPump);
  p->s_ = std::move(s);
  p->fd_ = fd;
  p->pair_ = sv[1];
  *plain = sv[0];
  p->rx_ = std::thread([q = p.get()] {
    set_thread_name("gpuraid-tls-rx");
    q->from_client();
  });
  p->tx_ = std::thread([q = p.get()] {
    set_thread_name("gpuraid-tls-tx");
    q->to_client();
  });
  return p;
}

// Client -> reactor. The client's end (or an error) is an end of stream to
// the reactor, which then closes its end, which ends to_client().
void NbdTlsPump::from_client() {
  std::vector<uint8_t> buf(kPumpBuf);
  for (;;) {
    ssize_t n = gnutls_record_recv(s_->get(), buf.data(), buf.size());
    if (n == GNUTLS_E_INTERRUPTED || n == GNUTLS_E_AGAIN) continue;
    if (n <= 0) break;
    size_t off = 0;
    while (off < size_t(n)) {
      ssize_t w = send(pair_, buf.data() + off, size_t(n) - off, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) goto done;
      off += size_t(w);
    }
  }
done:
  shutdown(pair_, SHUT_WR);
}

// Reactor -> client. When the reactor closes its end, the TLS session is
// ended and the socket shut down, which ends from_client().
void NbdTlsPump::to_client() {
  std::vector<uint8_t> buf(kPumpBuf);
  bool clean = false;
  for (;;) {
    ssize_t n = recv(pair_, buf.data(), buf.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      clean = n == 0;
      break;
    }
    if (!s_->write_full(buf.data(), size_t(n))) break;
  }
  if (clean) {
    timeval tv{2, 0};  // a close_notify to a client that stopped reading must not hold us
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    gnutls_bye(s_->get(), GNUTLS_SHUT_WR);
  }
  shutdown(fd_, SHUT_RDWR);
  shutdown(pair_, SHUT_RDWR);  // from_client() blocked on a full pair
}

NbdTlsPump::~NbdTlsPump() {
  if (rx_.joinable()) rx_.join();
  if (tx_.joinable()) tx_.join();
  s_.reset();
  close(fd_);
  close(pair_);
}

}  // namespace gpuraid
