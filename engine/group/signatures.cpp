// Refusing to overwrite data: libblkid finds filesystems, partition tables
// and RAID members as mkfs and mdadm do; our own superblock we check
// ourselves (blkid does not know it).
#include <blkid/blkid.h>

#include "engine/group/group.h"
#include "engine/group/metadata_io.h"
#include "engine/io/nvme_char.h"

namespace gpuraid {

bool drive_holds_data(Drive& d, std::string* what) {
  if (d.type() == DriveType::Null) return false;
  SuperblockRead sb = read_superblock(d);
  if (sb.any_magic) {
    *what = !sb.ok ? "a damaged gpuraid superblock"
            : sb.sb.name.empty()
                ? "a gpuraid superblock (group " + uuid_str(sb.sb.group_uuid) + ")"
                : "a gpuraid superblock (group " + sb.sb.name + ", " + uuid_str(sb.sb.group_uuid) + ")";
    return true;
  }
  // libblkid reads block devices and files; an nvme-char drive is probed
  // through its namespace's block device.
  const std::string path = d.type() == DriveType::NvmeChar ? nvme_block_twin(d.path()) : d.path();
  blkid_probe pr = blkid_new_probe_from_filename(path.c_str());
  if (!pr) {
    *what = "unreadable by libblkid";
    return true;
  }
  blkid_probe_enable_superblocks(pr, 1);
  blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE);
  blkid_probe_enable_partitions(pr, 1);
  blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
  int rc = blkid_do_safeprobe(pr);
  bool holds = true;
  if (rc == 1) {
    holds = false;
  } else if (rc == 0) {
    const char* type = nullptr;
    if (blkid_probe_lookup_value(pr, "TYPE", &type, nullptr) == 0 && type) *what = std::string("a ") + type + " signature";
    else if (blkid_probe_lookup_value(pr, "PTTYPE", &type, nullptr) == 0 && type) *what = std::string("a ") + type + " partition table";
    else *what = "a signature";
  } else if (rc == -2) {
    *what = "several conflicting signatures";
  } else {
    *what = "a probe error";
  }
  blkid_free_probe(pr);
  return holds;
}

}  // namespace gpuraid
