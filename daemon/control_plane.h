// The control plane: the registry of physical drives, drive groups and
// virtual drives, every operator action on them (validated first: a
// rejected request changes nothing), persistence in the state directory,
// restoration at start, and the reactions to group events (member states,
// spares from the global pool). API calls are serialized by one mutex;
// debug I/O runs outside it.
#pragma once
#include <grpcpp/support/status.h>

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "daemon/drive_group.h"
#include "daemon/engine_host.h"
#include "daemon/event_bus.h"
#include "daemon/exporter.h"
#include "daemon/fabrics.h"
#include "daemon/metered_target.h"
#include "daemon/nvmet_config.h"
#include "daemon/registry_store.h"
#include "gpuraid/v1/fabrics.pb.h"
#include "gpuraid/v1/gpuraid.pb.h"
#include "gpuraid/v1/state.pb.h"

namespace gpuraid::daemon {

namespace v1 = gpuraid::v1;
namespace st = gpuraid::state::v1;

// "pd2" before "pd10": ids list in the order people expect.
struct NaturalLess {
  bool operator()(const std::string& a, const std::string& b) const;
};

struct ControlOptions {
  std::vector<std::string> scan;       // more paths where members may be found (renamed devices)
  std::vector<std::string> listeners;  // for GetInfo
  std::string nbd_default_dir;         // default NBD socket directory
  std::string nvmet_root = kNvmetRoot; // nvmet's configfs (NVMe-oF exports)
  bool keep_exports_on_exit = false;   // --ublk-on-exit keep: NVMe-oF exports stay configured too
};

// An NVMe Qualified Name a person gave (control_fabrics.cpp).
grpc::Status check_nqn(const std::string& nqn);

class ControlPlane {
 public:
  ControlPlane(EngineHost& host, Exporter* exporter, EventBus& bus, RegistryStore& store, ControlOptions o);
  ~ControlPlane();
  // Loads the registry, reassembles groups, restores VDs and exports, and
  // starts the background worker. False only when the registry is unusable.
  bool start(std::string* err);
  // Stops exports, stops every group cleanly, saves the registry.
  void shutdown();

  grpc::Status get_info(v1::DaemonInfo* out);

  grpc::Status add_drive(const v1::AddDriveRequest& q, v1::Drive* out);
  grpc::Status list_drives(v1::ListDrivesResponse* out);
  grpc::Status get_drive(const v1::DriveRef& q, v1::Drive* out);
  grpc::Status remove_drive(const v1::DriveRef& q);
  grpc::Status fail_drive(const v1::DriveRef& q, v1::Drive* out);
  grpc::Status set_drive_spare(const v1::SetDriveSpareRequest& q, v1::Drive* out);
  grpc::Status scan_drives(v1::ScanDrivesResponse* out);

  grpc::Status create_group(const v1::CreateGroupRequest& q, v1::Group* out);
  grpc::Status list_groups(v1::ListGroupsResponse* out);
  grpc::Status get_group(const v1::GroupRef& q, v1::Group* out);
  grpc::Status delete_group(const v1::DeleteGroupRequest& q, v1::DeleteGroupResponse* out);
  grpc::Status replace_member(const v1::ReplaceMemberRequest& q, v1::Group* out);
  grpc::Status control_task(const v1::ControlTaskRequest& q, v1::Group* out);
  grpc::Status set_rates(const v1::SetRatesRequest& q, v1::Group* out);

  grpc::Status create_volume(const v1::CreateVolumeRequest& q, v1::Volume* out);
  grpc::Status list_volumes(const v1::ListVolumesRequest& q, v1::ListVolumesResponse* out);
  grpc::Status get_volume(const v1::VolumeRef& q, v1::Volume* out);
  grpc::Status resize_volume(const v1::ResizeVolumeRequest& q, v1::Volume* out);
  grpc::Status delete_volume(const v1::VolumeRef& q);
  grpc::Status export_volume(const v1::ExportVolumeRequest& q, v1::Volume* out);
  grpc::Status unexport_volume(const v1::VolumeRef& q, v1::Volume* out);
  grpc::Status write_volume(const v1::WriteVolumeRequest& q, v1::WriteVolumeResponse* out);
  grpc::Status read_volume(const v1::ReadVolumeRequest& q, v1::ReadVolumeResponse* out);

  grpc::Status get_stats(const v1::GetStatsRequest& q, v1::Stats* out);

