// The NBD newstyle fixed handshake (option haggling), run on a blocking
// socket by the listener's side before the connection joins a reactor.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "daemon/frontends/nbd_tls.h"

namespace gpuraid {

struct NbdExportInfo {
  std::string name;        // also served as the default export ("")
  uint64_t size = 0;
  uint32_t min_block = 4096, preferred_block = 4096, max_block = 1u << 20;
  uint16_t tx_flags = 0;
};

// true: the client chose the export (NBD_OPT_GO or NBD_OPT_EXPORT_NAME) and
// the socket is now in the transmission phase; *session is its TLS session
// when the client upgraded with NBD_OPT_STARTTLS (else null). false: the
// client left, aborted, broke the protocol or failed TLS; *why says which
// (the caller closes). tls: null when the export has TLS off; when it
// requires TLS, every option before STARTTLS but ABORT gets
// NBD_REP_ERR_TLS_REQD (NBD_OPT_EXPORT_NAME closes).
bool nbd_handshake(int fd, const NbdExportInfo& ex, const NbdTlsContext* tls,
                   std::unique_ptr<NbdTlsSession>* session, std::string* why);

}  // namespace gpuraid
