// Names as people compare them (issue 33, item 12), by ICU (Debian's
// libicu): one name however its characters are composed (Unicode NFC), and
// the names that only look alike (Cyrillic "ес42" beside Latin "ec42").
#pragma once
#include <string>

namespace gpuraid {

// s in Unicode normal form C (composed: "u" + U+0308 becomes "ü"); s itself
// when it is not valid UTF-8 (the name rule refuses it then).
std::string nfc(const std::string& s);
// What s looks like (ICU's confusable skeleton, UTS #39): two different
// names with one skeleton are look-alikes. Empty when ICU cannot tell.
std::string lookalike_key(const std::string& s);

}  // namespace gpuraid
