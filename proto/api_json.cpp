// api_json.h. The writer is by hand (protobuf's JsonPrint quotes 64-bit
// numbers and spells enums as their names); the reader walks a parsed
// nlohmann::json by the same reflection.
#include "proto/api_json.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "proto/api_words.h"

namespace gpuraid::v1 {

namespace pb = google::protobuf;

std::string json_quote(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      case '\t': o += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char b[8];
          snprintf(b, sizeof b, "\\u%04x", c);
          o += b;
        } else {
          o += char(c);  // UTF-8 passes through
        }
    }
  }
  return o + "\"";
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char b[32];
  auto r = std::to_chars(b, b + sizeof b, v);
  return std::string(b, r.ptr);
}

namespace {
std::string base64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string o;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = uint32_t(uint8_t(in[i])) << 16 | uint32_t(uint8_t(in[i + 1])) << 8 | uint8_t(in[i + 2]);
    o += {t[v >> 18], t[v >> 12 & 63], t[v >> 6 & 63], t[v & 63]};
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint32_t(uint8_t(in[i])) << 16;
    o += {t[v >> 18], t[v >> 12 & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    uint32_t v = uint32_t(uint8_t(in[i])) << 16 | uint32_t(uint8_t(in[i + 1])) << 8;
    o += {t[v >> 18], t[v >> 12 & 63], t[v >> 6 & 63], '='};
  }
  return o;
}

class Writer {
 public:
  explicit Writer(bool compact) : compact_(compact) {}
  std::string out;

  void message(const pb::Message& m, int depth) {
    const pb::Descriptor* d = m.GetDescriptor();
    const pb::Reflection* r = m.GetReflection();
    out += "{";
    bool first = true;
    for (int i = 0; i < d->field_count(); i++) {
      const pb::FieldDescriptor* f = d->field(i);
      if (!f->is_repeated() && (f->message_type() || f->has_presence()) && !r->HasField(m, f)) continue;
      out += first ? "" : ",";
      first = false;
      newline(depth + 1);
      out += json_quote(f->name()) + (compact_ ? ":" : ": ");
      if (!f->is_repeated()) {
        value(m, f, -1, depth + 1);
        continue;
      }
      const int n = r->FieldSize(m, f);
      out += "[";
      for (int k = 0; k < n; k++) {
        out += k ? "," : "";
        newline(depth + 2);
        value(m, f, k, depth + 2);
      }
      if (n) newline(depth + 1);
      out += "]";
    }
    if (!first) newline(depth);
    out += "}";
  }

 private:
  bool compact_;

  void newline(int depth) {
    if (!compact_) out += "\n" + std::string(size_t(depth) * 2, ' ');
  }

  // Field f of m (element k of a repeated field, -1 for a singular one).
  void value(const pb::Message& m, const pb::FieldDescriptor* f, int k, int depth) {
    const pb::Reflection* r = m.GetReflection();
    const bool rep = k >= 0;
    using F = pb::FieldDescriptor;
    switch (f->cpp_type()) {
      case F::CPPTYPE_INT32: out += std::to_string(rep ? r->GetRepeatedInt32(m, f, k) : r->GetInt32(m, f)); break;
      case F::CPPTYPE_INT64: out += std::to_string(rep ? r->GetRepeatedInt64(m, f, k) : r->GetInt64(m, f)); break;
      case F::CPPTYPE_UINT32: out += std::to_string(rep ? r->GetRepeatedUInt32(m, f, k) : r->GetUInt32(m, f)); break;
      case F::CPPTYPE_UINT64: out += std::to_string(rep ? r->GetRepeatedUInt64(m, f, k) : r->GetUInt64(m, f)); break;
      case F::CPPTYPE_DOUBLE: out += json_number(rep ? r->GetRepeatedDouble(m, f, k) : r->GetDouble(m, f)); break;
      case F::CPPTYPE_FLOAT: out += json_number(rep ? r->GetRepeatedFloat(m, f, k) : r->GetFloat(m, f)); break;
      case F::CPPTYPE_BOOL: out += (rep ? r->GetRepeatedBool(m, f, k) : r->GetBool(m, f)) ? "true" : "false"; break;
      case F::CPPTYPE_ENUM:
        out += json_quote(v1::api_word(f->enum_type(), rep ? r->GetRepeatedEnumValue(m, f, k) : r->GetEnumValue(m, f)));
        break;
      case F::CPPTYPE_STRING: {
        std::string s = rep ? r->GetRepeatedString(m, f, k) : r->GetString(m, f);
        out += json_quote(f->type() == F::TYPE_BYTES ? base64(s) : s);
        break;
      }
      case F::CPPTYPE_MESSAGE: message(rep ? r->GetRepeatedMessage(m, f, k) : r->GetMessage(m, f), depth); break;
    }
  }
};
}  // namespace

