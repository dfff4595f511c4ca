// The table's rows for the fair lock's scripts (src/scripts/fair_acquire.lua, fair_release.lua,
// fair_requeue.lua). fake_store does not model them (no lists or sorted sets): these rows run on
// a real redis-server only. ttl 60000 ms, fence key ttl 90000 ms, entry ttl 40000 ms (so a
// waiter's pause is at most 10000 ms).
#include "support/script_table.hpp"

#include "sansio/set_scripts.hpp"

namespace locksmith::test {

namespace {

using namespace locksmith::detail;

std::vector<std::string> const acquire_keys{"lock", "fence", "queue", "deadlines"};
std::vector<std::string> const acquire_args{"tok", "60000", "90000", "40000"};
std::vector<std::string> const queue_keys{"lock", "queue", "deadlines"};
std::vector<std::string> const release_args{"tok", table_channel, "to:"};

std::vector<script_row> fair_acquire_rows()
{
   return {
      {.what = "free, nobody waiting: taken",
       .code = fair_acquire_script,
       .keys = acquire_keys,
       .args = acquire_args,
       .reply = "[1 @us]",
       .after = {str("lock", "tok", 60000), str("fence", "@us", 90000)}},
      {.what = "free, first in the queue: taken, and out of the queue",
       .code = fair_acquire_script,
       .before = {list("queue", {"tok", "b"}, 30000),
                  zset("deadlines", {"tok", "@ms+30000", "b", "@ms+30000"}, 30000)},
       .keys = acquire_keys,
       .args = acquire_args,
       .reply = "[1 @us]",
       .after = {str("lock", "tok", 60000), str("fence", "@us", 90000), list("queue", {"b"}, 30000),
                 zset("deadlines", {"b", "@ms+30000"}, 30000)}},
      {.what = "free, another first: queued at the end, only waiters in the way (2)",
       .code = fair_acquire_script,
       .before = {list("queue", {"a"}, 30000), zset("deadlines", {"a", "@ms+30000"}, 30000)},
       .keys = acquire_keys,
       .args = acquire_args,
       .reply = "[2 10000 '']",
       .after = {list("queue", {"a", "tok"}, 40000),
                 zset("deadlines", {"a", "@ms+30000", "tok", "@ms+40000"}, 40000)}},
      {.what = "held: queued, the pause at most a quarter of the entry, the holder named",
       .code = fair_acquire_script,
       .before = {str("lock", "other", 60000)},
       .keys = acquire_keys,
       .args = acquire_args,
       .reply = "[0 10000 'other']",
       .after = {str("lock", "other", 60000), list("queue", {"tok"}, 40000),
                 zset("deadlines", {"tok", "@ms+40000"}, 40000)}},
      {.what = "held, close to its end: the holder's PTTL",
       .code = fair_acquire_script,
       .before = {str("lock", "other", 5000)},
       .keys = acquire_keys,
       .args = acquire_args,
       .reply = "[0 ~5000 'other']",
       .after = {str("lock", "other", 5000), list("queue", {"tok"}, 40000),
                 zset("deadlines", {"tok", "@ms+40000"}, 40000)}},
      {.what = "handed to us by a release: taken",
       .code = fair_acquire_script,
       .before = {str("lock", "tok", 3000), list("queue", {"tok"}, 30000),
                  zset("deadlines", {"tok", "@ms+30000"}, 30000)},
       .keys = acquire_keys,
       .args = acquire_args,
       .reply = "[1 @us]",
       .after = {str("lock", "tok", 60000), str("fence", "@us", 90000)}},
      {.what = "handed to a waiter that has not taken it yet: only waiters in the way",
       .code = fair_acquire_script,
       .before = {str("lock", "a", 30000), list("queue", {"a"}, 30000),
                  zset("deadlines", {"a", "@ms+30000"}, 30000)},
       .keys = acquire_keys,
       .args = acquire_args,
       .reply = "[2 10000 'a']",
       .after = {str("lock", "a", 30000), list("queue", {"a", "tok"}, 40000),
                 zset("deadlines", {"a", "@ms+30000", "tok", "@ms+40000"}, 40000)}},
      {.what = "a dead waiter first in line is dropped: taken",
       .code = fair_acquire_script,
       .before = {list("queue", {"dead"}, 30000), zset("deadlines", {"dead", "@ms-1000"}, 30000)},
       .keys = acquire_keys,
       .args = acquire_args,
       .reply = "[1 @us]",
       .after = {str("lock", "tok", 60000), str("fence", "@us", 90000)}},
      {.what = "queued already: keeps its place, its deadline renewed",
       .code = fair_acquire_script,
       .before = {str("lock", "other", 60000), list("queue", {"tok", "b"}, 30000),
                  zset("deadlines", {"tok", "@ms+30000", "b", "@ms+35000"}, 30000)},
       .keys = acquire_keys,
       .args = acquire_args,
       .reply = "[0 10000 'other']",
       .after = {str("lock", "other", 60000), list("queue", {"tok", "b"}, 40000),
                 zset("deadlines", {"b", "@ms+35000", "tok", "@ms+40000"}, 40000)}},
   };
}

std::vector<script_row> fair_release_rows()
{
   return {
      {.what = "holder, nobody waiting: deleted, the token published",
       .code = fair_release_script,
       .before = {str("lock", "tok", 60000)},
       .keys = queue_keys,
       .args = release_args,
       .reply = "1",
       .after = {},
       .published = {"tok"}},
      {.what = "holder: handed to the head for its entry's life, which alone is woken",
       .code = fair_release_script,
       .before = {str("lock", "tok", 60000), list("queue", {"a", "b"}, 30000),
                  zset("deadlines", {"a", "@ms+20000", "b", "@ms+30000"}, 30000)},
       .keys = queue_keys,
       .args = release_args,
       .reply = "1",
       .after = {str("lock", "a", 20000), list("queue", {"a", "b"}, 30000),
                 zset("deadlines", {"a", "@ms+20000", "b", "@ms+30000"}, 30000)},
       .published = {"to:a"}},
      {.what = "a waiter that gives up: out of the queue, the holder untouched",
       .code = fair_release_script,
       .before = {str("lock", "other", 60000), list("queue", {"tok", "b"}, 30000),
                  zset("deadlines", {"tok", "@ms+30000", "b", "@ms+30000"}, 30000)},
       .keys = queue_keys,
       .args = release_args,
       .reply = "-1",
       .after = {str("lock", "other", 60000), list("queue", {"b"}, 30000),
                 zset("deadlines", {"b", "@ms+30000"}, 30000)}},
      {.what = "a waiter first in line that gives up: a free key goes to the next",
       .code = fair_release_script,
       .before = {list("queue", {"tok", "b"}, 30000),
                  zset("deadlines", {"tok", "@ms+30000", "b", "@ms+20000"}, 30000)},
       .keys = queue_keys,
       .args = release_args,
       .reply = "-1",
       .after = {str("lock", "b", 20000), list("queue", {"b"}, 30000),
                 zset("deadlines", {"b", "@ms+20000"}, 30000)},
       .published = {"to:b"}},
      {.what = "neither holder nor waiter, nobody waiting: nothing",
       .code = fair_release_script,
       .keys = queue_keys,
       .args = release_args,
       .reply = "-1",
       .after = {}},
      {.what = "a holder whose key was handed on: -1, nothing published",
       .code = fair_release_script,
       .before = {str("lock", "a", 30000)},
       .keys = queue_keys,
       .args = release_args,
       .reply = "-1",
       .after = {str("lock", "a", 30000)}},
   };
}

std::vector<script_row> fair_requeue_rows()
{
   std::vector<std::string> const args{"tok", "40000"};
   return {
      {.what = "holding the key: deleted, and back at the head of the queue",
       .code = fair_requeue_script,
       .before = {str("lock", "tok", 60000), list("queue", {"a", "tok"}, 30000),
                  zset("deadlines", {"a", "@ms+30000", "tok", "@ms+30000"}, 30000)},
       .keys = queue_keys,
       .args = args,
       .reply = "1",
       .after = {list("queue", {"tok", "a"}, 40000),
                 zset("deadlines", {"a", "@ms+30000", "tok", "@ms+40000"}, 40000)}},
      {.what = "holding the key, not queued: at the head",
       .code = fair_requeue_script,
       .before = {str("lock", "tok", 60000), list("queue", {"a"}, 30000),
                  zset("deadlines", {"a", "@ms+30000"}, 30000)},
       .keys = queue_keys,
       .args = args,
       .reply = "1",
       .after = {list("queue", {"tok", "a"}, 40000),
                 zset("deadlines", {"a", "@ms+30000", "tok", "@ms+40000"}, 40000)}},
      {.what = "not holding, not queued: at the end",
       .code = fair_requeue_script,
       .before = {str("lock", "other", 60000), list("queue", {"a"}, 30000),
                  zset("deadlines", {"a", "@ms+30000"}, 30000)},
       .keys = queue_keys,
       .args = args,
       .reply = "1",
       .after = {str("lock", "other", 60000), list("queue", {"a", "tok"}, 40000),
                 zset("deadlines", {"a", "@ms+30000", "tok", "@ms+40000"}, 40000)}},
      {.what = "not holding, queued: keeps its place, its deadline renewed",
       .code = fair_requeue_script,
       .before = {list("queue", {"tok", "a"}, 30000),
                  zset("deadlines", {"tok", "@ms+30000", "a", "@ms+35000"}, 30000)},
       .keys = queue_keys,
       .args = args,
       .reply = "1",
       .after = {list("queue", {"tok", "a"}, 40000),
                 zset("deadlines", {"a", "@ms+35000", "tok", "@ms+40000"}, 40000)}},
   };
}

}  // namespace

std::vector<script_row> script_rows_of_the_fair_lock()
{
   return rows_of({fair_acquire_rows, fair_release_rows, fair_requeue_rows}, not_modelled);
}

}  // namespace locksmith::test
