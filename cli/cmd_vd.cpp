// gpuraid vd create|list|show|resize|delete|export|unexport|write|read
#include <cstdio>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include <unistd.h>

#include <cerrno>

#include "cli/lookalike.h"
#include "cli/cli.h"
#include "cli/errors.h"
#include "cli/id_command.h"
#include "cli/describe.h"
#include "cli/output.h"
#include "cli/pattern.h"

namespace gpuraid::cli {

namespace {
constexpr uint64_t kChunk = 4u << 20;  // the daemon takes at most 4 MiB per call

std::string join(const google::protobuf::RepeatedPtrField<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// A secret read from a file ('-' = stdin), for the request: the daemon
// checks its form (the CLI never prints it).
int read_secret_file(const std::string& path, const char* opt, std::string* out) {
  FILE* f = path == "-" ? stdin : fopen(path.c_str(), "rb");
  if (!f) return file_error(std::string(opt) + ": cannot open " + path + ": " + strerror(errno));
  char buf[512];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0 && out->size() <= 4096) out->append(buf, n);
  const bool bad = ferror(f);
  if (f != stdin) fclose(f);
  if (bad) return file_error(std::string(opt) + ": cannot read " + path);
  if (out->size() > 4096) return file_error(std::string(opt) + ": " + path + " is too big for a key");
  if (out->empty()) return file_error(std::string(opt) + ": " + path + " is empty");
  return 0;
}

void print_volume(const v1::Volume& v) {
  std::vector<std::pair<std::string, std::string>> f = {{"id", v.id()},
                                                        {"group", v.group()},
                                                        {"size", size_str(v.size_bytes())},
                                                        {"offset", size_str(v.offset_bytes())},
                                                        {"min io", size_str(v.min_io_bytes())},
                                                        {"optimal io", size_str(v.optimal_io_bytes())},
                                                        {"online", v.online() ? "yes" : "no (its group is offline)"},
                                                        {"export", export_str(v)},
                                                        {"export security", export_security_str(v)}};
  if (v.export_().kind() == v1::EXPORT_KIND_NVMF) {  // the fabric side
    const auto& n = v.export_().nvmf();
    f.push_back({"hosts allowed", n.allow_any_host() ? "ANY host" : join(n.allowed_hosts())});
    f.push_back({"nvmet port", n.port_id() + (n.port_shared() ? " (shared)" : "")});
    f.push_back({"namespace", std::to_string(n.nsid()) + ", uuid " + n.ns_uuid() + ", nguid " + n.ns_nguid()});
    std::string c;
    for (const auto& h : n.connected_hosts())
      c += (c.empty() ? "" : "; ") + (h.host_nqn().empty() ? "" : h.host_nqn() + " ") + "from " + h.address() +
           (h.state().empty() ? "" : " (" + h.state() + ")");
    f.push_back({"connected", c.empty() ? "none" : c});
  }
  print_fields(f);
}

// A subcommand taking one VD id: "DONE VD" once it is done, or (done
// empty) the volume it answers with.
template <typename Resp, typename M>
void volume_command(Cli& c, CLI::App* vd, const char* name, const char* help, M rpc, const char* done) {
  add_id_command<v1::VolumeRef, Resp>(c, vd, name, help, "vd", "virtual drive id", rpc,
                                      [done](const Resp& r, const std::string& id) {
                                        if constexpr (std::is_same_v<Resp, v1::Volume>)
                                          if (!*done) return print_volume(r);
                                        printf("%s %s\n", done, id.c_str());
                                      });
}

int do_write(Client& cl, const std::string& vd, uint64_t off, uint64_t len, FILE* in, bool pattern, uint64_t seed,
             bool fua, bool json) {
  std::vector<uint8_t> buf(kChunk);
  uint64_t done = 0;
  while (done < len || (!pattern && len == 0)) {
    size_t n = size_t(std::min<uint64_t>(kChunk, len ? len - done : kChunk));
    if (pattern) {
      fill_pattern(seed, off + done, buf.data(), n);
    } else {
      n = fread(buf.data(), 1, n, in);
      if (n == 0) break;
      if (n % 4096) {  // the tail of a file: pad to a whole block with zeroes
        size_t padded = (n + 4095) / 4096 * 4096;
        memset(buf.data() + n, 0, padded - n);
        n = padded;
      }
    }
    v1::WriteVolumeRequest q;
    q.set_id(vd);
    q.set_offset_bytes(off + done);
    q.set_data(buf.data(), n);
    q.set_fua(fua);
    v1::WriteVolumeResponse r;
    if (int rc = cl.call(&v1::Gpuraid::Stub::WriteVolume, q, &r)) return rc;
    done += n;
    if (!pattern && len == 0 && n < kChunk) break;
  }
  if (json) printf("{\"bytes_written\": %lu}\n", (unsigned long)done);
  else printf("wrote %s to %s at offset %s\n", size_str(done).c_str(), vd.c_str(), size_str(off).c_str());
  return kOk;
}

int do_read(Client& cl, const std::string& vd, uint64_t off, uint64_t len, FILE* out, bool verify, uint64_t seed,
            bool json) {
  for (uint64_t done = 0; done < len;) {
    uint64_t n = std::min(kChunk, len - done);
    v1::ReadVolumeRequest q;
    q.set_id(vd);
    q.set_offset_bytes(off + done);
    q.set_length_bytes(n);
    v1::ReadVolumeResponse r;
    if (int rc = cl.call(&v1::Gpuraid::Stub::ReadVolume, q, &r)) return rc;
    const auto* p = reinterpret_cast<const uint8_t*>(r.data().data());
    if (verify) {
      int64_t bad = check_pattern(seed, off + done, p, r.data().size());
      if (bad >= 0) {
        return report_error(kMismatch, "mismatch",
                            "MISMATCH: " + vd + " differs from pattern " + std::to_string(seed) + " at byte " +
                                std::to_string(off + done + uint64_t(bad)),
                            false);
      }
    } else if (fwrite(p, 1, r.data().size(), out) != r.data().size()) {
      return report_error(kServerError, "output", "cannot write the output", false);
    }
    done += n;
  }
  if (verify) {
    if (json) printf("{\"verified_bytes\": %lu}\n", (unsigned long)len);
    else printf("verified %s of %s at offset %s: every byte matches pattern %lu\n", size_str(len).c_str(), vd.c_str(),
                size_str(off).c_str(), (unsigned long)seed);
  }
  return kOk;
}
}  // namespace

void add_vd_commands(Cli& c) {
  auto* vd = c.app.add_subcommand("vd", "virtual drives");
  vd->require_subcommand(1);
  {
    struct A {
      std::string group, size, name;
      bool rest = false;
    };
    auto a = std::make_shared<A>();
    auto* s = vd->add_subcommand("create", "create a virtual drive in a group");
    s->add_option("group", a->group, "group name")->required();
    auto* sz = s->add_option("--size", a->size, "size (rounded up to whole stripes)")->check(kSize);
    auto* rest = s->add_flag("--rest", a->rest, "all the group's remaining space");
    sz->excludes(rest);
    s->add_option("--name", a->name, "id to give it (default vdN)");
    s->callback([&c, a] {
      c.action = [&c, a](Client& cl) {
        if (a->size.empty() && !a->rest) {
          return usage_error("give --size SIZE or --rest");
        }
        v1::CreateVolumeRequest q;
        q.set_group(a->group);
        if (!a->size.empty()) {
          q.set_size_bytes(size_arg(a->size));
          if (q.size_bytes() == 0) {
            return usage_error("the size must be larger than 0");
          }
        }
        q.set_rest(a->rest);
        q.set_id(a->name);
        v1::Volume r;
        if (int rc = cl.call(&v1::Gpuraid::Stub::CreateVolume, q, &r)) return rc;
        if (c.g.json) print_json(r);
        else printf("created %s: %s in %s\n", r.id().c_str(), size_str(r.size_bytes()).c_str(), r.group().c_str());
        warn_if_lookalike(cl, NameKind::Volume, r.id());
        return int(kOk);
      };
    });
  }
  {
    auto group = std::make_shared<std::string>();
    auto* s = vd->add_subcommand("list", "list virtual drives");
    s->add_option("--group", *group, "only this group's");
    s->callback([&c, group] {
      c.action = [&c, group](Client& cl) {
        v1::ListVolumesRequest q;
        q.set_group(*group);
        v1::ListVolumesResponse r;
        if (int rc = cl.call(&v1::Gpuraid::Stub::ListVolumes, q, &r)) return rc;
        if (c.g.json) return print_json(r), int(kOk);
        Table t({"ID", "GROUP", "SIZE", "OFFSET", "ONLINE", "EXPORT"});
        for (const auto& v : r.volumes())
          t.add({v.id(), v.group(), size_str(v.size_bytes()), size_str(v.offset_bytes()), v.online() ? "yes" : "no",
                 export_str(v)});
        t.print();
        return int(kOk);
      };
    });
  }
  volume_command<v1::Volume>(c, vd, "show", "show a virtual drive", &v1::Gpuraid::Stub::GetVolume, "");
  volume_command<v1::Empty>(c, vd, "delete", "delete a virtual drive (its data is gone)", &v1::Gpuraid::Stub::DeleteVolume,
                            "deleted");
  volume_command<v1::Volume>(c, vd, "unexport", "stop exporting a virtual drive", &v1::Gpuraid::Stub::UnexportVolume, "unexported");
  {
    struct A {
      std::string id, size;
    };
    auto a = std::make_shared<A>();
    auto* s = vd->add_subcommand("resize", "grow a virtual drive");
    s->add_option("vd", a->id, "virtual drive id")->required();
    s->add_option("--size", a->size, "new size (larger than the current one)")->required()->check(kSize);
    s->callback([&c, a] {
      c.action = [&c, a](Client& cl) {
        v1::ResizeVolumeRequest q;
        q.set_id(a->id);
        q.set_size_bytes(size_arg(a->size));
        v1::Volume r;
        if (int rc = cl.call(&v1::Gpuraid::Stub::ResizeVolume, q, &r)) return rc;
        if (c.g.json) print_json(r);
        else printf("%s is now %s\n", r.id().c_str(), size_str(r.size_bytes()).c_str());
        return int(kOk);
      };
    });
  }
  {
    struct A {
      std::string id, listen, nvmf, nqn, tls, cert, key, ca, psk, dhchap, dhchap_file;
      std::vector<std::string> hosts;
      bool ublk = false, nbd = false, any_host = false, force = false, insecure = false;
    };
    auto a = std::make_shared<A>();
    auto* s = vd->add_subcommand("export", "export a virtual drive as /dev/ublkbN, over NBD or over NVMe-oF");
    s->add_option("vd", a->id, "virtual drive id")->required();
    auto* u = s->add_flag("--ublk", a->ublk, "as a ublk block device");
    auto* n = s->add_flag("--nbd", a->nbd, "as an NBD export");
    auto* f = s->add_option("--nvmf", a->nvmf,
                            "over NVMe-oF at tcp://ADDR:PORT: the kernel's target (nvmet) serves the ublk device");
    u->excludes(n);
    f->excludes(u)->excludes(n);
    s->add_option("--listen", a->listen, "NBD: unix:PATH or tcp:HOST:PORT (default: a socket in the state dir)")->needs(n);
    s->add_option("--nqn", a->nqn, "NVMe-oF: the subsystem NQN (default nqn.2026-11.io.gpuraid:vd:<namespace uuid>)")
        ->needs(f);
    auto* ah = s->add_option("--allow-host", a->hosts, "NVMe-oF: a host NQN that may connect (repeat for more)")->needs(f);
    auto* any = s->add_flag("--allow-any-host", a->any_host, "NVMe-oF: any host may connect (not on a non-loopback "
                                                              "address unless --force)")->needs(f);
    any->excludes(ah);
    s->add_flag("--force", a->force, "NVMe-oF: allow any host on a non-loopback address")->needs(any);
    auto* dk = s->add_option("--dhchap-secret", a->dhchap,
                             "NVMe-oF: the DH-HMAC-CHAP key (DHHC-1:HH:BASE64:, from nvme gen-dhchap-key) the allowed "
                             "hosts authenticate with (visible to other users in ps: prefer --dhchap-secret-file)")
                   ->needs(ah);
    s->add_option("--dhchap-secret-file", a->dhchap_file,
                  "NVMe-oF: read the DH-HMAC-CHAP key from FILE ('-' = stdin)")
        ->needs(ah)
        ->excludes(dk);
    // The files are read by the daemon, on its machine (paths made absolute here).
    s->add_option("--tls", a->tls, "NBD: STARTTLS off (default), allow, or require")
        ->check(CLI::IsMember({"off", "allow", "require"}))
        ->needs(n);
    s->add_option("--nbd-tls-cert", a->cert, "NBD TLS: the server certificate (PEM)")->needs(n);
    s->add_option("--nbd-tls-key", a->key, "NBD TLS: its private key (PEM)")->needs(n);
    s->add_option("--nbd-tls-ca", a->ca, "NBD TLS: the CA (PEM) client certificates must be signed by")->needs(n);
    s->add_option("--nbd-tls-psk", a->psk, "NBD TLS: pre-shared keys instead (psktool file: USERNAME:HEXKEY lines)")
        ->needs(n);
    s->add_flag("--insecure-listen", a->insecure,
                "NBD: serve plain clients on a non-loopback TCP address (anyone who can reach it can read and "
                "overwrite the drive)")
        ->needs(n);
    s->callback([&c, a, dk] {
      c.action = [&c, a, dk](Client& cl) {
        if (!a->ublk && !a->nbd && a->nvmf.empty()) {
          return usage_error("give --ublk, --nbd or --nvmf tcp://ADDR:PORT");
        }
        v1::ExportVolumeRequest q;
        q.set_id(a->id);
        q.set_kind(a->ublk ? v1::EXPORT_KIND_UBLK : a->nbd ? v1::EXPORT_KIND_NBD : v1::EXPORT_KIND_NVMF);
        q.set_listen(a->nvmf.empty() ? a->listen : a->nvmf);
        if (!a->nvmf.empty()) {
          auto* nv = q.mutable_nvmf();
          nv->set_nqn(a->nqn);
          for (const auto& h : a->hosts) nv->add_allowed_hosts(h);
          nv->set_allow_any_host(a->any_host);
          nv->set_force(a->force);
          if (!a->dhchap_file.empty()) {
            if (int rc = read_secret_file(a->dhchap_file, "--dhchap-secret-file", nv->mutable_dhchap_secret())) return rc;
          } else if (dk->count()) {
            if (a->dhchap.empty()) return usage_error("--dhchap-secret is empty");
            nv->set_dhchap_secret(a->dhchap);
          }
        }
        if (a->nbd && (!a->tls.empty() || a->insecure)) {
          auto* sec = q.mutable_nbd_security();
          sec->set_tls(a->tls == "require" ? v1::NBD_TLS_REQUIRE : a->tls == "allow" ? v1::NBD_TLS_ALLOW : v1::NBD_TLS_OFF);
          sec->set_tls_cert(absolute_path(a->cert));
          sec->set_tls_key(absolute_path(a->key));
          sec->set_tls_ca(absolute_path(a->ca));
          sec->set_tls_psk(absolute_path(a->psk));
          sec->set_insecure_listen(a->insecure);
        } else if (!a->cert.empty() || !a->key.empty() || !a->ca.empty() || !a->psk.empty()) {
          return usage_error("TLS files need --tls require (or allow)");
        }
        v1::Volume r;
        if (int rc = cl.call(&v1::Gpuraid::Stub::ExportVolume, q, &r)) return rc;
        if (c.g.json) print_json(r);
        else printf("%s exported: %s\n", r.id().c_str(), export_str(r).c_str());
        return int(kOk);
      };
    });
  }
  {
    struct A {
      std::string id, offset = "0", length, in;
      uint64_t seed = 0;
      bool fua = false;
    };
    auto a = std::make_shared<A>();
    auto* s = vd->add_subcommand("write", "write data through the engine (smoke checks; 4K-aligned)");
    s->add_option("vd", a->id, "virtual drive id")->required();
    s->add_option("--offset", a->offset, "where to start")->check(kSize);
    auto* len = s->add_option("--length", a->length, "how much (required with --pattern)")->check(kSize);
    auto* in = s->add_option("--in", a->in, "read the data from FILE ('-' = stdin)");
    auto* pat = s->add_option("--pattern", a->seed, "write a deterministic pattern from this seed");
    in->excludes(pat);
    pat->needs(len);
    s->add_flag("--fua", a->fua, "durable before the call returns");
    s->callback([&c, a, in, pat] {
      c.action = [&c, a, in, pat](Client& cl) {
        if (!in->count() && !pat->count()) {
          return usage_error("give --in FILE or --pattern SEED");
        }
        FILE* f = nullptr;
        if (in->count()) {
          f = a->in == "-" ? stdin : fopen(a->in.c_str(), "rb");
          if (!f) {
            return file_error("cannot open " + a->in + ": " + strerror(errno));
          }
        }
        int rc = do_write(cl, a->id, size_arg(a->offset), a->length.empty() ? 0 : size_arg(a->length), f,
                          pat->count() > 0, a->seed, a->fua, c.g.json);
        if (f && f != stdin) fclose(f);
        return rc;
      };
    });
  }
  {
    struct A {
      std::string id, offset = "0", length, out;
      uint64_t seed = 0;
    };
    auto a = std::make_shared<A>();
    auto* s = vd->add_subcommand("read", "read data through the engine (to a file, or checked against a pattern)");
    s->add_option("vd", a->id, "virtual drive id")->required();
    s->add_option("--offset", a->offset, "where to start")->check(kSize);
    s->add_option("--length", a->length, "how much")->required()->check(kSize);
    auto* out = s->add_option("--out", a->out, "write the data to FILE ('-' = stdout)");
    auto* ver = s->add_option("--verify-pattern", a->seed, "check the data against the pattern of this seed");
    out->excludes(ver);
    s->callback([&c, a, out, ver] {
      c.action = [&c, a, out, ver](Client& cl) {
        if (!out->count() && !ver->count()) {
          return usage_error("give --out FILE or --verify-pattern SEED");
        }
        FILE* f = nullptr;
        if (out->count()) {
          f = a->out == "-" ? stdout : fopen(a->out.c_str(), "wb");
          if (!f) {
            return file_error("cannot create " + a->out + ": " + strerror(errno));
          }
        }
        int rc = do_read(cl, a->id, size_arg(a->offset), size_arg(a->length), f, ver->count() > 0, a->seed,
                         c.g.json && ver->count());
        if (f && f != stdout) fclose(f);
        return rc;
      };
    });
  }
}

}  // namespace gpuraid::cli
