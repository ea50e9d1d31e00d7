// --json output: protobuf messages written by reflection, so that every
// number is a JSON number (protobuf's own mapping quotes 64-bit integers)
// and every enum value is the word the tables print (proto/api_words.h).
// Fields come in declaration order; scalars and lists always, a message
// or a oneof member only when set.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <charconv>
#include <cmath>
#include <cstdio>

#include "cli/output.h"
#include "proto/api_words.h"

namespace gpuraid::cli {

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

void print_json(const pb::Message& m, bool compact) {
  Writer w(compact);
  w.message(m, 0);
  printf("%s\n", w.out.c_str());
}

}  // namespace gpuraid::cli
