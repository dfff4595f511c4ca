// Keys that are unique per test, so that tests sharing a server cannot disturb each other and a
// leftover key names the test that wrote it.
#pragma once

#include "sansio/keys.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <string_view>

namespace locksmith::test {

// Returns "<suite>/<case>/<hint>/<16 random hex digits>" ("<suite>/<case>/<random>" without a
// hint). Outside a test case, e.g. in a suite fixture, "<suite>/<case>" is replaced by "test".
inline std::string unique_key(std::string_view hint = {})
{
   namespace ut = boost::unit_test;
   std::string key = "test";
   ut::test_unit_id id = ut::framework::current_test_case_id();
   // Check INV_TEST_UNIT_ID first: its bits also look like a test-case id.
   if (id != ut::INV_TEST_UNIT_ID && ut::ut_detail::test_id_2_unit_type(id) == ut::TUT_CASE) {
      const auto& test_case = ut::framework::get<ut::test_case>(id);
      const auto& suite = ut::framework::get<ut::test_suite>(test_case.p_parent_id);
      key = suite.p_name.get() + "/" + test_case.p_name.get();
   }
   if (!hint.empty())
      key.append("/").append(hint);
   thread_local std::mt19937_64 random{[] {
      std::random_device
         device;  // 32 bits per call; use two so parallel test binaries do not collide
      return (std::uint64_t{device()} << 32) | device();
   }()};
   char hex[17];
   std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(random()));
   return key.append("/").append(hex);
}

// The Redis keys and channel of the lock `name` under the default prefix, "locksmith:".
inline std::string lock_key(std::string_view name)
{
   return locksmith::detail::lock_key("locksmith:", name);
}
inline std::string fence_key(std::string_view name)
{
   return locksmith::detail::fence_key("locksmith:", name);
}
inline std::string release_channel(std::string_view name)
{
   return locksmith::detail::release_channel("locksmith:", name);
}

}  // namespace locksmith::test
