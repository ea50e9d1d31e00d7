// Object names as the control plane compares them: a request's PD, DG and
// VD names (its top-level fields id, name, group, drive, drives, spares,
// new_drive, volume) are put in Unicode NFC before the request is served, so
// that a name typed composed ("ün") or decomposed ("u" + U+0308 + "n") is
// one name everywhere (issue 33, item 12). Paths, NQNs and keys are left
// as they are.
#pragma once
#include <google/protobuf/message.h>

#include <memory>

namespace gpuraid::daemon {

// q with its names in NFC: q itself when they are already (the usual case,
// no copy), else a normalised copy kept in *copy.
const google::protobuf::Message& names_in_nfc(const google::protobuf::Message& q,
                                              std::unique_ptr<google::protobuf::Message>* copy);

template <typename Req>
const Req& names_in_nfc(const Req& q, std::unique_ptr<google::protobuf::Message>* copy) {
  return static_cast<const Req&>(names_in_nfc(static_cast<const google::protobuf::Message&>(q), copy));
}

}  // namespace gpuraid::daemon
