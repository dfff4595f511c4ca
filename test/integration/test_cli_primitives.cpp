// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// `locksmith exec --fair`, `--permits N`, `--shared` and `--exclusive`, run as processes against
// real redis-servers: the fair lock's order and a waiter killed at the head of its queue (on 1
// and 5 nodes), the semaphore's bound, readers beside readers, a writer after them, a plain exec
// as that writer, the usage errors, and the help text.
#include "cli.hpp"

#include "protocol/kind_calls.hpp"

#include <signal.h>

#include <algorithm>
#include <memory>

namespace test_cli_primitives {

BOOST_AUTO_TEST_SUITE(cli_primitives, *needs_redis_server())

namespace {

long long queued(redis_server const& srv, std::string const& key)
{
   return std::stoll(srv.text({"LLEN", lock_key(key) + ":queue"}));
}

// A waiter killed at the head of the queue is handed the lock, which it never takes: the next
// waiter gets it once the dead one's entry has run out (fair_entry_ttl after its last word,
// which came before the kill), not after the lock's TTL. On the nodes `servers`.
void killed_head(std::vector<redis_server*> const& servers)
{
   temp_dir holder, next;
   auto key = unique_key();
   auto exec = [&](std::vector<std::string> opts, std::vector<std::string> const& command) {
      for (std::size_t i = 1; i < servers.size(); ++i) {
         opts.push_back("--redis");
         opts.push_back(servers[i]->url());
      }
      return exec_args(*servers[0], key, opts, command);
   };
   auto queued_everywhere = [&](long long n) {
      return std::all_of(servers.begin(), servers.end(),
                         [&](redis_server* s) { return queued(*s, key) == n; });
   };
   cli_process h(exec({"--fair", "--ttl", "60s"}, hold_until(holder)), holder);
   cli_process dead(exec({"--fair", "--ttl", "60s", "--wait", "60s"}, {"true"}));
   BOOST_TEST_REQUIRE(poll_until([&] { return queued_everywhere(1); }), dead.err());
   cli_process w(exec({"--fair", "--ttl", "60s", "--wait", "60s"}, hold_until(next)));
   BOOST_TEST_REQUIRE(poll_until([&] { return queued_everywhere(2); }), w.err());
   ::kill(dead.pid(), SIGKILL);
   // The release that hands the lock to the dead waiter comes after this; the dead one's entry
   // has fair_entry_ttl left at most, since its last word came before the kill.
   auto const released = clock_type::now();
   create_file(holder.file("go"));
   BOOST_TEST(h.wait() == 0);
   auto const ran = appears_at(next.file("ready"), 20s);
   BOOST_TEST_REQUIRE(ran.has_value(), w.err());
   auto const delay = ms_between(released, *ran);
   BOOST_TEST_MESSAGE("on " << servers.size() << " node(s), the next waiter ran " << delay
                            << " ms after the release to the killed head");
   // The entry's deadline, the next waiter's next try (at most a quarter of it later) and 1.5 s
   // for a loaded machine (a release, a process start); the lock's TTL (60 s) would be far beyond.
   using locksmith::detail::fair_entry_ttl;
   BOOST_TEST(delay < (fair_entry_ttl + fair_entry_ttl / 4 + 1500ms).count());
   create_file(next.file("go"));
   BOOST_TEST(w.wait() == 0);
   for (auto* s : servers)
      BOOST_TEST(!key_exists(*s, key));
}

}  // namespace

// Three waiters that arrive one after the other run in that order once the holder exits.
BOOST_AUTO_TEST_CASE(fair_waiters_run_in_their_order_of_arrival, *utf::timeout(90))
{
   redis_server srv;
   temp_dir holder, out;
   auto key = unique_key();
   cli_process h(exec_args(srv, key, {"--fair"}, hold_until(holder)), holder);
   std::vector<std::unique_ptr<cli_process>> waiters;
   for (int i = 0; i < 3; ++i) {
      waiters.push_back(std::make_unique<cli_process>(
         exec_args(srv, key, {"--fair", "--wait", "30s"},
                   shell("echo $1 >> \"$2\"", {std::to_string(i), out.file("order")}))));
      auto const n = i + 1;
      BOOST_TEST_REQUIRE(poll_until([&] { return queued(srv, key) == n; }), waiters.back()->err());
   }
   create_file(holder.file("go"));
   BOOST_TEST(h.wait() == 0);
   for (auto& w : waiters)
      BOOST_TEST(w->wait(30s) == 0, w->err());
   BOOST_TEST(read_file(out.file("order")) == "0\n1\n2\n");
   BOOST_TEST(!key_exists(srv, key));
   BOOST_TEST(queued(srv, key) == 0);
}

BOOST_AUTO_TEST_CASE(a_killed_waiter_at_the_head_holds_the_queue_up_for_its_entry_only,
                     *utf::timeout(90))
{
   redis_server srv;
   killed_head({&srv});
}

BOOST_AUTO_TEST_CASE(a_killed_waiter_at_the_head_holds_five_nodes_up_for_its_entry_only,
                     *utf::timeout(90))
{
   std::vector<std::unique_ptr<redis_server>> servers(5);
   std::vector<redis_server*> all;
   for (auto& s : servers) {
      s = std::make_unique<redis_server>();
      all.push_back(s.get());
   }
   killed_head(all);
}

BOOST_AUTO_TEST_CASE(two_permits_run_two_commands_and_refuse_a_third, *utf::timeout(60))
{
   redis_server srv;
   temp_dir first, second;
   auto key = unique_key();
   cli_process a(exec_args(srv, key, {"--permits", "2"}, hold_until(first)));
   cli_process b(exec_args(srv, key, {"--permits", "2"}, hold_until(second)));
   BOOST_TEST_REQUIRE(poll_until([&] { return exists(first.file("ready")); }), a.err());
   BOOST_TEST_REQUIRE(poll_until([&] { return exists(second.file("ready")); }), b.err());
   BOOST_TEST(srv.text({"ZCARD", lock_key(key)}) == "2");
   cli_process third(exec_args(srv, key, {"--permits", "2", "--wait", "100ms"}, {"true"}));
   BOOST_TEST(third.wait() == 75);
   create_file(first.file("go"));
   BOOST_TEST(a.wait() == 0);
   BOOST_TEST(
      cli_process(exec_args(srv, key, {"--permits", "2", "--wait", "0ms"}, {"true"})).wait() == 0);
   create_file(second.file("go"));
   BOOST_TEST(b.wait() == 0);
   BOOST_TEST(!key_exists(srv, key));
}

BOOST_AUTO_TEST_CASE(readers_run_together_and_a_writer_after_them, *utf::timeout(60))
{
   redis_server srv;
   temp_dir first, second, writer;
   auto key = unique_key();
   cli_process a(exec_args(srv, key, {"--shared"}, hold_until(first)));
   cli_process b(exec_args(srv, key, {"--shared"}, hold_until(second)));
   BOOST_TEST_REQUIRE(poll_until([&] { return exists(first.file("ready")); }), a.err());
   BOOST_TEST_REQUIRE(poll_until([&] { return exists(second.file("ready")); }), b.err());
   BOOST_TEST(
      cli_process(exec_args(srv, key, {"--exclusive", "--wait", "100ms"}, {"true"})).wait() == 75);
   cli_process w(exec_args(srv, key, {"--exclusive", "--wait", "20s"}, hold_until(writer)));
   create_file(first.file("go"));
   create_file(second.file("go"));
   BOOST_TEST(a.wait() == 0);
   BOOST_TEST(b.wait() == 0);
   BOOST_TEST_REQUIRE(poll_until([&] { return exists(writer.file("ready")); }), w.err());
   BOOST_TEST(cli_process(exec_args(srv, key, {"--shared", "--wait", "100ms"}, {"true"})).wait() ==
              75);
   create_file(writer.file("go"));
   BOOST_TEST(w.wait() == 0);
}

// A plain exec is the writer of a read-write lock (--exclusive is its synonym): it waits while a
// reader holds the name, keeps new readers out meanwhile, and runs once the reader has left.
BOOST_AUTO_TEST_CASE(a_plain_exec_waits_for_a_reader, *utf::timeout(60))
{
   redis_server srv;
   temp_dir reader, writer;
   auto key = unique_key();
   cli_process r(exec_args(srv, key, {"--shared"}, hold_until(reader)), reader);
   cli_process w(exec_args(srv, key, {"--wait", "20s"}, hold_until(writer)));
   BOOST_TEST_REQUIRE(poll_until([&] {
                         return srv.text({"EXISTS", lock_key(key) + ":writer_waiting"}) == "1";
                      }),
                      w.err());
   BOOST_TEST(!exists(writer.file("ready")));
   BOOST_TEST(cli_process(exec_args(srv, key, {"--shared", "--wait", "100ms"}, {"true"})).wait() ==
              75);
   BOOST_TEST(!exists(writer.file("ready")));
   create_file(reader.file("go"));
   BOOST_TEST(r.wait() == 0);
   BOOST_TEST_REQUIRE(poll_until([&] { return exists(writer.file("ready")); }), w.err());
   create_file(writer.file("go"));
   BOOST_TEST(w.wait() == 0);
   BOOST_TEST(!key_exists(srv, key));
}

BOOST_AUTO_TEST_CASE(the_primitives_exclude_each_other_and_are_documented, *utf::timeout(60))
{
   redis_server srv;
   auto key = unique_key();
   for (auto const& bad : std::vector<std::vector<std::string>>{{"--permits", "2", "--shared"},
                                                                {"--shared", "--exclusive"},
                                                                {"--permits", "0"},
                                                                {"--fair", "--permits", "2"},
                                                                {"--fair", "--exclusive"}})
      BOOST_TEST(cli_process(exec_args(srv, key, bad, {"true"})).wait() == 64);
   cli_process help({"exec", "--help"});
   BOOST_TEST(help.wait() == 0);
   for (auto const* flag : {"--fair", "--permits", "--shared", "--exclusive"})
      BOOST_TEST(help.out().find(flag) != std::string::npos, flag);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_cli_primitives