  // Ways back: start an offline group (control_start.cpp), re-add a member
  // (control_readd.cpp), wipe a drive's metadata (control_wipe.cpp).
  grpc::Status start_group(const v1::StartGroupRequest& q, v1::StartGroupResponse* out);
  grpc::Status readd_member(const v1::ReaddMemberRequest& q, v1::ReaddMemberResponse* out);
  grpc::Status wipe_drive(const v1::WipeDriveRequest& q, v1::WipeDriveResponse* out);
  // control_import.cpp
  grpc::Status import_group(const v1::ImportGroupRequest& q, v1::ImportGroupResponse* out);

  // NVMe-oF (control_fabrics.cpp).
  grpc::Status discover_fabrics(const v1::FabricsDiscoverRequest& q, v1::FabricsDiscoverResponse* out);
  grpc::Status connect_fabrics(const v1::FabricsConnectRequest& q, v1::FabricsConnectResponse* out);
  grpc::Status disconnect_fabrics(const v1::FabricsDisconnectRequest& q, v1::FabricsDisconnectResponse* out);
  // Prometheus text exposition of the same figures, and of every group's
  // health (control_metrics.cpp).
  std::string metrics_text();
  // gpuraid status: the daemon, groups, volumes and drives at one moment.
  grpc::Status get_status(v1::StatusOverview* out);

 private:
  struct DriveRec {
    st::DriveRecord r;
    std::unique_ptr<Drive> drive;  // open while the daemon holds it (free, global spare)
    bool missing = false;
    std::string note;
  };
  struct GroupRec {
    st::GroupRecord r;
    std::unique_ptr<DriveGroup> g;  // null: offline (see note)
    std::string note;
    // A hot replace this run started (control_replace.cpp): the PDs it
    // moves a member from and onto. The registry lists the new one as a
    // dedicated spare meanwhile (a restart during the copy leaves it one).
    std::string hot_old_pd, hot_new_pd;
    // Free space a stopped rebuild named (control_free_space.cpp): being
    // zeroed now ([start, end) of data bytes; vd create leaves it out), and
    // zeroed since the group's last whole rebuild (not again: the block did
    // not remap). Whether the zeros cover the whole stopped run (the
    // rebuild then starts again by itself).
    std::vector<std::pair<uint64_t, uint64_t>> zeroing, zeroed;
    bool zeroing_whole_run = false;
  };
  struct VolRec {
    st::VolumeRecord r;
    std::shared_ptr<MeteredTarget> target;  // null while the group is offline
    bool export_active = false;
    std::string uri, dev_path, export_note;
  };
  struct Rates {
    double read_iops = 0, write_iops = 0, read_bps = 0, write_bps = 0, p50 = 0, p99 = 0, p999 = 0;
  };
  struct Sample {
    uint64_t reads = 0, writes = 0, read_bytes = 0, write_bytes = 0;
    std::vector<uint64_t> hist;
  };
  struct PendingEvent {
    std::string group;
    GroupEvent ev;
    // Set: not the group's event but the daemon's (group_deleted), queued
    // behind the events the group sent before it stopped, so that none of
    // them (an `init_finished` from the stop) arrives after it.
    v1::EventKind queued_kind = v1::EVENT_KIND_UNSPECIFIED;
  };

