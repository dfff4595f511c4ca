// The table's rows for the lock's scripts (src/scripts/acquire.lua, quorum_acquire.lua,
// release.lua, extend.lua), which fake_store runs too. Lock ttl 60000 ms, fence key ttl 90000 ms.
#include "support/script_table.hpp"

#include "sansio/scripts.hpp"

namespace locksmith::test {

namespace {

using namespace locksmith::detail;

// fake_store keeps strings only: a key of another type is what it cannot hold.
constexpr char const* only_strings = "fake_store holds strings only";

std::vector<script_row> acquire_rows()
{
   return {
      {.what = "free key, new fence key: the fence starts from the server's clock",
       .code = acquire_script,
       .keys = {"lock", "fence"},
       .args = {"tok", "60000", "90000"},
       .reply = "[1 @us]",
       .after = {str("lock", "tok", 60000), str("fence", "@us", 90000)}},
      {.what = "free key, live fence key: the counter goes on",
       .code = acquire_script,
       .before = {str("fence", "41")},
       .keys = {"lock", "fence"},
       .args = {"tok", "60000", "90000"},
       .reply = "[1 42]",
       .after = {str("lock", "tok", 60000), str("fence", "42", 90000)}},
      {.what = "taken: the holder's PTTL",
       .code = acquire_script,
       .before = {str("lock", "other", 60000)},
       .keys = {"lock", "fence"},
       .args = {"tok", "60000", "90000"},
       .reply = "[0 ~60000]",
       .after = {str("lock", "other", 60000)}},
      {.what = "taken by a key without TTL: -1",
       .code = acquire_script,
       .before = {str("lock", "other")},
       .keys = {"lock", "fence"},
       .args = {"tok", "60000", "90000"},
       .reply = "[0 -1]",
       .after = {str("lock", "other")}},
      {.what = "handed over in this process: taken with a new TTL",
       .code = acquire_script,
       .before = {str("lock", "old", 30000), str("fence", "41", 30000)},
       .keys = {"lock", "fence"},
       .args = {"tok", "60000", "90000", "old"},
       .reply = "[1 42]",
       .after = {str("lock", "tok", 60000), str("fence", "42", 90000)}},
      {.what = "handed over, but another token holds the key",
       .code = acquire_script,
       .before = {str("lock", "other", 60000)},
       .keys = {"lock", "fence"},
       .args = {"tok", "60000", "90000", "old"},
       .reply = "[0 ~60000]",
       .after = {str("lock", "other", 60000)}},
      {.what = "a key of another type: WRONGTYPE, not held forever",
       .code = acquire_script,
       .before = {zset("lock", {"m", "1"})},
       .keys = {"lock", "fence"},
       .args = {"tok", "60000", "90000"},
       .reply = "!WRONGTYPE",
       .after = {zset("lock", {"m", "1"})},
       .real_only = only_strings},
   };
}

std::vector<script_row> quorum_acquire_rows()
{
   return {
      {.what = "free key, new fence key: the server's clock",
       .code = quorum_acquire_script,
       .keys = {"lock", "fence"},
       .args = {"tok", "60000", "90000"},
       .reply = "[1 @us]",
       .after = {str("lock", "tok", 60000), str("fence", "@us", 90000)}},
      {.what = "a fence behind the clock: the clock wins",
       .code = quorum_acquire_script,
       .before = {str("fence", "41", 30000)},
       .keys = {"lock", "fence"},
       .args = {"tok", "60000", "90000"},
       .reply = "[1 @us]",
       .after = {str("lock", "tok", 60000), str("fence", "@us", 90000)}},
      {.what = "a fence ahead of the clock: last + 1",
       .code = quorum_acquire_script,
       .before = {str("fence", "5000000000000000")},
       .keys = {"lock", "fence"},
       .args = {"tok", "60000", "90000"},
       .reply = "[1 5000000000000001]",
       .after = {str("lock", "tok", 60000), str("fence", "5000000000000001", 90000)}},
      {.what = "taken: the holder's PTTL",
       .code = quorum_acquire_script,
       .before = {str("lock", "other", 60000)},
       .keys = {"lock", "fence"},
       .args = {"tok", "60000", "90000"},
       .reply = "[0 ~60000]",
       .after = {str("lock", "other", 60000)}},
      {.what = "handed over in this process",
       .code = quorum_acquire_script,
       .before = {str("lock", "old", 30000)},
       .keys = {"lock", "fence"},
       .args = {"tok", "60000", "90000", "old"},
       .reply = "[1 @us]",
       .after = {str("lock", "tok", 60000), str("fence", "@us", 90000)}},
      {.what = "a key of another type: WRONGTYPE",
       .code = quorum_acquire_script,
       .before = {list("lock", {"x"})},
       .keys = {"lock", "fence"},
       .args = {"tok", "60000", "90000"},
       .reply = "!WRONGTYPE",
       .after = {list("lock", {"x"})},
       .real_only = only_strings},
   };
}

std::vector<script_row> release_rows()
{
   return {
      {.what = "ours: deleted, the token published",
       .code = release_script,
       .before = {str("lock", "tok", 60000), str("fence", "42", 90000)},
       .keys = {"lock"},
       .args = {"tok", table_channel},
       .reply = "1",
       .after = {str("fence", "42", 90000)},
       .published = {"tok"}},
      {.what = "another token's: 0, untouched",
       .code = release_script,
       .before = {str("lock", "other", 60000)},
       .keys = {"lock"},
       .args = {"tok", table_channel},
       .reply = "0",
       .after = {str("lock", "other", 60000)}},
      {.what = "expired (no key): -1",
       .code = release_script,
       .keys = {"lock"},
       .args = {"tok", table_channel},
       .reply = "-1",
       .after = {}},
      {.what = "a key of another type: WRONGTYPE",
       .code = release_script,
       .before = {zset("lock", {"tok", "1"})},
       .keys = {"lock"},
       .args = {"tok", table_channel},
       .reply = "!WRONGTYPE",
       .after = {zset("lock", {"tok", "1"})},
       .real_only = only_strings},
   };
}

std::vector<script_row> extend_rows()
{
   return {
      {.what = "a batch: ours (lock and fence renewed), another's, expired",
       .code = extend_script,
       .before = {str("a", "tok", 30000), str("a:f", "7", 30000), str("b", "other", 30000)},
       .keys = {"a", "a:f", "b", "b:f", "c", "c:f"},
       .args = {"tok", "60000", "90000", "tok", "60000", "90000", "tok", "60000", "90000"},
       .reply = "[1 0 -1]",
       .after = {str("a", "tok", 60000), str("a:f", "7", 90000), str("b", "other", 30000)}},
      {.what = "ours without a fence key: none is made",
       .code = extend_script,
       .before = {str("a", "tok", 30000)},
       .keys = {"a", "a:f"},
       .args = {"tok", "60000", "90000"},
       .reply = "[1]",
       .after = {str("a", "tok", 60000)}},
      {.what = "no lease: an empty array", .code = extend_script, .reply = "[]", .after = {}},
      {.what = "a key of another type is another owner's, and fails no other lease",
       .code = extend_script,
       .before = {zset("a", {"m", "1"}), str("b", "tok", 30000)},
       .keys = {"a", "a:f", "b", "b:f"},
       .args = {"tok", "60000", "90000", "tok", "60000", "90000"},
       .reply = "[0 1]",
       .after = {zset("a", {"m", "1"}), str("b", "tok", 60000)},
       .real_only = only_strings},
   };
}

}  // namespace

std::vector<script_row> script_rows_of_the_lock()
{
   return rows_of({acquire_rows, quorum_acquire_rows, release_rows, extend_rows});
}

}  // namespace locksmith::test
