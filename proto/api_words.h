// The words an operator reads for the API's enum values: in the CLI's
// tables and --json output, in the metrics' labels and in docs/STATES.md.
// A word is the value's name without its type's prefix, lowercased
// (GROUP_STATE_OPTIMAL -> "optimal", DRIVE_TYPE_NVME_CHAR -> "nvme_char";
// RAID levels read "raid0".."raid6", "ec"). Derived here, in one place, so
// a new enum value gets its word everywhere at once and no two outputs differ.
#pragma once
#include <google/protobuf/descriptor.h>
#include <google/protobuf/generated_enum_reflection.h>

#include <string>

namespace gpuraid::v1 {

std::string api_word(const google::protobuf::EnumDescriptor* type, int value);

template <typename E>
std::string api_word(E value) {
  return api_word(google::protobuf::GetEnumDescriptor<E>(), int(value));
}

// The value whose word is `word` (also accepted: '-' for '_', any case);
// false when there is none.
bool api_value(const google::protobuf::EnumDescriptor* type, const std::string& word, int* out);

}  // namespace gpuraid::v1
