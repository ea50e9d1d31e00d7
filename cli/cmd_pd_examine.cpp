// gpuraid pd examine PATH (mdadm --examine): the gpuraid superblock a drive
// holds, read from the drive itself (no daemon, no registry): both copies,
// the newer valid one in full. Reads with O_DIRECT (a running daemon
// writes past the page cache) and never writes; works on a drive a daemon
// holds (no exclusive open).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/cmd_pd_examine.h"
#include "cli/errors.h"
#include "cli/output.h"
#include "engine/group/superblock.h"
#include "engine/group/volume_table.h"

namespace gpuraid::cli {

namespace {

struct Copy {
  DecodeResult result = DecodeResult::NoMagic;
  Superblock sb;
};

// Reads one 4 KiB copy; false with *why when the drive cannot be read.
bool read_copy(int fd, uint64_t off, Copy* c, std::string* why) {
  void* p = nullptr;
  if (posix_memalign(&p, 4096, kSuperblockBytes) != 0) return *why = "out of memory", false;
  std::unique_ptr<void, decltype(&free)> buf(p, &free);
  const ssize_t n = pread(fd, p, kSuperblockBytes, off_t(off));
  if (n != ssize_t(kSuperblockBytes)) return *why = n < 0 ? strerror(errno) : "too small to hold a superblock", false;
  c->result = decode_superblock(static_cast<const uint8_t*>(p), &c->sb);
  return true;
}

// The newer valid volume table copy (what dg import would bring back); false when neither is.
bool read_volumes(int fd, VolumeTable* t) {
  void* p = nullptr;
  if (posix_memalign(&p, 4096, kVolumeTableBytes) != 0) return false;
  std::unique_ptr<void, decltype(&free)> buf(p, &free);
  bool ok = false;
  for (uint64_t off : kVolumeTableOffsets) {
    VolumeTable c;
    std::string why;
    if (pread(fd, p, kVolumeTableBytes, off_t(off)) == ssize_t(kVolumeTableBytes) &&
        decode_volume_table(static_cast<const uint8_t*>(p), &c, &why) && (!ok || c.generation > t->generation))
      *t = c, ok = true;
  }
  return ok;
}

std::string flag_words(uint32_t f) {
  std::string s;
  const std::pair<uint32_t, const char*> names[] = {{kFlagClean, "clean"},
                                                    {kFlagInitialized, "initialized"},
                                                    {kFlagWriteHoleGuard, "write-hole-guard"},
                                                    {kFlagResyncPending, "resync-pending"},
                                                    {kFlagRoomStale, "room-copies-stale"}};
  for (const auto& [bit, name] : names)
    if (f & bit) s += (s.empty() ? "" : ",") + std::string(name);
  return s.empty() ? "-" : s;
}

nlohmann::json to_json(const Superblock& sb) {
  nlohmann::json slots = nlohmann::json::array();
  for (uint32_t s = 0; s < kMaxSlots; s++)
    if (sb.slots[s].state != SlotState::Empty)
      slots.push_back({{"slot", s}, {"uuid", uuid_str(sb.slots[s].uuid)}, {"state", slot_state_name(sb.slots[s].state)},
                       {"rebuild_checkpoint_bytes", sb.slots[s].rebuild_checkpoint}});
  return {{"version", sb.format_version()},
          {"group", sb.name},
          {"group_uuid", uuid_str(sb.group_uuid)},
          {"member_uuid", uuid_str(sb.member_uuid)},
          {"slot", sb.slot},
          {"role", sb.slot < sb.members ? "member" : "spare"},
          {"level", level_name(sb.level)},
          {"members", sb.members},
          {"parity", sb.parity},
          {"subgroups", sb.subgroups},
          {"declustered_data", sb.declustered.data},
          {"declustered_spares", sb.declustered.spares},
          {"strip_bytes", sb.strip_bytes},
          {"data_offset", sb.data_offset},
          {"member_data_bytes", sb.member_data_bytes},
          {"generation", sb.generation},
          {"flags", flag_words(sb.flags)},
          {"bitmap_region_bytes", sb.bitmap_region_bytes},
          {"init_checkpoint", sb.init_checkpoint},
          {"created_unix", sb.created_unix},
          {"guard_log", sb.ppl_slots ? nlohmann::json{{"offset", sb.ppl_offset}, {"slot_bytes", sb.ppl_slot_bytes},
                                                      {"slots", sb.ppl_slots}, {"format", sb.ppl_format}}
                                     : nlohmann::json(nullptr)},
          {"slots", slots}};
}

}  // namespace

void add_pd_examine(Cli& c, CLI::App* pd) {
  auto path = std::make_shared<std::string>();
  auto* s = pd->add_subcommand("examine", "print the gpuraid superblock a drive holds, read from the drive (no daemon)");
  s->add_option("path", *path, "device or file")->required();
  s->callback([&c, path] {
    c.action = [&c, path](Client&) {
      int fd = ::open(path->c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
      if (fd < 0 && errno == EINVAL) fd = ::open(path->c_str(), O_RDONLY | O_CLOEXEC);  // tmpfs: no O_DIRECT
      if (fd < 0) {
        std::string msg = "cannot open " + *path + ": " + strerror(errno);
        // A drive id where a path belongs (examine asks no daemon).
        if (errno == ENOENT && path->find('/') == std::string::npos)
          msg += " (examine reads a device or file, not a drive id: gpuraid pd show " + *path + " names its path)";
        return report_error(kServerError, "examine", msg, false);
      }
      Copy copies[2];
      std::string why;
      bool ok = true;
      for (int i = 0; i < 2 && ok; i++) ok = read_copy(fd, kSuperblockOffsets[i], &copies[i], &why);
      VolumeTable vt;
      const bool have_vt = ok && read_volumes(fd, &vt);
      close(fd);
      if (!ok) return report_error(kServerError, "examine", "cannot read " + *path + ": " + why, false);
      int best = -1;
      for (int i = 0; i < 2; i++)
        if (copies[i].result == DecodeResult::Ok && (best < 0 || copies[i].sb.generation > copies[best].sb.generation))
          best = i;
      if (best < 0)
        return report_error(kServerError, "examine",
                            *path + " holds no valid gpuraid superblock (copy A: " +
                                decode_result_name(copies[0].result) + ", copy B: " +
                                decode_result_name(copies[1].result) + ")",
                            false);
      nlohmann::json j = to_json(copies[best].sb);
      j["path"] = *path;
      j["copies"] = {{"a", decode_result_name(copies[0].result)}, {"b", decode_result_name(copies[1].result)}};
      nlohmann::json vols = nlohmann::json::array();
      if (have_vt && vt.group_uuid == copies[best].sb.group_uuid)
        for (const VolumeEntry& v : vt.volumes)
          vols.push_back({{"id", v.id}, {"offset_bytes", v.offset_bytes}, {"size_bytes", v.size_bytes}});
      j["volumes"] = vols;
      if (c.g.json) return printf("%s\n", j.dump(2).c_str()), int(kOk);
      std::vector<std::pair<std::string, std::string>> kv;
      for (auto it = j.begin(); it != j.end(); ++it)
        if (it.key() != "slots" && it.key() != "volumes") kv.push_back({it.key(), it->is_string() ? it->get<std::string>() : it->dump()});
      print_fields(kv);
      Table t({"SLOT", "STATE", "UUID", "REBUILT"});
      for (const auto& sl : j["slots"])
        t.add({sl["slot"].dump(), sl["state"].get<std::string>(), sl["uuid"].get<std::string>(),
               size_str(sl["rebuild_checkpoint_bytes"].get<uint64_t>())});
      printf("\n");
      t.print();
      if (!vols.empty()) {
        Table vt_table({"VIRTUAL DRIVE", "OFFSET", "SIZE"});
        for (const auto& v : vols)
          vt_table.add({v["id"].get<std::string>(), size_str(v["offset_bytes"].get<uint64_t>()),
                        size_str(v["size_bytes"].get<uint64_t>())});
        printf("\n");
        vt_table.print();
      }
      return int(kOk);
    };
  });
}

}  // namespace gpuraid::cli
