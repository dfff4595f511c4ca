// The scripts' table: rows of (state before, KEYS, ARGV) -> (reply, state after, messages
// published), for every script of src/scripts/ and its branches. The integration suite runs them
// against a real redis-server (and the sharded twins with SPUBLISH); the unit suite runs the same
// rows against fake_store, so that the C++ that stands for the Lua in the unit tests cannot drift
// from it. A row that fake_store cannot run says why (`real_only`).
//
// Values may name the server's clock, read before the state is set up (t0) and after the script
// ran (t1):
//   "@us"        a fencing token minted from the clock: within [t0, t1] in µs
//   "@ms+N"      a sorted set's score (an expiry or a deadline) N ms from now, N may be negative:
//                within [t0 + N, t1 + N] in ms; before a script, t0 + N
//   "~N"         a time left, at most N ms and more than N - slack (a PTTL, or the time until a
//                member expires)
// and anything else is the value itself. A reply is written "1", "[1 @us]", "[0 ~60000 'tok']"
// (an array; 'quoted' is a bulk string, the rest integers) or "!WRONGTYPE" (an error whose text
// holds that word).
#pragma once

#include "support/blocking_client.hpp"

#include "sansio/scripts.hpp"

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

namespace locksmith::test {

/// What a key holds.
struct key_state {
   enum class kind { string, zset, list };
   std::string key;
   kind type = kind::string;
   // string: {value}; list: its elements in order; zset: member, score, member, score... in the
   // order of the scores.
   std::vector<std::string> items;
   // ms; 0: no TTL. After a script: the PTTL must be "~ttl".
   std::int64_t ttl = 0;
};

inline key_state str(std::string key, std::string value, std::int64_t ttl = 0)
{
   return {std::move(key), key_state::kind::string, {std::move(value)}, ttl};
}

inline key_state zset(std::string key, std::vector<std::string> members_and_scores,
                      std::int64_t ttl = 0)
{
   return {std::move(key), key_state::kind::zset, std::move(members_and_scores), ttl};
}

inline key_state list(std::string key, std::vector<std::string> items, std::int64_t ttl = 0)
{
   return {std::move(key), key_state::kind::list, std::move(items), ttl};
}

/// The channel that the rows' releases publish on.
inline constexpr char const* table_channel = "ch";
/// The own channel of the process tagged "t" (waiter ids "...:t"): a row's message there is
/// written "ch:t <message>" among its published ones.
inline constexpr char const* table_waiter_channel = "ch:t";

/// How a message is written among a row's published ones.
inline std::string published_as(std::string const& channel, std::string const& message)
{
   return channel == table_channel ? message : channel + " " + message;
}

struct script_row {
   char const* what;  // the branch, for messages
   locksmith::detail::script const& (*code)();
   std::vector<key_state> before{};
   std::vector<std::string> keys{};
   std::vector<std::string> args{};
   char const* reply = "";
   std::vector<key_state> after{};
   std::vector<std::string> published{};  // the messages (published_as), in order
   char const* real_only = nullptr;       // why fake_store does not run this row
};

/// Every row: the lock's scripts (script_rows_lock.cpp), the semaphore's, the writer's and the
/// reentrant lock's (script_rows_kinds.cpp), the fair lock's (script_rows_fair.cpp) and the
/// inspection's (script_rows_inspect.cpp).
std::vector<script_row> const& script_rows();
std::vector<script_row> script_rows_of_the_lock();
std::vector<script_row> script_rows_of_the_kinds();
std::vector<script_row> script_rows_of_the_fair_lock();
std::vector<script_row> script_rows_of_inspect();

/// The rows of the parts in turn; `real_only`, when given, for each row that gives none (the
/// parts of scripts that fake_store does not model).
std::vector<script_row> rows_of(std::initializer_list<std::vector<script_row> (*)()> parts,
                                char const* real_only = nullptr);

/// Why fake_store runs no row of a script other than the lock's four.
inline constexpr char const* not_modelled = "fake_store models the lock's scripts only";

/// What a row observed: the reply, the keys afterwards (sorted by name, values as read), the
/// messages published on table_channel, and the server's clock around it.
struct observation {
   reply answer;
   std::vector<key_state> after;
   std::vector<std::string> published;
   std::int64_t t0_us = 0;
   std::int64_t t1_us = 0;
};

/// Checks an observation against its row (Boost.Test assertions, in the row's context).
void check_row(script_row const& row, observation const& seen);

/// "@ms+N" with t (ms) for the clock: what a state before a script is set up with.
std::string resolve_before(std::string const& value, std::int64_t t_ms);

}  // namespace locksmith::test