  // control_plane.cpp
  bool persist(std::string* err);
  grpc::Status persist_status();
  void worker();
  void on_group_event(const std::string& group, const GroupEvent& ev);
  void handle_group_event(const PendingEvent& pe);
  // The virtual drives over a group's data bytes [off, off + len), each
  // with its own bytes there, for an event's message; *only: the one VD
  // when exactly one is (mu_ held).
  std::string volumes_over(const std::string& group, uint64_t off, uint64_t len, std::string* only) const;
  // control_free_space.cpp: [off, off + len) of a group's data bytes less its
  // VDs' (mu_ held).
  std::vector<std::pair<uint64_t, uint64_t>> free_extents(const std::string& group, uint64_t off, uint64_t len) const;
  // For a rebuild stopped at data bytes no VD holds (all or some of them):
  // queues their zeroing for the worker and returns what the event says of
  // it; "" where VDs hold all of them (mu_ held).
  std::string plan_free_space_zeroing(GroupRec& gr, const GroupEvent& ev);
  // The worker, without mu_: writes zeros over the group's queued free
  // space, then starts the rebuild again where that was all of its run.
  void zero_free_space(const std::string& group);
  void zero_queued_free_space();  // the worker: each queued group's, in turn
  // control_replace.cpp: a working member copied onto a free drive, then
  // swapped in; and the PD records once that ended (either way).
  grpc::Status hot_replace(GroupRec& gr, uint32_t index, DriveRec& nd, bool force, v1::Group* out);
  void hot_replace_ended(GroupRec& gr);
  // The group's VDs onto its members (the volume table, for dg import):
  // after VDs change and when a member joins; a failure is logged.
  void write_volume_table(GroupRec& gr);
  // publish() in turn with the group events queued before it.
  void publish_queued(v1::EventKind kind, const std::string& msg, const std::string& group);
  void take_pool_spare(GroupRec& gr, uint32_t member);
  // A group that runs degraded with no dedicated spare: the first failed
  // member takes a pool spare, if one fits (as after a failure).
  void take_pool_spare_for_failed(GroupRec& gr);
  void adopt_offered(GroupRec& gr, const std::vector<std::string>& offered,
                     std::vector<std::unique_ptr<Drive>>& unlisted);
  // An event when a reactor's parity backend falls back to the CPU (once each).
  void check_parity_backends();
  void publish(v1::EventKind kind, const std::string& msg, const std::string& group = "",
               const std::string& vol = "", const std::string& drive = "", int member = -1);
  std::string next_id(const char* prefix, uint64_t* counter, bool (ControlPlane::*taken)(const std::string&) const);
  bool drive_taken(const std::string& id) const { return drives_.count(id) > 0; }
  bool group_taken(const std::string& id) const { return groups_.count(id) > 0; }
  bool volume_taken(const std::string& id) const { return volumes_.count(id) > 0; }

  // control_restore.cpp
  void restore_drives(const st::Registry& reg);
  static bool held_here(const DriveRec& d);
  void set_aside_duplicates();
  // Assembles the group from its members (force: over stale parity); on
  // failure it stays offline and gr.note says why.
  void restore_group(GroupRec& gr, bool force = false);
  void restore_volume(VolRec& vr);
  void attach_group(GroupRec& gr);

  // control_drives.cpp
  grpc::Status add_drive_locked(const v1::AddDriveRequest& q, v1::Drive* out);
  grpc::Status unspare_dedicated(DriveRec& d);
  void drive_to_api(const DriveRec& d, v1::Drive* out) const;
  static v1::DriveState offline_member_state(const DriveRec* d);
  std::unique_ptr<Drive> reopen(const DriveRec& d, std::string* err) const;
  grpc::Status find_drive(const std::string& id, DriveRec** out);
  // What a registered drive is (its open drive, else its recorded path now).
  DriveIdentity identity_of(const DriveRec& d) const;
  // A drive being added that is a registered one under another name (the
  // same file or device, a partition of one, a loop device over one):
  // ALREADY_EXISTS naming the PD.
  grpc::Status refuse_registered(const DriveIdentity& id, const std::string& path) const;

  // control_nvme.cpp
  // For a path being added: its NVMe identity into *out (cleared when not
  // NVMe), or why it cannot be used (format, duplicate, identify failed).
  grpc::Status nvme_admit(const std::string& path, v1::NvmeIdentity* out);
  // At start: recorded NVMe namespaces found by stable id, paths updated;
  // the ones not on the host are marked missing.
  void resolve_nvme_paths();
  // At group create: deallocates every member when all are NVMe namespaces
  // whose deallocated blocks read zeroes (*zeroed true). Says which
  // initialisation the group gets and why.
  std::string instant_init(const std::vector<DriveRec*>& members, bool* zeroed);

  // control_fabrics.cpp
  grpc::Status host_identity(HostIdentity* out);

  // control_paths.cpp: lost paths of NVMe-oF members (missing, back, gone).
  struct PathTable {
    std::mutex mu;
    std::map<std::string, std::map<uint32_t, FabricsPath>> by_group;  // group -> member -> path
  };
  void install_path_policy(GroupRec& gr);
  void refresh_path_table();
  void watch_paths();  // worker, once a second

