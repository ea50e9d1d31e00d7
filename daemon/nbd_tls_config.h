// How an NBD export speaks TLS (NBD_OPT_STARTTLS), as the control plane
// hands it to the frontends (daemon/frontends/nbd_tls.h does the TLS).
#pragma once
#include <string>

namespace gpuraid {

struct NbdTlsConfig {
  enum class Mode { Off, Allow, Require };
  Mode mode = Mode::Off;
  // X.509: server certificate and key, and the CA client certificates must
  // chain to (a client without one is refused). PSK instead: a psktool file.
  std::string cert, key, ca, psk;
};

}  // namespace gpuraid
