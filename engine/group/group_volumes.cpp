// The group's virtual drives on its members (volume_table.h): what lets
// `gpuraid dg import` bring a group's VDs back on another host.
#include <optional>

#include "engine/group/group_impl.h"
#include "engine/group/metadata_io.h"

namespace gpuraid {

bool Group::write_volume_table(const std::vector<VolumeEntry>& volumes, std::string* err) {
  Impl& im = *impl_;
  std::lock_guard<std::mutex> l(im.mu);
  const uint64_t unusable = volume_->failed_mask();
  std::vector<Drive*> to;
  for (uint32_t s = 0; s < im.drives.size(); s++) {
    const bool member = s < volume_->geometry().members;
    if (!im.present(s) || (member && (unusable >> s & 1)) || (!member && im.sb.slots[s].state != SlotState::Spare))
      continue;
    to.push_back(im.drives[s].get());
  }
  // The first write of this run goes past whatever generation the drives
  // hold, and is left out when every drive holds this very table already
  // (the daemon's start asks for it each time).
  if (!im.volume_table_gen) {
    bool current = !to.empty();
    std::optional<uint64_t> gen;
    for (Drive* d : to) {
      VolumeTable t;
      std::string why;
      const bool ours = read_volume_table(*d, &t, &why) && t.group_uuid == im.sb.group_uuid;
      if (ours) im.volume_table_gen = std::max(im.volume_table_gen, t.generation);
      current = current && ours && t.volumes == volumes && (!gen || *gen == t.generation);
      if (ours) gen = t.generation;
    }
    if (current) return true;
  }
  VolumeTable t;
  t.group_uuid = im.sb.group_uuid;
  t.generation = ++im.volume_table_gen;
  t.volumes = volumes;
  std::string failed;
  for (Drive* d : to) {
    std::string e;
    if (!gpuraid::write_volume_table(*d, t, &e)) failed += (failed.empty() ? "" : "; ") + e;
  }
  if (!failed.empty()) return *err = failed, false;
  return true;
}

}  // namespace gpuraid
