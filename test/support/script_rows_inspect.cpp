// The table's rows for the inspect script (src/scripts/inspect.lua): what it reads of each kind's
// keys, and that it writes nothing (each row's keys are the same after as before, even the
// expired members and waiters that it skips). fake_store does not model it: these rows run on a
// real redis-server only.
#include "support/script_table.hpp"

#include "sansio/inspection.hpp"

namespace locksmith::test {

namespace {

using namespace locksmith::detail;

std::vector<std::string> const keys{"lock",  "fence", "readers",  "waiting",
                                    "holds", "queue", "deadlines"};

script_row row(char const* what, std::vector<key_state> state, char const* reply)
{
   return {.what = what,
           .code = inspect_script,
           .before = state,
           .keys = keys,
           .reply = reply,
           .after = state};
}

std::vector<script_row> inspect_rows()
{
   return {
      row("nothing: free", {}, "['none' -2 '' '' -2 0 0 0 0]"),
      row("a lock and its fence",
          {str("lock", "tok", 60000), str("fence", "5000000000000001", 90000)},
          "['string' ~60000 'tok' '5000000000000001' -2 0 0 0 0]"),
      row("a semaphore: its live permits, an expired one skipped and left",
          {zset("lock", {"dead", "@ms-1000", "a", "@ms+30000"}, 30000)},
          "['zset' ~30000 '' '' -2 1 'a' ~30000 0 0 0]"),
      row("readers, and a writer waiting",
          {zset("readers", {"r", "@ms+20000"}, 20000), str("waiting", "1", 1000)},
          "['none' -2 '' '' ~1000 0 1 'r' ~20000 0 0]"),
      row("a reentrant lock's owner and its holds",
          {str("lock", "owner", 30000), zset("holds", {"h", "@ms+30000"}, 30000)},
          "['string' ~30000 'owner' '' -2 0 0 1 'h' ~30000 0]"),
      row("a fair lock's queue: a waiter past its deadline skipped and left",
          {str("lock", "tok", 60000), list("queue", {"dead", "w"}, 40000),
           zset("deadlines", {"dead", "@ms-1000", "w", "@ms+40000"}, 40000)},
          "['string' ~60000 'tok' '' -2 0 0 0 1 'w' ~40000]"),
      row("a key of another type", {list("lock", {"x"})}, "['list' -1 '' '' -2 0 0 0 0]"),
   };
}

}  // namespace

std::vector<script_row> script_rows_of_inspect()
{
   return rows_of({inspect_rows}, not_modelled);
}

}  // namespace locksmith::test
