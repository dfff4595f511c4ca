// The scripts' table (support/script_table.hpp) run against a real redis-server: every row of
// every script of src/scripts/, by EVALSHA of the SHA-1 that the build computed, and again with
// the sharded twin of each script that publishes (SPUBLISH, heard by SSUBSCRIBE). The unit suite
// runs the same rows against fake_store.
#include "support/integration.hpp"
#include "support/script_table.hpp"
#include "support/server_checks.hpp"

#include "sansio/set_scripts.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace test_script_table {

namespace {

using namespace locksmith::test;

// Marks the end of a row's messages: published after the script, so that reading up to it reads
// every message of the script and waits for nothing.
constexpr char const* end_of_row = "end of row";

std::int64_t server_time_us(blocking_client& c)
{
   auto const t = c.command({"TIME"});
   BOOST_TEST_REQUIRE(t.elements.size() == 2u);
   return std::stoll(t.elements[0].str) * 1000000 + std::stoll(t.elements[1].str);
}

void set_up(blocking_client& c, key_state const& k, std::int64_t t_ms)
{
   std::vector<std::string> cmd;
   switch (k.type) {
   case key_state::kind::string:
      cmd = {"SET", k.key, locksmith::test::resolve_before(k.items.at(0), t_ms)};
      break;
   case key_state::kind::zset:
      cmd = {"ZADD", k.key};
      for (std::size_t i = 0; i + 1 < k.items.size(); i += 2) {
         cmd.push_back(locksmith::test::resolve_before(k.items[i + 1], t_ms));
         cmd.push_back(k.items[i]);
      }
      break;
   case key_state::kind::list:
      cmd = {"RPUSH", k.key};
      cmd.insert(cmd.end(), k.items.begin(), k.items.end());
      break;
   }
   BOOST_TEST_REQUIRE((c.command(cmd).type != reply::kind::error));
   if (k.ttl > 0)
      BOOST_TEST_REQUIRE(c.command({"PEXPIRE", k.key, std::to_string(k.ttl)}).integer == 1);
}

key_state read_key(blocking_client& c, std::string const& key)
{
   key_state out;
   out.key = key;
   auto const type = c.command({"TYPE", key}).str;
   reply items;
   if (type == "string") {
      out.items = {c.command({"GET", key}).str};
   } else if (type == "zset") {
      out.type = key_state::kind::zset;
      items = c.command({"ZRANGE", key, "0", "-1", "WITHSCORES"});
   } else {
      BOOST_TEST_REQUIRE(type == "list");
      out.type = key_state::kind::list;
      items = c.command({"LRANGE", key, "0", "-1"});
   }
   for (auto const& e : items.elements)
      out.items.push_back(e.str);
   out.ttl = c.command({"PTTL", key}).integer;
   return out;
}

// Runs one row on an emptied server with `code` (the row's script or its sharded twin).
observation run(redis_server& srv, script_row const& row, locksmith::detail::script const& code,
                bool sharded)
{
   auto const port = std::to_string(srv.port());
   // One deadline for all a row says on each connection: ample on a loaded machine.
   blocking_client c{"127.0.0.1", port, 10s};
   blocking_client listener{"127.0.0.1", port, 10s};
   BOOST_TEST_REQUIRE(c.command({"FLUSHALL"}).str == "OK");
   listener.command({sharded ? "SSUBSCRIBE" : "SUBSCRIBE", locksmith::test::table_channel});
   listener.command({sharded ? "SSUBSCRIBE" : "SUBSCRIBE", locksmith::test::table_waiter_channel});
   observation seen;
   seen.t0_us = server_time_us(c);
   for (auto const& k : row.before)
      set_up(c, k, seen.t0_us / 1000);
   std::vector<std::string> cmd{"EVALSHA", code.sha1, std::to_string(row.keys.size())};
   cmd.insert(cmd.end(), row.keys.begin(), row.keys.end());
   cmd.insert(cmd.end(), row.args.begin(), row.args.end());
   seen.answer = c.command(cmd);
   seen.t1_us = server_time_us(c);
   c.command({sharded ? "SPUBLISH" : "PUBLISH", locksmith::test::table_channel, end_of_row});
   for (;;) {
      auto const m = listener.receive();
      BOOST_TEST_REQUIRE(m.elements.size() == 3u);
      if (m.elements[2].str == end_of_row)
         break;
      seen.published.push_back(locksmith::test::published_as(m.elements[1].str, m.elements[2].str));
   }
   auto keys = c.command({"KEYS", "*"}).elements;
   std::ranges::sort(keys, {}, &reply::str);
   for (auto const& k : keys)
      seen.after.push_back(read_key(c, k.str));
   return seen;
}

// Loads every script and twin by its text, and checks that Redis names it by the SHA-1 that the
// build computed.
void load_every_script(redis_server& srv)
{
   auto all = locksmith::detail::every_script();
   for (auto const* s : locksmith::detail::every_sharded_script())
      all.push_back(s);
   for (auto const* s : all)
      BOOST_TEST(srv.text({"SCRIPT", "LOAD", s->text}) == s->sha1, s->name);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(script_table, *needs_redis_server())

BOOST_AUTO_TEST_CASE(redis_answers_every_row)
{
   redis_server srv;
   load_every_script(srv);
   for (auto const& row : locksmith::test::script_rows())
      locksmith::test::check_row(row, run(srv, row, row.code(), false));
}

// The twins answer as their scripts do, and publish with SPUBLISH (Redis 7: skipped on older
// servers, where no cluster runs them: the client refuses a Redis 6 cluster).
BOOST_AUTO_TEST_CASE(sharded_twins_answer_every_row,
                     *locksmith::test::needs_server_version(7, 0, "sharded pub/sub: SPUBLISH"))
{
   redis_server srv;
   load_every_script(srv);
   std::size_t ran = 0;
   for (auto const& row : locksmith::test::script_rows()) {
      auto const& twin = locksmith::detail::sharded_twin(row.code());
      if (&twin == &row.code())
         continue;
      BOOST_TEST_CONTEXT("sharded twin")
      {
         locksmith::test::check_row(row, run(srv, row, twin, true));
      }
      ++ran;
   }
   BOOST_TEST(ran >= 4u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_script_table
