#include "nvme/identity.h"

namespace gpuraid::nvme {

std::string stable_id(const Identity& id) {
  if (!id.nguid.empty()) return "nguid:" + id.nguid;
  if (!id.eui64.empty()) return "eui64:" + id.eui64;
  return "sn:" + id.serial + ":nsid:" + std::to_string(id.nsid);
}

namespace {
bool format_ok(const LbaFormat& f) { return f.data_bytes >= 512 && f.data_bytes <= 4096 && f.metadata_bytes == 0; }
}  // namespace

bool usable_format(const Identity& id, std::string* why) {
  if (id.format_in_use < id.formats.size() && format_ok(id.formats[id.format_in_use])) return true;
  std::string what;
  if (id.lba_bytes == 0) {
    what = "names LBA format " + std::to_string(id.format_in_use) + ", which the namespace does not list";
  } else if (id.lba_bytes > 4096) {
    what = "uses " + std::to_string(id.lba_bytes) + "-byte logical blocks (LBA format " +
           std::to_string(id.format_in_use) + "); gpuraid issues 4 KiB I/O and needs blocks of 512 B to 4 KiB";
  } else if (id.lba_bytes < 512) {
    what = "uses " + std::to_string(id.lba_bytes) + "-byte logical blocks, smaller than 512 B";
  } else {
    what = "carries " + std::to_string(id.metadata_bytes) + " bytes of metadata per " +
           std::to_string(id.lba_bytes) + "-byte block (LBA format " + std::to_string(id.format_in_use) +
           (id.metadata_extended ? ", extended" : ", separate") + "), which the engine cannot use";
  }
  std::string usable;
  for (const auto& f : id.formats)
    if (format_ok(f)) usable += (usable.empty() ? "" : ", ") + std::to_string(f.index) + " (" + std::to_string(f.data_bytes) + " B)";
  *why = "the namespace " + what + "; " +
         (usable.empty() ? std::string("it lists no format gpuraid can use")
                         : "reformat it to one of its usable LBA formats: " + usable +
                               " (nvme format " + (id.block_path.empty() ? "DEVICE" : id.block_path) + " --lbaf=N)");
  return false;
}

}  // namespace gpuraid::nvme
