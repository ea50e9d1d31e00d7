#include "cli/cmd_pd_nvme.h"

#include "cli/output.h"

namespace gpuraid::cli {

namespace {
std::string yes_no(bool b) { return b ? "yes" : "no"; }
std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }
std::string mdts(const v1::NvmeIdentity& n) {
  if (!n.max_transfer_bytes()) return "no limit";
  return size_str(n.max_transfer_bytes()) + (n.mpsmin_known() ? "" : " (4 KiB pages assumed)");
}
std::string formats(const v1::NvmeIdentity& n) {
  std::string s;
  for (const auto& f : n.lba_formats()) {
    s += (s.empty() ? "" : ", ") + std::to_string(f.index()) + ":" + std::to_string(f.data_bytes());
    if (f.metadata_bytes()) s += "+" + std::to_string(f.metadata_bytes()) + "md";
    if (f.in_use()) s += "*";
  }
  return s;
}
std::string dlfeat(const v1::NvmeIdentity& n) {
  char b[8];
  snprintf(b, sizeof b, "0x%02x", n.dlfeat());
  return std::string(b) + (n.deallocated_reads_zeroes() ? " (deallocated blocks read zeroes)" : "");
}
std::string lba(const v1::NvmeIdentity& n) {
  return std::to_string(n.lba_bytes()) + (n.metadata_bytes() ? "+" + std::to_string(n.metadata_bytes()) : "");
}
}  // namespace

void nvme_fields(const v1::NvmeIdentity& n, std::vector<std::pair<std::string, std::string>>* kv) {
  kv->insert(kv->end(), {{"nvme id", n.stable_id()},
                         {"nvme device", n.block_path() + (n.char_path().empty() ? "" : " " + n.char_path())},
                         {"controller", or_dash(n.controller()) + (n.transport().empty() ? "" : " (" + n.transport() + ")")},
                         {"subsystem nqn", or_dash(n.subsystem_nqn())},
                         {"model", or_dash(n.model())},
                         {"serial", or_dash(n.serial())},
                         {"firmware", or_dash(n.firmware())},
                         {"nsid", std::to_string(n.nsid())},
                         {"nguid", or_dash(n.nguid())},
                         {"eui64", or_dash(n.eui64())},
                         {"lba size", lba(n)},
                         {"lba formats", formats(n) + " (*: in use)"},
                         {"capacity", size_str(n.capacity_bytes())},
                         {"max transfer", mdts(n)},
                         {"dlfeat", dlfeat(n)},
                         {"write zeroes", yes_no(n.write_zeroes())},
                         {"write cache", n.volatile_write_cache() ? "volatile" : "none"}});
}

void add_pd_scan(Cli& c, CLI::App* pd) {
  auto* s = pd->add_subcommand("scan", "list every NVMe namespace on the host with its identity");
  s->callback([&c] {
    c.action = [&c](Client& cl) {
      v1::ScanDrivesResponse r;
      if (int rc = cl.call(&v1::Gpuraid::Stub::ScanDrives, v1::ScanDrivesRequest(), &r)) return rc;
      if (c.g.json) return print_json(r), int(kOk);
      Table t({"DEVICE", "MODEL", "SERIAL", "NSID", "ID", "LBA", "SIZE", "MDTS", "DEALLOC=0", "VWC", "DRIVE", "NOTE"});
      for (const auto& ns : r.namespaces()) {
        const auto& n = ns.nvme();
        std::string drive = "-";
        if (!ns.drive().empty()) {
          drive = ns.drive() + " " + v1::api_word(ns.role());
          if (!ns.group().empty()) drive += " " + ns.group();
        }
        t.add({n.block_path(), or_dash(n.model()), or_dash(n.serial()), std::to_string(n.nsid()), n.stable_id(), lba(n),
               size_str(n.capacity_bytes()), n.max_transfer_bytes() ? size_str(n.max_transfer_bytes()) : "-",
               yes_no(n.deallocated_reads_zeroes()), yes_no(n.volatile_write_cache()), drive, or_dash(ns.note())});
      }
      t.print();
      for (const auto& e : r.errors()) fprintf(stderr, "not identified: %s\n", e.c_str());
      if (r.namespaces().empty() && r.errors().empty()) printf("no NVMe namespaces on this host\n");
      return int(kOk);
    };
  });
}

}  // namespace gpuraid::cli
