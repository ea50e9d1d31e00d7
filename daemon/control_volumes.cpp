// Virtual drives: create, list, show, resize, delete, export/unexport,
// and debug reads/writes through the engine.
#include <algorithm>

#include "daemon/control_plane.h"
#include "daemon/free_gaps.h"
#include "daemon/logging.h"
#include "daemon/nbd_security.h"
#include "daemon/validate.h"
#include "engine/units.h"

namespace gpuraid::daemon {

namespace {
constexpr uint64_t kMaxDebugIo = 4u << 20;

grpc::Status check_listen(const std::string& l) {
  if (l.size() > 512) return invalid("the listen address is too long");
  if (l.rfind("unix:", 0) == 0) return check_path("NBD socket path", l.substr(5));
  if (l.rfind("tcp:", 0) == 0) {
    std::string hp = l.substr(4);
    size_t c = hp.rfind(':');
    if (c == std::string::npos || c == 0) return invalid("give the NBD address as tcp:HOST:PORT (got " + quote(l) + ")");
    std::string port = hp.substr(c + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(port) == 0 || std::stoul(port) > 65535)
      return invalid("the NBD port " + quote(port) + " must be 1..65535");
    return grpc::Status::OK;
  }
  return invalid("the NBD listen address " + quote(l) + " must be unix:PATH or tcp:HOST:PORT");
}
}  // namespace

grpc::Status ControlPlane::find_volume(const std::string& id, VolRec** out) {
  if (auto s = check_ref("virtual drive", id); !s.ok()) return s;
  auto it = volumes_.find(id);
  if (it == volumes_.end()) return not_found("no virtual drive " + quote(id) + " (see: gpuraid vd list)");
  *out = &it->second;
  return grpc::Status::OK;
}

void ControlPlane::make_target(VolRec& vr, GroupRec& gr) {
  auto ext = std::make_unique<VolumeExtent>(gr.g->volume(), vr.r.offset_bytes(), vr.r.size_bytes());
  vr.target = std::make_shared<MeteredTarget>(std::move(ext), host_.reactors());
}

void ControlPlane::volume_to_api(const VolRec& v, v1::Volume* out) const {
  out->set_id(v.r.id());
  out->set_group(v.r.group());
  out->set_offset_bytes(v.r.offset_bytes());
  out->set_size_bytes(v.r.size_bytes());
  out->set_online(v.target != nullptr);
  if (v.target) {
    out->set_min_io_bytes(v.target->min_io_bytes());
    out->set_optimal_io_bytes(v.target->optimal_io_bytes());
  }
  if (v.r.export_kind() != v1::EXPORT_KIND_UNSPECIFIED) {
    auto* e = out->mutable_export_();
    e->set_kind(v.r.export_kind());
    e->set_listen(v.r.export_listen());
    e->set_uri(v.uri);
    e->set_dev_path(v.dev_path);
    e->set_ublk_dev_id(v.r.ublk_dev_id());
    e->set_active(v.export_active);
    e->set_note(v.export_note);
    if (v.r.export_kind() == v1::EXPORT_KIND_NVMF) nvmf_to_api(v, e);
    if (v.r.export_kind() == v1::EXPORT_KIND_NBD) *e->mutable_nbd_security() = v.r.nbd_security();
  }
}

grpc::Status ControlPlane::create_volume(const v1::CreateVolumeRequest& q, v1::Volume* out) {
  std::lock_guard<std::mutex> g(mu_);
  GroupRec* gr;
  if (auto s = online_group(q.group(), &gr); !s.ok()) return s;
  if (gr->g->volume().failed()) return precondition(q.group() + " has failed: it cannot hold new virtual drives");
  if (q.rest() && q.size_bytes()) return invalid("give a size or ask for the rest of the group, not both");
  if (!q.rest() && !q.size_bytes()) return invalid("give a size (e.g. --size 10G) or ask for the rest (--rest)");
  std::string id = q.id();
  if (!id.empty()) {
    if (auto s = check_name("virtual drive id", id); !s.ok()) return s;
    if (volumes_.count(id)) return exists("virtual drive " + id + " already exists");
  }
  const uint64_t cap = gr->g->volume().size_bytes();
  const uint64_t unit = gr->g->volume().geometry().stripe_data_bytes();
  std::vector<std::pair<uint64_t, uint64_t>> used;
  for (auto& [vid, v] : volumes_)
    if (v.r.group() == q.group()) used.push_back({v.r.offset_bytes(), v.r.size_bytes()});
  // Free space the daemon is writing zeros over (a stopped rebuild's) is not free yet.
  for (auto& [a, b] : gr->zeroing) used.push_back({a, b - a});
  auto free = free_gaps(used, 0, cap);
  uint64_t off = 0, size = 0;
  if (q.rest()) {
    for (auto& [a, b] : free)
      if (b - a > size) off = a, size = b - a;
    if (!size) return precondition(q.group() + " has no free space left");
  } else {
    if (q.size_bytes() > cap)
      return invalid("the size " + format_size(q.size_bytes()) + " is larger than the group (" + format_size(cap) + ")");
    size = (q.size_bytes() + unit - 1) / unit * unit;  // whole stripes: VDs never share one
    auto it = std::find_if(free.begin(), free.end(), [&](auto& gp) { return gp.second - gp.first >= size; });
    if (it == free.end()) {
      uint64_t best = 0;
      for (auto& [a, b] : free) best = std::max(best, b - a);
      return precondition(q.group() + " has " + format_size(best) + " free in one piece; " + format_size(size) +
                          " was asked for");
    }
    off = it->first;
  }
  if (id.empty()) id = next_id("vd", &next_volume_, &ControlPlane::volume_taken);
  VolRec& vr = volumes_[id];
  vr.r.set_id(id);
  vr.r.set_group(q.group());
  vr.r.set_offset_bytes(off);
  vr.r.set_size_bytes(size);
  vr.r.set_ublk_dev_id(-1);
  make_target(vr, *gr);
  volume_to_api(vr, out);
  publish(v1::EVENT_KIND_VOLUME_CREATED, format_size(size) + " at " + format_size(off) + " of " + q.group(), q.group(), id);
  write_volume_table(*gr);
  return persist_status();
}

grpc::Status ControlPlane::list_volumes(const v1::ListVolumesRequest& q, v1::ListVolumesResponse* out) {
  std::lock_guard<std::mutex> g(mu_);
  if (!q.group().empty()) {
    GroupRec* gr;
    if (auto s = find_group(q.group(), &gr); !s.ok()) return s;
  }
  for (auto& [id, v] : volumes_)
    if (q.group().empty() || v.r.group() == q.group()) volume_to_api(v, out->add_volumes());
  return grpc::Status::OK;
}

grpc::Status ControlPlane::get_volume(const v1::VolumeRef& q, v1::Volume* out) {
  std::lock_guard<std::mutex> g(mu_);
  VolRec* v;
  if (auto s = find_volume(q.id(), &v); !s.ok()) return s;
  volume_to_api(*v, out);
  return grpc::Status::OK;
}

grpc::Status ControlPlane::resize_volume(const v1::ResizeVolumeRequest& q, v1::Volume* out) {
  std::unique_lock<std::shared_mutex> td(teardown_mu_);
  std::lock_guard<std::mutex> g(mu_);
  VolRec* v;
  if (auto s = find_volume(q.id(), &v); !s.ok()) return s;
  GroupRec* gr;
  if (auto s = online_group(v->r.group(), &gr); !s.ok()) return s;
  const uint64_t cap = gr->g->volume().size_bytes();
  const uint64_t unit = gr->g->volume().geometry().stripe_data_bytes();
  if (q.size_bytes() <= v->r.size_bytes())
    return invalid("the new size " + format_size(q.size_bytes()) + " must be larger than the current " +
                   format_size(v->r.size_bytes()) + " (virtual drives only grow)");
  if (q.size_bytes() > cap) return invalid("the new size is larger than the whole group (" + format_size(cap) + ")");
  if (v->r.export_kind() != v1::EXPORT_KIND_UNSPECIFIED)
    return precondition(q.id() + " is exported: unexport it first (a live device keeps its size)");
  uint64_t size = (q.size_bytes() + unit - 1) / unit * unit;
  uint64_t end = v->r.offset_bytes() + size;
  uint64_t limit = cap;
  for (auto& [id, o] : volumes_)
    if (id != q.id() && o.r.group() == v->r.group() && o.r.offset_bytes() >= v->r.offset_bytes())
      limit = std::min(limit, o.r.offset_bytes());
  if (end > limit)
    return precondition("only " + format_size(limit - v->r.offset_bytes()) + " is free directly after the start of " +
                        q.id() + " (virtual drives are one extent)");
  uint64_t old = v->r.size_bytes();
  v->r.set_size_bytes(size);
  v->target->replace_inner(std::make_unique<VolumeExtent>(gr->g->volume(), v->r.offset_bytes(), size));
  volume_to_api(*v, out);
  publish(v1::EVENT_KIND_VOLUME_RESIZED, format_size(old) + " -> " + format_size(size), v->r.group(), q.id());
  write_volume_table(*gr);
  return persist_status();
}

grpc::Status ControlPlane::delete_volume(const v1::VolumeRef& q) {
  std::unique_lock<std::shared_mutex> td(teardown_mu_);
  std::lock_guard<std::mutex> g(mu_);
  VolRec* v;
  if (auto s = find_volume(q.id(), &v); !s.ok()) return s;
  if (v->r.export_kind() != v1::EXPORT_KIND_UNSPECIFIED)
    return precondition(q.id() + " is exported: unexport it first (gpuraid vd unexport " + q.id() + ")");
  std::string group = v->r.group();
  volumes_.erase(q.id());
  publish(v1::EVENT_KIND_VOLUME_DELETED, "", group, q.id());
  if (auto it = groups_.find(group); it != groups_.end()) write_volume_table(it->second);
  return persist_status();
}

grpc::Status ControlPlane::do_export(VolRec& vr, v1::ExportKind kind, const std::string& listen,
                                     const v1::NbdSecurity& sec, int want_ublk_id) {
  if (!exporter_)
    return {grpc::StatusCode::UNIMPLEMENTED,
            "this gpuraidd was built without the ublk/NBD frontends (daemon/frontends): exports are unavailable"};
  std::string err, uri, dev;
  int dev_id = -1;
  bool ok = kind == v1::EXPORT_KIND_NBD
                ? exporter_->export_nbd(vr.r.id(), vr.target.get(), listen, tls_config(sec), &uri, &err)
                : exporter_->export_ublk(vr.r.id(), vr.target.get(), want_ublk_id, &dev, &dev_id, &err);
  if (!ok) return precondition(err);
  vr.r.set_export_kind(kind);
  vr.r.set_export_listen(kind == v1::EXPORT_KIND_NBD ? listen : "");
  vr.r.set_ublk_dev_id(kind != v1::EXPORT_KIND_NBD ? dev_id : -1);  // ublk, or the ublk device under NVMe-oF
  if (kind == v1::EXPORT_KIND_NBD) {
    *vr.r.mutable_nbd_security() = sec;
    if (sec.insecure_listen())
      spdlog::warn("volume {}: NBD export on {} WITHOUT TLS (--insecure-listen): anyone who can reach it can read and "
                   "overwrite the drive",
                   vr.r.id(), listen);
  } else {
    vr.r.clear_nbd_security();
  }
  vr.export_active = true;
  vr.uri = uri;
  vr.dev_path = dev;
  vr.export_note.clear();
  return grpc::Status::OK;
}

grpc::Status ControlPlane::export_volume(const v1::ExportVolumeRequest& q, v1::Volume* out) {
  std::lock_guard<std::mutex> g(mu_);
  VolRec* v;
  if (auto s = find_volume(q.id(), &v); !s.ok()) return s;
  std::string listen = q.listen();
  if (q.kind() == v1::EXPORT_KIND_NBD) {
    if (listen.empty()) listen = "unix:" + opt_.nbd_default_dir + "/" + q.id() + ".sock";
    if (auto s = check_listen(listen); !s.ok()) return s;
    if (auto s = check_nbd_security(q.id(), listen, q.nbd_security()); !s.ok()) return s;
    for (auto& [id, o] : volumes_)
      if (o.r.export_kind() == v1::EXPORT_KIND_NBD && o.r.export_listen() == listen)
        return exists(listen + " is already used by " + id);
  } else if (q.kind() == v1::EXPORT_KIND_UBLK) {
    if (!listen.empty()) return invalid("a listen address is only for NBD exports");
    if (q.has_nbd_security()) return invalid("TLS and --insecure-listen are only for NBD exports");
  } else if (q.kind() == v1::EXPORT_KIND_NVMF) {
    if (q.has_nbd_security()) return invalid("TLS and --insecure-listen are only for NBD exports");
    if (auto s = export_nvmf(*v, q); !s.ok()) return s;
    volume_to_api(*v, out);
    publish(v1::EVENT_KIND_VOLUME_EXPORTED, "NVMe-oF " + v->r.nvmf().nqn() + " over " + v->dev_path, v->r.group(), q.id());
    return persist_status();
  } else {
    return invalid("give the export kind: ublk, nbd or nvmf");
  }
  if (q.has_nvmf()) return invalid("NVMe-oF settings are only for NVMe-oF exports (--nvmf)");
  if (v->r.export_kind() != v1::EXPORT_KIND_UNSPECIFIED)
    return precondition(q.id() + " is already exported: unexport it first");
  if (!v->target) return precondition(q.id() + " is offline: " + v->export_note);
  if (auto s = do_export(*v, q.kind(), listen, q.nbd_security(), -1); !s.ok()) return s;
  volume_to_api(*v, out);
  publish(v1::EVENT_KIND_VOLUME_EXPORTED, v->dev_path.empty() ? v->uri : v->dev_path, v->r.group(), q.id());
  return persist_status();
}

grpc::Status ControlPlane::unexport_volume(const v1::VolumeRef& q, v1::Volume* out) {
  std::lock_guard<std::mutex> g(mu_);
  VolRec* v;
  if (auto s = find_volume(q.id(), &v); !s.ok()) return s;
  if (v->r.export_kind() == v1::EXPORT_KIND_UNSPECIFIED) return precondition(q.id() + " is not exported");
  if (auto s = stop_export(*v); !s.ok()) return s;
  volume_to_api(*v, out);
  return persist_status();
}

grpc::Status ControlPlane::stop_export(VolRec& v) {
  std::string err;
  // NVMe-oF: the target lets go of the ublk device first.
  if (v.r.export_kind() == v1::EXPORT_KIND_NVMF)
    if (auto s = stop_nvmf(v); !s.ok()) return s;
  if (v.export_active && exporter_ && !exporter_->unexport(v.r.id(), &err)) return precondition(err);
  if (v.r.export_kind() == v1::EXPORT_KIND_NVMF) forget_nvmf_secret(v);
  v.r.set_export_kind(v1::EXPORT_KIND_UNSPECIFIED);
  v.r.set_export_listen("");
  v.r.set_ublk_dev_id(-1);
  v.r.clear_nvmf();
  v.r.clear_nbd_security();
  v.export_active = false;
  v.uri.clear();
  v.dev_path.clear();
  v.export_note.clear();
  publish(v1::EVENT_KIND_VOLUME_UNEXPORTED, "", v.r.group(), v.r.id());
  return grpc::Status::OK;
}

grpc::Status ControlPlane::check_io(const std::string& id, uint64_t off, uint64_t len,
                                    std::shared_ptr<MeteredTarget>* t) {
  std::lock_guard<std::mutex> g(mu_);
  VolRec* v;
  if (auto s = find_volume(id, &v); !s.ok()) return s;
  if (!v->target) return precondition(id + " is offline: " + v->export_note);
  if (len == 0) return invalid("the length is 0");
  if (len > kMaxDebugIo) return invalid("at most 4MiB per request (got " + format_size(len) + ")");
  if (off % kBlockSize || len % kBlockSize) return invalid("offset and length must be multiples of 4KiB");
  if (off > v->r.size_bytes() || len > v->r.size_bytes() - off)
    return {grpc::StatusCode::OUT_OF_RANGE,
            "the range ends past the end of " + id + " (" + format_size(v->r.size_bytes()) + ")"};
  *t = v->target;
  return grpc::Status::OK;
}

namespace {
struct AlignedFree {
  void operator()(uint8_t* p) const { free(p); }
};
grpc::Status io_status(int rc, const std::string& why) {
  if (rc == -EIO) return {grpc::StatusCode::DATA_LOSS, "I/O error: the group cannot serve this range (" + why + ")"};
  return {grpc::StatusCode::INTERNAL, "I/O failed: " + why};
}
}  // namespace

grpc::Status ControlPlane::write_volume(const v1::WriteVolumeRequest& q, v1::WriteVolumeResponse* out) {
  std::shared_lock<std::shared_mutex> td(teardown_mu_);
  std::shared_ptr<MeteredTarget> t;
  if (auto s = check_io(q.id(), q.offset_bytes(), q.data().size(), &t); !s.ok()) return s;
  std::unique_ptr<uint8_t, AlignedFree> buf(static_cast<uint8_t*>(aligned_alloc(kBlockSize, q.data().size())));
  memcpy(buf.get(), q.data().data(), q.data().size());
  std::string why;
  int rc = host_.io(*t, IoRequest::Write, q.offset_bytes(), q.data().size(), buf.get(), q.fua(), &why);
  if (rc) return io_status(rc, why);
  out->set_bytes_written(q.data().size());
  return grpc::Status::OK;
}

grpc::Status ControlPlane::read_volume(const v1::ReadVolumeRequest& q, v1::ReadVolumeResponse* out) {
  std::shared_lock<std::shared_mutex> td(teardown_mu_);
  std::shared_ptr<MeteredTarget> t;
  if (auto s = check_io(q.id(), q.offset_bytes(), q.length_bytes(), &t); !s.ok()) return s;
  std::unique_ptr<uint8_t, AlignedFree> buf(static_cast<uint8_t*>(aligned_alloc(kBlockSize, q.length_bytes())));
  std::string why;
  int rc = host_.io(*t, IoRequest::Read, q.offset_bytes(), q.length_bytes(), buf.get(), false, &why);
  if (rc) return io_status(rc, why);
  out->set_data(buf.get(), q.length_bytes());
  return grpc::Status::OK;
}

}  // namespace gpuraid::daemon
