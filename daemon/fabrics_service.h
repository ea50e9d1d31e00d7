// The gRPC service gpuraid.v1.Fabrics: forwarded to the control plane.
#pragma once
#include "daemon/control_plane.h"
#include "gpuraid/v1/fabrics.grpc.pb.h"

namespace gpuraid::daemon {

class FabricsService final : public gpuraid::v1::Fabrics::Service {
 public:
  explicit FabricsService(ControlPlane& cp) : cp_(cp) {}
  using Ctx = grpc::ServerContext;
  grpc::Status Discover(Ctx*, const v1::FabricsDiscoverRequest*, v1::FabricsDiscoverResponse*) override;
  grpc::Status Connect(Ctx*, const v1::FabricsConnectRequest*, v1::FabricsConnectResponse*) override;
  grpc::Status Disconnect(Ctx*, const v1::FabricsDisconnectRequest*, v1::FabricsDisconnectResponse*) override;

 private:
  ControlPlane& cp_;
};

}  // namespace gpuraid::daemon
