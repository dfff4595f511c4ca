// Unit tests of lock_key, fence_key and release_channel (src/sansio/keys.hpp).
#include "sansio/cluster.hpp"
#include "sansio/keys.hpp"
#include "sansio/validate.hpp"

#include "support/print.hpp"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace test_keys {

namespace {

using namespace std::string_view_literals;
using namespace std::chrono_literals;
using namespace locksmith::detail;

}  // namespace

BOOST_AUTO_TEST_SUITE(keys)

// hash_tag and hash_slot (sansio/cluster.hpp), against the Cluster specification's own examples.
BOOST_AUTO_TEST_CASE(cluster_slot_reference)
{
   BOOST_TEST(hash_slot("123456789") == (0x31C3u & 16383u));  // CRC16 0x31C3
   BOOST_TEST(hash_slot("foo") == 12182u);
   BOOST_TEST(hash_tag("{user1000}.following") == "user1000");
   BOOST_TEST(hash_tag("foo{}{bar}") == "foo{}{bar}");
   BOOST_TEST(hash_tag("foo{{bar}}zap") == "{bar");
   BOOST_TEST(hash_tag("foo{bar}{zap}") == "bar");
}

BOOST_AUTO_TEST_CASE(exact_strings)
{
   BOOST_TEST(lock_key("locksmith:", "orders/42") == "locksmith:{orders/42}");
   BOOST_TEST(fence_key("locksmith:", "orders/42") == "locksmith:{orders/42}:fence");
   BOOST_TEST(release_channel("locksmith:", "orders/42") == "locksmith:{orders/42}:released");
}

BOOST_AUTO_TEST_CASE(other_prefixes)
{
   BOOST_TEST(lock_key("", "k") == "{k}");
   BOOST_TEST(fence_key("", "k") == "{k}:fence");
   BOOST_TEST(release_channel("", "k") == "{k}:released");
   BOOST_TEST(lock_key("app:locks:", "k") == "app:locks:{k}");
}

BOOST_AUTO_TEST_CASE(all_share_the_name_as_hash_tag)
{
   for (auto const name : {"orders/42"sv, "k"sv, "a b c"sv, "nightly-report"sv}) {
      BOOST_TEST_CONTEXT("name " << name)
      {
         BOOST_TEST(hash_tag(lock_key("locksmith:", name)) == name);
         BOOST_TEST(hash_tag(fence_key("locksmith:", name)) == name);
         BOOST_TEST(hash_tag(release_channel("locksmith:", name)) == name);
      }
   }
}

BOOST_AUTO_TEST_CASE(distinct_names_give_distinct_keys)
{
   BOOST_TEST(lock_key("locksmith:", "a") != lock_key("locksmith:", "b"));
   BOOST_TEST(lock_key("locksmith:", "a") != lock_key("locksmith:", "a "));
   // A lock key never collides with another name's fence key or channel.
   BOOST_TEST(lock_key("locksmith:", "a}:fence") != fence_key("locksmith:", "a"));
   BOOST_TEST(lock_key("locksmith:", "a}:released") != release_channel("locksmith:", "a"));
}

BOOST_AUTO_TEST_CASE(names_with_braces_are_kept_verbatim)
{
   BOOST_TEST(lock_key("locksmith:", "a{b}c") == "locksmith:{a{b}c}");
   BOOST_TEST(fence_key("locksmith:", "a{b}c") == "locksmith:{a{b}c}:fence");
   BOOST_TEST(release_channel("locksmith:", "}x") == "locksmith:{}x}:released");
}

// Whatever the name, the lock key, the fence key and the channel must land in one Cluster slot:
// the acquire script touches both keys, which Redis Cluster refuses (CROSSSLOT) across slots.
// A name that begins with '}' would close the tag at once: `prefix{}x}` has an empty tag, so
// Redis would hash each whole key into different slots. Validation refuses such names.
BOOST_AUTO_TEST_CASE(names_with_braces_keep_one_slot)
{
   for (auto const name : {"}x"sv, "}"sv, "}}"sv})
      BOOST_TEST(locksmith::detail::validate_name(name) == locksmith::error::invalid_argument,
                 name);
   for (auto const name : {"a{b}c"sv, "{x}"sv, "x}"sv, "{"sv, "a}b"sv, "{}"sv, "x{}"sv}) {
      BOOST_TEST_CONTEXT("name " << name)
      {
         BOOST_TEST(!locksmith::detail::validate_name(name));
         auto const lock = lock_key("locksmith:", name);
         BOOST_TEST(hash_slot(fence_key("locksmith:", name)) == hash_slot(lock));
         BOOST_TEST(hash_slot(release_channel("locksmith:", name)) == hash_slot(lock));
      }
   }
}

BOOST_AUTO_TEST_CASE(names_with_binary_bytes)
{
   auto const name = "a\0b\xff\r\n"sv;
   BOOST_TEST_REQUIRE(name.size() == 6u);
   auto const lock = lock_key("locksmith:", name);
   BOOST_TEST(lock.size() == std::string_view{"locksmith:{}"}.size() + name.size());
   BOOST_TEST(lock == "locksmith:{a\0b\xff\r\n}"sv);
   BOOST_TEST(fence_key("locksmith:", name) == "locksmith:{a\0b\xff\r\n}:fence"sv);
   BOOST_TEST(release_channel("locksmith:", name) == "locksmith:{a\0b\xff\r\n}:released"sv);
   BOOST_TEST(hash_tag(lock) == name);
   BOOST_TEST(hash_slot(fence_key("locksmith:", name)) == hash_slot(lock));
   // The bytes after the NUL matter: they are not cut off.
   BOOST_TEST(lock_key("locksmith:", "a\0b"sv) != lock_key("locksmith:", "a\0c"sv));
}

// A waiter's id begins with when it registered, so that ids sort as those times (release.lua names
// the least live one on every node), and ends with its process's tag, after the last ':'.
BOOST_AUTO_TEST_CASE(waiter_ids_sort_by_when_they_registered_and_end_with_the_tag)
{
   using std::chrono::microseconds;
   std::chrono::system_clock::time_point const t{microseconds{1'795'820'761'821'942}};
   auto const first = waiter_id(t, "tag", "ffff");
   BOOST_TEST(first == "06614a1a96b2f6ffff:tag");
   BOOST_TEST((waiter_id(t + microseconds{1}, "tag", "0000") > first));  // later, whatever follows
   BOOST_TEST((waiter_id(t + microseconds{1}, "tag", "0000") < waiter_id(t + 16s, "a", "0000")));
   BOOST_TEST(waiter_id(t, "tag", "ffff").ends_with(":tag"));
   // A clock before 1970 sorts first, and takes no more room.
   BOOST_TEST(waiter_id(std::chrono::system_clock::time_point{-1s}, "t", "r") ==
              "00000000000000r:t");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_keys