  // control_groups.cpp
  void group_to_api(const GroupRec& g, v1::Group* out) const;
  grpc::Status find_group(const std::string& name, GroupRec** out);
  grpc::Status online_group(const std::string& name, GroupRec** out);
  void sync_members(GroupRec& gr);
  grpc::Status rebuild_task(GroupRec& gr, v1::TaskAction act);
  // Stops a group (if running) and wipes its members' and spares' metadata
  // (failed ones too, each only if it carries this group's superblock); its
  // drives become free (failed ones stay failed).
  struct Dissolved {
    std::string stop_error;              // the group did not stop cleanly
    std::vector<std::string> not_wiped;  // "pdN (path): why" per drive left with metadata
  };
  Dissolved dissolve_group(GroupRec& gr);
  uint64_t group_used_bytes(const std::string& name) const;

  // control_volumes.cpp
  void volume_to_api(const VolRec& v, v1::Volume* out) const;
  grpc::Status find_volume(const std::string& id, VolRec** out);
  void make_target(VolRec& vr, GroupRec& gr);
  grpc::Status do_export(VolRec& vr, v1::ExportKind kind, const std::string& listen, const v1::NbdSecurity& sec,
                         int want_ublk_id);
  grpc::Status check_io(const std::string& id, uint64_t off, uint64_t len, std::shared_ptr<MeteredTarget>* t);
  // Ends a VD's export (recorded or live) and forgets it.
  grpc::Status stop_export(VolRec& v);

  // control_nvmf.cpp: NVMe-oF exports through nvmet over the VD's ublk device.
  grpc::Status export_nvmf(VolRec& v, const v1::ExportVolumeRequest& q);
  NvmetExport nvmet_spec(const VolRec& v) const;
  grpc::Status start_nvmf(VolRec& v);  // creates what is missing in configfs, records what it made
  grpc::Status stop_nvmf(VolRec& v);   // removes what the daemon made
  void forget_nvmf_secret(const VolRec& v);  // at unexport: its DH-HMAC-CHAP key file
  void undo_ublk_export(VolRec& v, bool made_ublk);  // a failed export's ublk device
  void restore_nvmf(VolRec& v);
  void nvmf_to_api(const VolRec& v, v1::Export* e) const;

  // control_readd.cpp: a member's own drive back into its slot.
  grpc::Status readd_locked(GroupRec& gr, DriveRec& d, bool force, v1::ReaddMemberResponse* out);
  // control_wipe.cpp: zeroes a drive's gpuraid metadata when it carries
  // some (*wiped); the drive object is the caller's.
  grpc::Status wipe_metadata_of(DriveRec& d, Drive& drive, bool* wiped);

  // control_stats.cpp
  void sample_rates();
  void io_to_api(const std::string& vd, const IoCounters& c, v1::IoStats* out) const;
  // The drive object the engine counts a PD's member I/O under (nullptr: none now).
  const Drive* counted_drive(const DriveRec& d);

  EngineHost& host_;
  Exporter* exporter_;
  EventBus& bus_;
  RegistryStore& store_;
  ControlOptions opt_;
  Nvmet nvmet_{opt_.nvmet_root};

  std::mutex mu_;                  // the registry and every control call
  std::shared_mutex teardown_mu_;  // debug I/O (shared) vs deleting/resizing VDs and groups
  std::map<std::string, DriveRec, NaturalLess> drives_;
  std::map<std::string, GroupRec, NaturalLess> groups_;
  std::map<std::string, VolRec, NaturalLess> volumes_;
  uint64_t next_drive_ = 0, next_group_ = 0, next_volume_ = 0;

  // Background worker: group events, rate sampling.
  std::mutex wmu_;
  std::condition_variable wcv_;
  std::deque<PendingEvent> pending_;
  std::vector<std::string> zero_queue_;  // groups with free space to zero (the worker's, under mu_)
  bool stopping_ = false;
  std::thread worker_;

  std::shared_ptr<PathTable> paths_ = std::make_shared<PathTable>();
  std::chrono::steady_clock::time_point last_path_watch_;
  HostIdentity host_id_;

  mutable std::mutex rates_mu_;
  std::map<std::string, Rates> rates_;
  std::map<std::string, Sample> last_sample_;
  double last_cpu_s_ = 0, cpu_ns_per_io_ = 0, utilisation_ = 0;
  uint64_t last_total_ios_ = 0;
  std::chrono::steady_clock::time_point last_sample_time_;
  std::vector<bool> backend_fell_back_;  // per reactor, worker thread only
  std::chrono::steady_clock::time_point started_;
};

}  // namespace gpuraid::daemon
