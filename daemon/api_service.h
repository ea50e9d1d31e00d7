// The gRPC service: gpuraid.v1.Gpuraid calls forwarded to the control plane
// (which validates them), plus the WatchEvents stream.
#pragma once
#include "daemon/control_plane.h"
#include "gpuraid/v1/gpuraid.grpc.pb.h"

namespace gpuraid::daemon {

class ApiService final : public gpuraid::v1::Gpuraid::Service {
 public:
  ApiService(ControlPlane& cp, EventBus& bus) : cp_(cp), bus_(bus) {}
  using Ctx = grpc::ServerContext;

  grpc::Status GetInfo(Ctx*, const v1::GetInfoRequest*, v1::DaemonInfo*) override;
  grpc::Status AddDrive(Ctx*, const v1::AddDriveRequest*, v1::Drive*) override;
  grpc::Status ListDrives(Ctx*, const v1::ListDrivesRequest*, v1::ListDrivesResponse*) override;
  grpc::Status GetDrive(Ctx*, const v1::DriveRef*, v1::Drive*) override;
  grpc::Status RemoveDrive(Ctx*, const v1::DriveRef*, v1::Empty*) override;
  grpc::Status FailDrive(Ctx*, const v1::DriveRef*, v1::Drive*) override;
  grpc::Status SetDriveSpare(Ctx*, const v1::SetDriveSpareRequest*, v1::Drive*) override;
  grpc::Status ScanDrives(Ctx*, const v1::ScanDrivesRequest*, v1::ScanDrivesResponse*) override;
  grpc::Status CreateGroup(Ctx*, const v1::CreateGroupRequest*, v1::Group*) override;
  grpc::Status ListGroups(Ctx*, const v1::ListGroupsRequest*, v1::ListGroupsResponse*) override;
  grpc::Status GetGroup(Ctx*, const v1::GroupRef*, v1::Group*) override;
  grpc::Status DeleteGroup(Ctx*, const v1::DeleteGroupRequest*, v1::DeleteGroupResponse*) override;
  grpc::Status ReplaceMember(Ctx*, const v1::ReplaceMemberRequest*, v1::Group*) override;
  grpc::Status ControlTask(Ctx*, const v1::ControlTaskRequest*, v1::Group*) override;
  grpc::Status SetRates(Ctx*, const v1::SetRatesRequest*, v1::Group*) override;
  grpc::Status CreateVolume(Ctx*, const v1::CreateVolumeRequest*, v1::Volume*) override;
  grpc::Status ListVolumes(Ctx*, const v1::ListVolumesRequest*, v1::ListVolumesResponse*) override;
  grpc::Status GetVolume(Ctx*, const v1::VolumeRef*, v1::Volume*) override;
  grpc::Status ResizeVolume(Ctx*, const v1::ResizeVolumeRequest*, v1::Volume*) override;
  grpc::Status DeleteVolume(Ctx*, const v1::VolumeRef*, v1::Empty*) override;
  grpc::Status ExportVolume(Ctx*, const v1::ExportVolumeRequest*, v1::Volume*) override;
  grpc::Status UnexportVolume(Ctx*, const v1::VolumeRef*, v1::Volume*) override;
  grpc::Status WriteVolume(Ctx*, const v1::WriteVolumeRequest*, v1::WriteVolumeResponse*) override;
  grpc::Status ReadVolume(Ctx*, const v1::ReadVolumeRequest*, v1::ReadVolumeResponse*) override;
  grpc::Status GetStats(Ctx*, const v1::GetStatsRequest*, v1::Stats*) override;
  grpc::Status GetStatus(Ctx*, const v1::GetStatusRequest*, v1::StatusOverview*) override;
  grpc::Status WatchEvents(Ctx*, const v1::WatchEventsRequest*, grpc::ServerWriter<v1::Event>*) override;
  grpc::Status StartGroup(Ctx*, const v1::StartGroupRequest*, v1::StartGroupResponse*) override;
  grpc::Status ReaddMember(Ctx*, const v1::ReaddMemberRequest*, v1::ReaddMemberResponse*) override;
  grpc::Status WipeDrive(Ctx*, const v1::WipeDriveRequest*, v1::WipeDriveResponse*) override;
  grpc::Status ImportGroup(Ctx*, const v1::ImportGroupRequest*, v1::ImportGroupResponse*) override;

 private:
  ControlPlane& cp_;
  EventBus& bus_;
};

}  // namespace gpuraid::daemon
