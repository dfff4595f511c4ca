// The table's rows for the semaphore's, the writer's and the reentrant lock's scripts
// (src/scripts/semaphore_*.lua, write_acquire.lua, reentrant_*.lua). fake_store does not model them
// (no sorted sets or lists): these rows run on a real redis-server only. ttl 60000 ms, fence key
// ttl 90000 ms.
#include "support/script_table.hpp"

#include "sansio/set_scripts.hpp"

namespace locksmith::test {

namespace {

using namespace locksmith::detail;

std::vector<script_row> semaphore_rows()
{
   std::vector<std::string> const keys{"set", "fence"};
   auto args = [](char const* permits) {
      return std::vector<std::string>{"tok", "60000", "90000", permits};
   };
   return {
      {.what = "an empty set: a permit",
       .code = set_acquire_script,
       .keys = keys,
       .args = args("2"),
       .reply = "[1 @us]",
       .after = {zset("set", {"tok", "@ms+60000"}, 60000), str("fence", "@us", 90000)}},
      {.what = "one permit left: taken, and the set lives as long as its longest member",
       .code = set_acquire_script,
       .before = {zset("set", {"a", "@ms+30000"}, 30000), str("fence", "5000000000000000")},
       .keys = keys,
       .args = args("2"),
       .reply = "[1 5000000000000001]",
       .after = {zset("set", {"a", "@ms+30000", "tok", "@ms+60000"}, 60000),
                 str("fence", "5000000000000001", 90000)}},
      {.what = "full: the time until the first member expires",
       .code = set_acquire_script,
       .before = {zset("set", {"a", "@ms+30000", "b", "@ms+40000"}, 40000)},
       .keys = keys,
       .args = args("2"),
       .reply = "[0 ~30000]",
       .after = {zset("set", {"a", "@ms+30000", "b", "@ms+40000"}, 40000)}},
      {.what = "an expired member's permit comes back",
       .code = set_acquire_script,
       .before = {zset("set", {"dead", "@ms-1000"})},
       .keys = keys,
       .args = args("1"),
       .reply = "[1 @us]",
       .after = {zset("set", {"tok", "@ms+60000"}, 60000), str("fence", "@us", 90000)}},
      {.what = "a reader barred by the writer's key: its PTTL",
       .code = set_acquire_script,
       .before = {str("writer", "w", 20000)},
       .keys = {"set", "fence", "writer", "waiting"},
       .args = args("1000"),
       .reply = "[0 ~20000]",
       .after = {str("writer", "w", 20000)}},
      {.what = "a reader barred by a waiting writer's marker",
       .code = set_acquire_script,
       .before = {str("waiting", "1", 20000)},
       .keys = {"set", "fence", "writer", "waiting"},
       .args = args("1000"),
       .reply = "[0 ~20000]",
       .after = {str("waiting", "1", 20000)}},
      {.what = "extend: a live member's expiry, the fence key and the set renewed",
       .code = set_extend_script,
       .before = {zset("set", {"tok", "@ms+30000"}, 30000), str("fence", "7", 30000)},
       .keys = keys,
       .args = {"tok", "60000", "90000"},
       .reply = "1",
       .after = {zset("set", {"tok", "@ms+60000"}, 60000), str("fence", "7", 90000)}},
      {.what = "extend: no member",
       .code = set_extend_script,
       .before = {zset("set", {"a", "@ms+30000"}, 30000)},
       .keys = keys,
       .args = {"tok", "60000", "90000"},
       .reply = "-1",
       .after = {zset("set", {"a", "@ms+30000"}, 30000)}},
      {.what = "extend: an expired member is removed",
       .code = set_extend_script,
       .before = {zset("set", {"tok", "@ms-1000"})},
       .keys = keys,
       .args = {"tok", "60000", "90000"},
       .reply = "-1",
       .after = {}},
      {.what = "release: a member, removed and published",
       .code = set_release_script,
       .before = {zset("set", {"a", "@ms+30000", "tok", "@ms+30000"}, 30000)},
       .keys = {"set"},
       .args = {"tok", table_channel},
       .reply = "1",
       .after = {zset("set", {"a", "@ms+30000"}, 30000)},
       .published = {"tok"}},
      {.what = "release: no member",
       .code = set_release_script,
       .keys = {"set"},
       .args = {"tok", table_channel},
       .reply = "-1",
       .after = {}},
      {.what = "release: an expired member counts as gone, but is removed and published",
       .code = set_release_script,
       .before = {zset("set", {"tok", "@ms-1000"})},
       .keys = {"set"},
       .args = {"tok", table_channel},
       .reply = "-1",
       .after = {},
       .published = {"tok"}},
   };
}

std::vector<script_row> writer_rows()
{
   std::vector<std::string> const keys{"lock", "fence", "readers", "waiting"};
   // marker ttl 20000 ms, longest pause 15000 ms
   std::vector<std::string> const args{"tok", "60000", "90000", "20000", "15000"};
   return {
      {.what = "no reader, free key: taken, its own marker cleared",
       .code = write_acquire_script,
       .before = {str("waiting", "1", 20000)},
       .keys = keys,
       .args = args,
       .reply = "[1 @us]",
       .after = {str("lock", "tok", 60000), str("fence", "@us", 90000)}},
      {.what = "a reader: the marker set, the time until the reader expires",
       .code = write_acquire_script,
       .before = {zset("readers", {"r", "@ms+10000"}, 10000)},
       .keys = keys,
       .args = args,
       .reply = "[0 ~10000]",
       .after = {zset("readers", {"r", "@ms+10000"}, 10000), str("waiting", "1", 20000)}},
      {.what = "a long reader: at most the longest pause",
       .code = write_acquire_script,
       .before = {zset("readers", {"r", "@ms+50000"}, 50000)},
       .keys = keys,
       .args = args,
       .reply = "[0 15000]",
       .after = {zset("readers", {"r", "@ms+50000"}, 50000), str("waiting", "1", 20000)}},
      {.what = "only expired readers: taken",
       .code = write_acquire_script,
       .before = {zset("readers", {"r", "@ms-1000"})},
       .keys = keys,
       .args = args,
       .reply = "[1 @us]",
       .after = {str("lock", "tok", 60000), str("fence", "@us", 90000)}},
      {.what = "another writer: its PTTL, the marker set",
       .code = write_acquire_script,
       .before = {str("lock", "other", 10000)},
       .keys = keys,
       .args = args,
       .reply = "[0 ~10000]",
       .after = {str("lock", "other", 10000), str("waiting", "1", 20000)}},
      {.what = "a semaphore's set at the lock key: WRONGTYPE, not waited for",
       .code = write_acquire_script,
       .before = {zset("lock", {"m", "@ms+30000"})},
       .keys = keys,
       .args = args,
       .reply = "!WRONGTYPE",
       .after = {zset("lock", {"m", "@ms+30000"})}},
   };
}

std::vector<script_row> reentrant_rows()
{
   std::vector<std::string> const keys{"lock", "fence", "holds"};
   auto args = [](char const* hold) {
      return std::vector<std::string>{hold, "60000", "90000", "owner"};
   };
   return {
      {.what = "free: the owner's key and the first hold",
       .code = reentrant_acquire_script,
       .keys = keys,
       .args = args("h1"),
       .reply = "[1 @us]",
       .after = {str("lock", "owner", 60000), zset("holds", {"h1", "@ms+60000"}, 60000),
                 str("fence", "@us", 90000)}},
      {.what = "the owner again: a second hold, both keys renewed, an expired hold dropped",
       .code = reentrant_acquire_script,
       .before = {str("lock", "owner", 30000),
                  zset("holds", {"dead", "@ms-1000", "h1", "@ms+30000"}, 30000)},
       .keys = keys,
       .args = args("h2"),
       .reply = "[1 @us]",
       .after = {str("lock", "owner", 60000),
                 zset("holds", {"h1", "@ms+30000", "h2", "@ms+60000"}, 60000),
                 str("fence", "@us", 90000)}},
      {.what = "the owner with a longer hold: the keys are not shortened",
       .code = reentrant_acquire_script,
       .before = {str("lock", "owner", 80000), zset("holds", {"h1", "@ms+80000"}, 80000)},
       .keys = keys,
       .args = args("h2"),
       .reply = "[1 @us]",
       .after = {str("lock", "owner", 80000),
                 zset("holds", {"h2", "@ms+60000", "h1", "@ms+80000"}, 80000),
                 str("fence", "@us", 90000)}},
      {.what = "another owner: its PTTL",
       .code = reentrant_acquire_script,
       .before = {str("lock", "other", 60000)},
       .keys = keys,
       .args = args("h1"),
       .reply = "[0 ~60000]",
       .after = {str("lock", "other", 60000)}},
      {.what = "extend: a live hold of the owner",
       .code = reentrant_extend_script,
       .before = {str("lock", "owner", 30000), zset("holds", {"h1", "@ms+30000"}, 30000),
                  str("fence", "7", 30000)},
       .keys = keys,
       .args = args("h1"),
       .reply = "1",
       .after = {str("lock", "owner", 60000), zset("holds", {"h1", "@ms+60000"}, 60000),
                 str("fence", "7", 90000)}},
      {.what = "extend: an expired hold",
       .code = reentrant_extend_script,
       .before = {str("lock", "owner", 30000), zset("holds", {"h1", "@ms-1000"})},
       .keys = keys,
       .args = args("h1"),
       .reply = "-1",
       .after = {str("lock", "owner", 30000)}},
      {.what = "extend: the key is another owner's",
       .code = reentrant_extend_script,
       .before = {str("lock", "other", 30000), zset("holds", {"h1", "@ms+30000"}, 30000)},
       .keys = keys,
       .args = args("h1"),
       .reply = "-1",
       .after = {str("lock", "other", 30000), zset("holds", {"h1", "@ms+30000"}, 30000)}},
   };
}

std::vector<script_row> reentrant_release_rows()
{
   std::vector<std::string> const keys{"lock", "holds"};
   auto args = [](char const* hold) {
      return std::vector<std::string>{hold, table_channel, "owner"};
   };
   return {
      {.what = "the last hold: both keys deleted, published",
       .code = reentrant_release_script,
       .before = {str("lock", "owner", 30000), zset("holds", {"h1", "@ms+30000"}, 30000)},
       .keys = keys,
       .args = args("h1"),
       .reply = "1",
       .after = {},
       .published = {"h1"}},
      {.what = "one of two holds: the lock stays",
       .code = reentrant_release_script,
       .before = {str("lock", "owner", 30000),
                  zset("holds", {"h1", "@ms+30000", "h2", "@ms+30000"}, 30000)},
       .keys = keys,
       .args = args("h1"),
       .reply = "1",
       .after = {str("lock", "owner", 30000), zset("holds", {"h2", "@ms+30000"}, 30000)}},
      {.what = "a hold that is gone",
       .code = reentrant_release_script,
       .before = {str("lock", "owner", 30000), zset("holds", {"h2", "@ms+30000"}, 30000)},
       .keys = keys,
       .args = args("h1"),
       .reply = "-1",
       .after = {str("lock", "owner", 30000), zset("holds", {"h2", "@ms+30000"}, 30000)}},
      {.what = "the last hold, with the key another owner's: the key stays, nothing published",
       .code = reentrant_release_script,
       .before = {str("lock", "other", 30000), zset("holds", {"h1", "@ms+30000"}, 30000)},
       .keys = keys,
       .args = args("h1"),
       .reply = "1",
       .after = {str("lock", "other", 30000)}},
   };
}

}  // namespace

std::vector<script_row> script_rows_of_the_kinds()
{
   return rows_of({semaphore_rows, writer_rows, reentrant_rows, reentrant_release_rows},
                  not_modelled);
}

}  // namespace locksmith::test
