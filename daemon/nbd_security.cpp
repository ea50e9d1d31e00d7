#include "daemon/nbd_security.h"

#include "daemon/listeners.h"
#include "daemon/validate.h"

namespace gpuraid::daemon {

namespace {
bool any_file(const v1::NbdSecurity& s) {
  return !s.tls_cert().empty() || !s.tls_key().empty() || !s.tls_ca().empty() || !s.tls_psk().empty();
}
}  // namespace

NbdTlsConfig tls_config(const v1::NbdSecurity& s) {
  NbdTlsConfig c;
  c.mode = s.tls() == v1::NBD_TLS_REQUIRE ? NbdTlsConfig::Mode::Require
           : s.tls() == v1::NBD_TLS_ALLOW ? NbdTlsConfig::Mode::Allow
                                          : NbdTlsConfig::Mode::Off;
  c.cert = s.tls_cert();
  c.key = s.tls_key();
  c.ca = s.tls_ca();
  c.psk = s.tls_psk();
  return c;
}

grpc::Status check_nbd_security(const std::string& vd, const std::string& listen, const v1::NbdSecurity& s) {
  if (!v1::NbdTls_IsValid(s.tls())) return invalid("unknown NBD TLS mode " + std::to_string(int(s.tls())));
  const bool tls_on = s.tls() == v1::NBD_TLS_ALLOW || s.tls() == v1::NBD_TLS_REQUIRE;
  if (!tls_on && any_file(s)) return invalid("TLS files were given but TLS is off: add --tls require (or allow)");
  if (tls_on) {
    const bool x509 = !s.tls_cert().empty() || !s.tls_key().empty() || !s.tls_ca().empty();
    if (!x509 && s.tls_psk().empty())
      return invalid("NBD TLS needs its keys: --nbd-tls-psk FILE, or --nbd-tls-cert, --nbd-tls-key and --nbd-tls-ca");
    if (x509 && !s.tls_psk().empty())
      return invalid("NBD TLS takes --nbd-tls-psk FILE or --nbd-tls-cert, --nbd-tls-key and --nbd-tls-ca, not both");
    if (x509 && (s.tls_cert().empty() || s.tls_key().empty() || s.tls_ca().empty()))
      return invalid("X.509 NBD TLS needs --nbd-tls-cert, --nbd-tls-key and --nbd-tls-ca (clients must present a certificate "
                     "signed by that CA)");
    for (auto& [what, f] : {std::pair<const char*, const std::string*>{"--nbd-tls-cert", &s.tls_cert()},
                            {"--nbd-tls-key", &s.tls_key()}, {"--nbd-tls-ca", &s.tls_ca()}, {"--nbd-tls-psk", &s.tls_psk()}})
      if (!f->empty())
        if (auto st = check_path(what, *f); !st.ok()) return st;
  }
  std::string host;
  int port = 0;
  const bool tcp = listen.rfind("tcp:", 0) == 0 && split_host_port(listen.substr(4), &host, &port);
  const bool exposed = tcp && !is_loopback(host);
  if (s.insecure_listen()) {
    if (!exposed) return invalid("--insecure-listen is only for a TCP address that is not loopback");
    if (s.tls() == v1::NBD_TLS_REQUIRE) return invalid("--insecure-listen and --tls require exclude each other");
    return grpc::Status::OK;
  }
  if (exposed && s.tls() != v1::NBD_TLS_REQUIRE)
    return invalid("refusing plain NBD on " + quote(host) + ": anyone who can reach port " + std::to_string(port) +
                   " could read and overwrite " + quote(vd) +
                   ". Require TLS (--tls require with --nbd-tls-cert/--nbd-tls-key/--nbd-tls-ca, or --nbd-tls-psk), listen on "
                   "loopback or a Unix socket, or accept the risk with --insecure-listen");
  return grpc::Status::OK;
}

}  // namespace gpuraid::daemon
