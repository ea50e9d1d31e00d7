#include "daemon/name_forms.h"

#include <set>
#include <string>

#include "engine/unicode_names.h"

namespace gpuraid::daemon {
namespace pb = google::protobuf;

namespace {

bool is_name_field(const pb::FieldDescriptor* f) {
  static const std::set<std::string> names = {"id", "name", "group", "drive", "drives", "spares", "new_drive", "volume"};
  return f->type() == pb::FieldDescriptor::TYPE_STRING && names.count(f->name()) > 0;
}

// Visits each name of q: fn(field, index or -1, value) returns whether to go on.
template <typename Fn>
void each_name(const pb::Message& q, Fn fn) {
  const pb::Descriptor* d = q.GetDescriptor();
  const pb::Reflection* r = q.GetReflection();
  for (int i = 0; i < d->field_count(); i++) {
    const pb::FieldDescriptor* f = d->field(i);
    if (!is_name_field(f)) continue;
    if (f->is_repeated()) {
      for (int k = 0; k < r->FieldSize(q, f); k++)
        if (!fn(f, k, r->GetRepeatedString(q, f, k))) return;
    } else if (!fn(f, -1, r->GetString(q, f))) {
      return;
    }
  }
}

}  // namespace

const pb::Message& names_in_nfc(const pb::Message& q, std::unique_ptr<pb::Message>* copy) {
  bool all_nfc = true;
  each_name(q, [&](const pb::FieldDescriptor*, int, const std::string& v) { return all_nfc = (nfc(v) == v); });
  if (all_nfc) return q;
  copy->reset(q.New());
  (*copy)->CopyFrom(q);
  pb::Message& m = **copy;
  const pb::Reflection* r = m.GetReflection();
  each_name(q, [&](const pb::FieldDescriptor* f, int k, const std::string& v) {
    if (k < 0) r->SetString(&m, f, nfc(v));
    else r->SetRepeatedString(&m, f, k, nfc(v));
    return true;
  });
  return m;
}

}  // namespace gpuraid::daemon
