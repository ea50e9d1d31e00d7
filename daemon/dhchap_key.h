// DH-HMAC-CHAP secrets (NVMe in-band authentication) in the form the kernel
// takes in nvmet's hosts/<nqn>/dhchap_key and `nvme connect --dhchap-secret`:
//   DHHC-1:HH:BASE64:
// HH is the hash that transforms the key (00 none, 01 SHA-256, 02 SHA-384,
// 03 SHA-512); BASE64 holds a 32, 48 or 64 byte key followed by its CRC-32
// (little-endian). `nvme gen-dhchap-key` makes them. The kernel only parses
// the prefix when the key is written and finds the rest bad at the first
// connect, so the daemon checks all of it before anything is configured.
//
// Nothing here ever puts the key into a message.
#pragma once
#include <string>

namespace gpuraid::daemon {

// The key without the white space around it (a file's trailing newline).
std::string dhchap_trim(const std::string& s);
// "" when `key` is a well-formed DH-HMAC-CHAP secret, else what is wrong
// with it (never any part of the key).
std::string dhchap_key_problem(const std::string& key);

}  // namespace gpuraid::daemon
