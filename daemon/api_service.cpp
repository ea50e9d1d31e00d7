#include "daemon/api_service.h"

#include "daemon/guarded.h"
#include "daemon/name_forms.h"

namespace gpuraid::daemon {

// Each request's names in NFC (name_forms.h) before the control plane sees it.
#define FORWARD(Name, Req, Resp, expr)                                     \
  grpc::Status ApiService::Name(Ctx*, const Req* in, Resp* r) {            \
    std::unique_ptr<google::protobuf::Message> copy;                      \
    [[maybe_unused]] const Req* q = &names_in_nfc(*in, &copy);             \
    return guarded(#Name, [&] { return expr; });                           \
  }

FORWARD(GetInfo, v1::GetInfoRequest, v1::DaemonInfo, cp_.get_info(r))
FORWARD(AddDrive, v1::AddDriveRequest, v1::Drive, cp_.add_drive(*q, r))
FORWARD(ListDrives, v1::ListDrivesRequest, v1::ListDrivesResponse, cp_.list_drives(r))
FORWARD(GetDrive, v1::DriveRef, v1::Drive, cp_.get_drive(*q, r))
FORWARD(RemoveDrive, v1::DriveRef, v1::Empty, cp_.remove_drive(*q))
FORWARD(FailDrive, v1::DriveRef, v1::Drive, cp_.fail_drive(*q, r))
FORWARD(SetDriveSpare, v1::SetDriveSpareRequest, v1::Drive, cp_.set_drive_spare(*q, r))
FORWARD(ScanDrives, v1::ScanDrivesRequest, v1::ScanDrivesResponse, cp_.scan_drives(r))
FORWARD(CreateGroup, v1::CreateGroupRequest, v1::Group, cp_.create_group(*q, r))
FORWARD(ListGroups, v1::ListGroupsRequest, v1::ListGroupsResponse, cp_.list_groups(r))
FORWARD(GetGroup, v1::GroupRef, v1::Group, cp_.get_group(*q, r))
FORWARD(DeleteGroup, v1::DeleteGroupRequest, v1::DeleteGroupResponse, cp_.delete_group(*q, r))
FORWARD(ReplaceMember, v1::ReplaceMemberRequest, v1::Group, cp_.replace_member(*q, r))
FORWARD(ControlTask, v1::ControlTaskRequest, v1::Group, cp_.control_task(*q, r))
FORWARD(SetRates, v1::SetRatesRequest, v1::Group, cp_.set_rates(*q, r))
FORWARD(CreateVolume, v1::CreateVolumeRequest, v1::Volume, cp_.create_volume(*q, r))
FORWARD(ListVolumes, v1::ListVolumesRequest, v1::ListVolumesResponse, cp_.list_volumes(*q, r))
FORWARD(GetVolume, v1::VolumeRef, v1::Volume, cp_.get_volume(*q, r))
FORWARD(ResizeVolume, v1::ResizeVolumeRequest, v1::Volume, cp_.resize_volume(*q, r))
FORWARD(DeleteVolume, v1::VolumeRef, v1::Empty, cp_.delete_volume(*q))
FORWARD(ExportVolume, v1::ExportVolumeRequest, v1::Volume, cp_.export_volume(*q, r))
FORWARD(UnexportVolume, v1::VolumeRef, v1::Volume, cp_.unexport_volume(*q, r))
FORWARD(WriteVolume, v1::WriteVolumeRequest, v1::WriteVolumeResponse, cp_.write_volume(*q, r))
FORWARD(ReadVolume, v1::ReadVolumeRequest, v1::ReadVolumeResponse, cp_.read_volume(*q, r))
FORWARD(GetStats, v1::GetStatsRequest, v1::Stats, cp_.get_stats(*q, r))
FORWARD(StartGroup, v1::StartGroupRequest, v1::StartGroupResponse, cp_.start_group(*q, r))
FORWARD(ReaddMember, v1::ReaddMemberRequest, v1::ReaddMemberResponse, cp_.readd_member(*q, r))
FORWARD(WipeDrive, v1::WipeDriveRequest, v1::WipeDriveResponse, cp_.wipe_drive(*q, r))
FORWARD(ImportGroup, v1::ImportGroupRequest, v1::ImportGroupResponse, cp_.import_group(*q, r))
FORWARD(GetStatus, v1::GetStatusRequest, v1::StatusOverview, cp_.get_status(r))

grpc::Status ApiService::WatchEvents(Ctx* ctx, const v1::WatchEventsRequest* q, grpc::ServerWriter<v1::Event>* w) {
  uint64_t after = q->after_seq();
  for (;;) {
    for (const auto& e : bus_.since(after)) {
      if (!w->Write(e)) return grpc::Status::OK;  // the client went away
      after = e.seq();
    }
    if (!q->follow()) return grpc::Status::OK;
    while (!bus_.wait(after, std::chrono::milliseconds(200))) {
      if (ctx->IsCancelled()) return grpc::Status::CANCELLED;
      if (bus_.closed()) return {grpc::StatusCode::UNAVAILABLE, "the daemon is shutting down"};
    }
  }
}

}  // namespace gpuraid::daemon