std::string api_json(const pb::Message& m, bool compact) {
  Writer w(compact);
  w.message(m, 0);
  return w.out;
}

namespace {
using nlohmann::json;
using F = pb::FieldDescriptor;

bool fail(std::string* err, const std::string& why) {
  if (err) *err = why;
  return false;
}

// An integer field's value: a JSON number, or protobuf's quoted form.
template <typename T>
bool integer(const json& j, T* out) {
  if (j.is_number_integer()) {
    *out = j.get<T>();
    return true;
  }
  if (!j.is_string()) return false;
  const std::string& s = j.get_ref<const std::string&>();
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool from_json(const json& j, pb::Message* m, std::string* err);

// One value of field f (appended when repeated).
bool set_value(const json& j, pb::Message* m, const F* f, std::string* err) {
  const pb::Reflection* r = m->GetReflection();
  const bool rep = f->is_repeated();
  const std::string bad = "field " + f->name() + ": not a valid value";
  switch (f->cpp_type()) {
#define GPRAID_INT(CT, T, Set, Add)                        \
  case F::CT: {                                            \
    T v;                                                   \
    if (!integer(j, &v)) return fail(err, bad);            \
    rep ? r->Add(m, f, v) : r->Set(m, f, v);               \
    return true;                                           \
  }
    GPRAID_INT(CPPTYPE_INT32, int32_t, SetInt32, AddInt32)
    GPRAID_INT(CPPTYPE_INT64, int64_t, SetInt64, AddInt64)
    GPRAID_INT(CPPTYPE_UINT32, uint32_t, SetUInt32, AddUInt32)
    GPRAID_INT(CPPTYPE_UINT64, uint64_t, SetUInt64, AddUInt64)
#undef GPRAID_INT
    case F::CPPTYPE_DOUBLE:
    case F::CPPTYPE_FLOAT: {
      if (!j.is_number() && !j.is_null()) return fail(err, bad);
      const double v = j.is_null() ? NAN : j.get<double>();
      if (f->cpp_type() == F::CPPTYPE_DOUBLE) rep ? r->AddDouble(m, f, v) : r->SetDouble(m, f, v);
      else rep ? r->AddFloat(m, f, float(v)) : r->SetFloat(m, f, float(v));
      return true;
    }
    case F::CPPTYPE_BOOL:
      if (!j.is_boolean()) return fail(err, bad);
      rep ? r->AddBool(m, f, j.get<bool>()) : r->SetBool(m, f, j.get<bool>());
      return true;
    case F::CPPTYPE_ENUM: {
      int v = 0;
      if (j.is_number_integer()) {
        v = j.get<int>();
      } else if (!j.is_string()) {
        return fail(err, bad);
      } else if (!api_value(f->enum_type(), j.get<std::string>(), &v)) {
        const pb::EnumValueDescriptor* e = f->enum_type()->FindValueByName(j.get<std::string>());
        if (!e) return fail(err, "field " + f->name() + ": no value " + j.get<std::string>());
        v = e->number();
      }
      rep ? r->AddEnumValue(m, f, v) : r->SetEnumValue(m, f, v);
      return true;
    }
    case F::CPPTYPE_STRING: {
      if (!j.is_string()) return fail(err, bad);
      if (f->type() == F::TYPE_BYTES) return fail(err, "field " + f->name() + ": bytes are not read back");
      rep ? r->AddString(m, f, j.get<std::string>()) : r->SetString(m, f, j.get<std::string>());
      return true;
    }
    case F::CPPTYPE_MESSAGE:
      return from_json(j, rep ? r->AddMessage(m, f) : r->MutableMessage(m, f), err);
  }
  return fail(err, bad);
}

bool from_json(const json& j, pb::Message* m, std::string* err) {
  if (!j.is_object()) return fail(err, m->GetDescriptor()->name() + ": not a JSON object");
  const pb::Descriptor* d = m->GetDescriptor();
  for (auto it = j.begin(); it != j.end(); ++it) {
    const F* f = d->FindFieldByName(it.key());
    if (!f) f = d->FindFieldByCamelcaseName(it.key());
    if (!f || it.value().is_null()) continue;
    if (f->is_repeated()) {
      if (!it.value().is_array()) return fail(err, "field " + f->name() + ": not a list");
      for (const json& e : it.value())
        if (!set_value(e, m, f, err)) return false;
    } else if (!set_value(it.value(), m, f, err)) {
      return false;
    }
  }
  return true;
}
}  // namespace

bool api_json_parse(const std::string& text, pb::Message* m, std::string* err) {
  m->Clear();
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return fail(err, "not JSON");
  return from_json(j, m, err);
}

}  // namespace gpuraid::v1
