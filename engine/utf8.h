// UTF-8, as names and paths carry it: decoding one character at a time,
// whether a character may appear in an object's name, and how many
// terminal columns a string takes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace gpuraid {

// Decodes the character at s[i]: its length in bytes, or 0 when the bytes
// there are not well-formed UTF-8 (overlong, a surrogate, past U+10FFFF, cut).
size_t utf8_decode(const std::string& s, size_t i, uint32_t* cp);
// Whether every byte of s is part of a well-formed UTF-8 character.
bool utf8_valid(const std::string& s);
// Characters a name may not hold beyond ASCII: controls, spaces of every
// kind, invisible format characters (zero-width, direction overrides, soft
// hyphen, byte-order mark), non-characters and U+FFFD.
bool utf8_invisible(uint32_t cp);
// The one rule for object names (PDs, DGs, VDs: the API checks it, and the
// exports that use a VD's name in a socket path or an NBD export name):
// non-empty, at most max_bytes, valid UTF-8, letters and digits of any
// script (not utf8_invisible), '.', '_' and '-', starting with a letter or
// digit. false with *why (a sentence without the name) otherwise.
bool name_rule_ok(const std::string& s, size_t max_bytes, std::string* why);
// s in single quotes, for an error message: its UTF-8 kept, anything else
// (invalid bytes, controls, invisible characters) as \xNN; "..." after
// the first max_bytes bytes.
std::string utf8_quote(const std::string& s, size_t max_bytes);
// Columns s takes in a terminal (East Asian wide characters two, combining
// marks none); invalid bytes count one each.
size_t display_width(const std::string& s);

}  // namespace gpuraid
