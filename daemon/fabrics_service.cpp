#include "daemon/fabrics_service.h"

#include "daemon/guarded.h"

namespace gpuraid::daemon {

grpc::Status FabricsService::Discover(Ctx*, const v1::FabricsDiscoverRequest* q, v1::FabricsDiscoverResponse* r) {
  return guarded("FabricsDiscover", [&] { return cp_.discover_fabrics(*q, r); });
}
grpc::Status FabricsService::Connect(Ctx*, const v1::FabricsConnectRequest* q, v1::FabricsConnectResponse* r) {
  return guarded("FabricsConnect", [&] { return cp_.connect_fabrics(*q, r); });
}
grpc::Status FabricsService::Disconnect(Ctx*, const v1::FabricsDisconnectRequest* q, v1::FabricsDisconnectResponse* r) {
  return guarded("FabricsDisconnect", [&] { return cp_.disconnect_fabrics(*q, r); });
}

}  // namespace gpuraid::daemon
