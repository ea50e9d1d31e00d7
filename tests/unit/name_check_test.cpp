// Names of drives, groups and volumes are UTF-8, stored and returned intact;
// what cannot be a name is refused, and errors quote it readably.
#include <gtest/gtest.h>

#include "daemon/validate.h"
#include "engine/utf8.h"

using gpuraid::daemon::check_name;
using gpuraid::daemon::quote;

TEST(NameCheck, AcceptsLettersOfAnyScript) {
  for (const char* n : {"dg0", "backup-2024.1", "données", "数据组", "группа_1", "Ωmega", "9lives"})
    EXPECT_TRUE(check_name("group name", n).ok()) << n << ": " << check_name("group name", n).error_message();
}

TEST(NameCheck, RefusesWhatCannotBeAName) {
  const std::string cases[] = {
      "",                                // empty
      std::string(64, 'a'),              // 64 bytes
      std::string(22, 'x') + "数据组数据组数据组数据组数据组",  // 22 + 45 = 67 bytes
      "a b",                             // space
      "a/b",                             // slash
      "-x",                              // must start with a letter or digit
      "a\xc2\xa0" "b",                   // no-break space
      "a\xe2\x80\x8b" "b",               // zero-width space
      "a\xe2\x80\xae" "b",               // right-to-left override
      "a\xef\xbb\xbf",                   // byte-order mark
      "caf\xe9",                         // Latin-1, not UTF-8
      "a\xc0\xaf",                       // overlong '/'
      "\xed\xa0\x80x",                   // a surrogate
      std::string("a\0b", 3),            // NUL
  };
  for (const auto& n : cases) EXPECT_FALSE(check_name("group name", n).ok()) << quote(n);
}

TEST(NameCheck, QuoteKeepsUtf8AndEscapesTheRest) {
  EXPECT_EQ(quote("数据组"), "'数据组'");
  EXPECT_EQ(quote("caf\xe9"), "'caf\\xe9'");
  EXPECT_EQ(quote("a\nb"), "'a\\x0ab'");
  EXPECT_EQ(quote(std::string(70, 'z')), "'" + std::string(64, 'z') + "...'");
}

TEST(Utf8, DisplayWidthCountsColumns) {
  EXPECT_EQ(gpuraid::display_width("dg0"), 3u);
  EXPECT_EQ(gpuraid::display_width("données"), 7u);
  EXPECT_EQ(gpuraid::display_width("数据组"), 6u);
  EXPECT_EQ(gpuraid::display_width("e\xcc\x81"), 1u);  // e + combining acute
}
