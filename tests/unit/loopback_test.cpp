// Which listen addresses count as loopback (daemon/listeners.cpp): plain
// NBD and plain gRPC are allowed there only. Decided on what the name
// resolves to, never on how it is spelled (issue 33, item 2: a name that
// starts with "127." was taken for loopback).
#include <gtest/gtest.h>

#include "daemon/listeners.h"

using gpuraid::daemon::is_loopback;

TEST(Loopback, AddressesAndNamesByWhatTheyResolveTo) {
  EXPECT_TRUE(is_loopback("127.0.0.1"));
  EXPECT_TRUE(is_loopback("127.1.2.3"));
  EXPECT_TRUE(is_loopback("::1"));
  EXPECT_TRUE(is_loopback("[::1]"));
  EXPECT_TRUE(is_loopback("localhost"));  // /etc/hosts: 127.0.0.1 (and ::1)
  EXPECT_FALSE(is_loopback("0.0.0.0"));
  EXPECT_FALSE(is_loopback("::"));
  EXPECT_FALSE(is_loopback("10.1.2.3"));
  EXPECT_FALSE(is_loopback("::ffff:10.1.2.3"));
  EXPECT_TRUE(is_loopback("::ffff:127.0.0.1"));
  EXPECT_FALSE(is_loopback(""));
  // Spelled like loopback, resolving to nothing (or elsewhere): not loopback.
  EXPECT_FALSE(is_loopback("127.0.0.1.example.invalid"));
  EXPECT_FALSE(is_loopback("127.example.invalid"));
  EXPECT_FALSE(is_loopback("localhost.example.invalid"));
}
