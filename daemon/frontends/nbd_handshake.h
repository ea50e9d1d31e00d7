// The NBD newstyle fixed handshake (option haggling), run on a blocking
// socket by the listener's side before the connection joins a reactor.
#pragma once
#include <cstdint>
#include <string>

namespace gpuraid {

struct NbdExportInfo {
  std::string name;        // also served as the default export ("")
  uint64_t size = 0;
  uint32_t min_block = 4096, preferred_block = 4096, max_block = 1u << 20;
  uint16_t tx_flags = 0;
};

// true: the client chose the export (NBD_OPT_GO or NBD_OPT_EXPORT_NAME) and
// the socket is now in the transmission phase. false: the client left,
// aborted or broke the protocol; *why says which (the caller closes).
bool nbd_handshake(int fd, const NbdExportInfo& ex, std::string* why);

}  // namespace gpuraid
