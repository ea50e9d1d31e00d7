#include "daemon/nvme_convert.h"

namespace gpuraid::daemon {

void nvme_to_api(const nvme::Identity& id, gpuraid::v1::NvmeIdentity* out) {
  out->Clear();
  out->set_stable_id(nvme::stable_id(id));
  out->set_block_path(id.block_path);
  out->set_char_path(id.char_path);
  out->set_controller(id.controller);
  out->set_transport(id.transport);
  out->set_subsystem_nqn(id.subsystem_nqn);
  out->set_model(id.model);
  out->set_serial(id.serial);
  out->set_firmware(id.firmware);
  out->set_nsid(id.nsid);
  out->set_nguid(id.nguid);
  out->set_eui64(id.eui64);
  out->set_lba_bytes(id.lba_bytes);
  out->set_metadata_bytes(id.metadata_bytes);
  for (const auto& f : id.formats) {
    auto* o = out->add_lba_formats();
    o->set_index(f.index);
    o->set_data_bytes(f.data_bytes);
    o->set_metadata_bytes(f.metadata_bytes);
    o->set_relative_performance(f.relative_performance);
    o->set_in_use(f.in_use);
  }
  out->set_capacity_bytes(id.capacity_bytes);
  out->set_max_transfer_bytes(id.max_transfer_bytes);
  out->set_mpsmin_known(id.mpsmin_known);
  out->set_dlfeat(id.dlfeat);
  out->set_deallocated_reads_zeroes(id.deallocated_reads_zeroes);
  out->set_write_zeroes_deallocates(id.write_zeroes_deallocates);
  out->set_write_zeroes(id.write_zeroes);
  out->set_volatile_write_cache(id.volatile_write_cache);
}

}  // namespace gpuraid::daemon
