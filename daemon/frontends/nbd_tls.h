// TLS for NBD exports (GnuTLS): an export's credentials (X.509 with client
// certificates verified against a CA, or TLS-PSK), the server side of
// NBD_OPT_STARTTLS, and the pump that carries a TLS connection's
// transmission phase to its reactor: the reactor serves the plain end of a
// socketpair (the same io_uring code as a plain client), two threads per
// connection move records between the TLS session and the pair.
#pragma once
#include <gnutls/gnutls.h>

#include <memory>
#include <string>
#include <thread>

#include "daemon/nbd_tls_config.h"

namespace gpuraid {

// One TLS session on a connected socket (blocking reads and writes).
class NbdTlsSession {
 public:
  explicit NbdTlsSession(gnutls_session_t s) : s_(s) {}
  ~NbdTlsSession();
  NbdTlsSession(const NbdTlsSession&) = delete;
  NbdTlsSession& operator=(const NbdTlsSession&) = delete;
  bool read_full(void* p, size_t n);
  bool write_full(const void* p, size_t n);
  gnutls_session_t get() const { return s_; }

 private:
  gnutls_session_t s_;
};

// An export's TLS credentials, loaded (and checked) when the export starts.
class NbdTlsContext {
 public:
  static std::unique_ptr<NbdTlsContext> create(const NbdTlsConfig& c, std::string* err);
  ~NbdTlsContext();
  bool required() const { return mode_ == NbdTlsConfig::Mode::Require; }
  // The TLS handshake on fd (after NBD_OPT_STARTTLS was acknowledged). A
  // client certificate that does not chain to the CA, or a wrong PSK, fails.
  std::unique_ptr<NbdTlsSession> handshake(int fd, std::string* why) const;

 private:
  NbdTlsContext() = default;
  NbdTlsConfig::Mode mode_ = NbdTlsConfig::Mode::Off;
  gnutls_certificate_credentials_t x509_ = nullptr;
  gnutls_psk_server_credentials_t psk_ = nullptr;
};

// Carries one TLS connection between its socket and a socketpair whose other
// end the reactor serves. Ends when either side ends (the client leaves, or
// the reactor closes or shuts down its end); the destructor waits for that.
class NbdTlsPump {
 public:
  // Takes the session and the socket fd (closed by the pump). *plain: the
  // reactor's end.
  static std::unique_ptr<NbdTlsPump> start(std::unique_ptr<NbdTlsSession> s, int fd, int* plain, std::string* err);
  ~NbdTlsPump();

 private:
  NbdTlsPump() = default;
  void from_client();
  void to_client();
  std::unique_ptr<NbdTlsSession> s_;
  int fd_ = -1, pair_ = -1;
  std::thread rx_, tx_;
};

}  // namespace gpuraid
