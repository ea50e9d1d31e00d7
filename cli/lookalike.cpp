#include "cli/lookalike.h"

#include <cstdio>
#include <vector>

#include "cli/client.h"
#include "engine/unicode_names.h"

namespace gpuraid::cli {

void warn_if_lookalike(Client& cl, NameKind kind, const std::string& name) {
  std::vector<std::string> others;
  const char* what = "";
  if (kind == NameKind::Drive) {
    v1::ListDrivesResponse r;
    if (cl.call(&v1::Gpuraid::Stub::ListDrives, v1::ListDrivesRequest(), &r) == 0)
      for (const auto& d : r.drives()) others.push_back(d.id());
    what = "drive";
  } else if (kind == NameKind::Group) {
    v1::ListGroupsResponse r;
    if (cl.call(&v1::Gpuraid::Stub::ListGroups, v1::ListGroupsRequest(), &r) == 0)
      for (const auto& g : r.groups()) others.push_back(g.name());
    what = "group";
  } else {
    v1::ListVolumesResponse r;
    if (cl.call(&v1::Gpuraid::Stub::ListVolumes, v1::ListVolumesRequest(), &r) == 0)
      for (const auto& v : r.volumes()) others.push_back(v.id());
    what = "virtual drive";
  }
  const std::string key = lookalike_key(name);
  if (key.empty()) return;
  for (const std::string& o : others)
    if (o != name && nfc(o) != nfc(name) && lookalike_key(o) == key)
      fprintf(stderr, "warning: the name '%s' looks like the %s '%s' (look-alike characters of other scripts)\n",
              name.c_str(), what, o.c_str());
}

}  // namespace gpuraid::cli
