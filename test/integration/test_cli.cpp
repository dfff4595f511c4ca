// The `locksmith exec` command-line tool, run as a process against a real redis-server: exit codes,
// what the command sees, waiting for the lock, usage errors, and signals. Leases and security have
// files of their own.
#include "cli.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <sstream>

namespace test_cli {

BOOST_AUTO_TEST_SUITE(cli, *needs_redis_server())

BOOST_AUTO_TEST_CASE(exit_code_of_the_command_passes_through, *utf::timeout(60))
{
   redis_server srv;
   auto key = unique_key();
   BOOST_TEST(cli_process(exec_args(srv, key, {}, {"sh", "-c", "exit 7"})).wait() == 7);
   BOOST_TEST(cli_process(exec_args(srv, key, {}, {"true"})).wait() == 0);
   // Killed by a signal: 128 + N, as a shell reports it.
   BOOST_TEST(cli_process(exec_args(srv, key, {}, {"sh", "-c", "kill -KILL $$"})).wait() ==
              128 + SIGKILL);
   BOOST_TEST(!key_exists(srv, key));
}

BOOST_FIXTURE_TEST_CASE(command_sees_fencing_token_and_key, cli_fixture, *utf::timeout(60))
{
   const std::string script =
      "printf '%s\\n%s\\n' \"$LOCKSMITH_FENCING_TOKEN\" \"$LOCKSMITH_KEY\" > \"$1\"";
   auto write_env = [&](const std::string& file) {
      return exec_args(srv, key, {}, {"sh", "-c", script, "sh", file});
   };
   BOOST_TEST_REQUIRE(cli_process(write_env(dir.file("first"))).wait() == 0);
   BOOST_TEST_REQUIRE(cli_process(write_env(dir.file("second"))).wait() == 0);
   std::istringstream first(read_file(dir.file("first"))), second(read_file(dir.file("second")));
   unsigned long long token1 = 0, token2 = 0;
   std::string key1, key2;
   BOOST_TEST_REQUIRE(static_cast<bool>(first >> token1 >> key1));
   BOOST_TEST_REQUIRE(static_cast<bool>(second >> token2 >> key2));
   BOOST_TEST(token1 > 0u);
   BOOST_TEST(token2 > token1);  // fencing tokens grow with each acquisition
   BOOST_TEST(key1 == key);
   BOOST_TEST(key2 == key);
}

BOOST_FIXTURE_TEST_CASE(lock_is_held_while_the_command_runs_and_released_after, cli_fixture,
                        *utf::timeout(60))
{
   cli_process holder(exec_args(srv, key, {"--ttl", "30s"}, hold_until(dir)), dir);
   BOOST_TEST(key_exists(srv, key));
   auto pttl = std::stoll(srv.text({"PTTL", lock_key(key)}));
   BOOST_TEST(pttl > 0);
   BOOST_TEST(pttl <= 30000);
   create_file(dir.file("go"));
   BOOST_TEST(holder.wait() == 0);
   // Released before locksmith exits, not left to expire.
   BOOST_TEST(!key_exists(srv, key));
}

BOOST_FIXTURE_TEST_CASE(second_exec_times_out_while_the_first_holds, cli_fixture, *utf::timeout(60))
{
   cli_process holder(exec_args(srv, key, {}, hold_until(dir)), dir);
   for (auto strategy : {"spin", "subscribe"}) {
      cli_process waiter(exec_args(srv, key, {"--wait", "100ms", "--strategy", strategy},
                                   {"sh", "-c", "touch \"$1\"", "sh", dir.file("ran")}));
      auto t0 = clock_type::now();
      BOOST_TEST(waiter.wait() == 75);
      BOOST_TEST(ms_since(t0) < 5000);
      BOOST_TEST(!waiter.err().empty());
   }
   BOOST_TEST(!exists(dir.file("ran")));  // the waiters never ran their command
   create_file(dir.file("go"));
   BOOST_TEST(holder.wait() == 0);
   // Once released, the lock can be taken again.
   BOOST_TEST(cli_process(exec_args(srv, key, {"--wait", "0ms"}, {"true"})).wait() == 0);
}

BOOST_FIXTURE_TEST_CASE(a_waiter_gets_the_lock_when_the_holder_ends, cli_fixture, *utf::timeout(60))
{
   cli_process holder(exec_args(srv, key, {}, hold_until(dir)), dir);
   cli_process waiter(exec_args(srv, key, {"--wait", "20s", "--strategy", "subscribe"},
                                {"sh", "-c", "test -e \"$1\"", "sh", dir.file("go")}));
   // The waiter has tried once and now listens for the release.
   BOOST_TEST_REQUIRE(poll_until([&] { return listeners(srv, key) == 1; }), waiter.err());
   create_file(dir.file("go"));
   BOOST_TEST(holder.wait() == 0);
   BOOST_TEST(waiter.wait() == 0);  // it ran after the holder: "go" existed
}

// Without --strategy, a waiter listens for the release (subscribe), as the library does.
BOOST_FIXTURE_TEST_CASE(the_default_strategy_is_subscribe, cli_fixture, *utf::timeout(60))
{
   cli_process holder(exec_args(srv, key, {}, hold_until(dir)), dir);
   cli_process waiter(exec_args(srv, key, {"--wait", "20s"}, {"true"}));
   // A spinning waiter would never subscribe.
   BOOST_TEST(poll_until([&] { return listeners(srv, key) == 1; }), waiter.err());
   create_file(dir.file("go"));
   BOOST_TEST(holder.wait() == 0);
   BOOST_TEST(waiter.wait() == 0);
}

BOOST_AUTO_TEST_CASE(usage_errors_exit_64, *utf::timeout(60))
{
   redis_server srv;
   auto key = unique_key();
   std::vector<std::vector<std::string>> bad = {
      exec_args(srv, key, {"--ttl", "10"}, {"true"}),
      exec_args(srv, key, {"--wait", "-1s"}, {"true"}),
      exec_args(srv, key, {"--node-timeout", "1.5s"}, {"true"}),
      exec_args(srv, key, {"--ttl", "99999999999999999999h"}, {"true"}),
      exec_args(srv, key, {"--strategy", "poll"}, {"true"}),
      exec_args(srv, "", {}, {"true"}),
      {"exec", "--redis", srv.url(), "--", "true"},  // no --key
      {"exec", "--redis", "http://127.0.0.1:6379", "--key", key, "--", "true"},
      {"exec", "--redis", "redis://127.0.0.1:99999", "--key", key, "--", "true"},
      {"exec", "--redis", srv.url(), "--key", key},  // no command
      {"exec", "--redis", srv.url(), "--key", key, "--bogus", "--", "true"},
   };
   for (const auto& args : bad) {
      cli_process p(args);
      BOOST_TEST(p.wait() == 64,
                 "args: " << args[3] << " " << args.back() << "; stderr: " << p.err());
      auto err = p.err();
      BOOST_TEST(std::count(err.begin(), err.end(), '\n') == 1, "not one line: " << err);
      BOOST_TEST(err.rfind("locksmith: ", 0) == 0u, err);
   }
   BOOST_TEST(srv.text({"DBSIZE"}) == "0");  // nothing was locked
}

BOOST_AUTO_TEST_CASE(no_subcommand_prints_usage_and_exits_64, *utf::timeout(60))
{
   cli_process bare({});
   BOOST_TEST(bare.wait() == 64);
   BOOST_TEST(bare.err().find("exec") != std::string::npos);
   cli_process help({"exec", "--help"});
   BOOST_TEST(help.wait() == 0);
   for (auto code : {"64", "69", "70", "75", "76", "127", "LOCKSMITH_FENCING_TOKEN", "--grace",
                     "--max-hold", "renewed", "SIGTERM", "SIGKILL"})
      BOOST_TEST(help.out().find(code) != std::string::npos, code << " not in --help");
}

// 3 of 5 nodes frozen: the attempts fail (exit 69), and the SETs that landed on the two healthy
// nodes, and those queued to the frozen ones, must all be released: the tool closes its client,
// which sees its owned releases through, before it exits. Once the nodes resume, no key is left.
BOOST_AUTO_TEST_CASE(failed_attempts_leave_no_key_after_exit, *utf::timeout(120))
{
   std::vector<std::unique_ptr<redis_server>> nodes;
   for (int i = 0; i < 5; ++i)
      nodes.push_back(std::make_unique<redis_server>());
   auto key = unique_key();
   for (int i = 2; i < 5; ++i)
      nodes[i]->pause();
   std::vector<std::string> args{"exec"};
   for (auto& n : nodes)
      args.insert(args.end(), {"--redis", n->url()});
   args.insert(args.end(), {"--key", key, "--wait", "1s", "--", "true"});
   cli_process p(args);
   int const code = p.wait(30s);
   for (int i = 2; i < 5; ++i)
      nodes[i]->resume();
   BOOST_TEST(code == 69, p.err());
   BOOST_TEST(poll_until(
      [&] {
         return std::none_of(nodes.begin(), nodes.end(),
                             [&](auto& n) { return key_exists(*n, key); });
      },
      5s));
}

BOOST_AUTO_TEST_CASE(unreachable_redis_exits_69, *utf::timeout(60))
{
   redis_server srv;
   srv.kill();
   cli_process p(exec_args(srv, unique_key(), {"--wait", "200ms"}, {"true"}));
   auto t0 = clock_type::now();
   BOOST_TEST(p.wait(10s) == 69, p.err());
   BOOST_TEST(ms_since(t0) < 5000);
}

// A server without replicas never acknowledges --wait-replicas 1: the lock is refused (and the
// key it set released), with the reason. (The node timeout leaves the WAIT room to answer on a
// connection that is still being made.)
BOOST_AUTO_TEST_CASE(a_lock_short_of_replicas_exits_69, *utf::timeout(60))
{
   redis_server srv;
   auto const key = unique_key();
   cli_process p(exec_args(
      srv, key, {"--wait", "0ms", "--node-timeout", "500ms", "--wait-replicas", "1"}, {"true"}));
   BOOST_TEST(p.wait(10s) == 69, p.err());
   BOOST_TEST(p.err().find("WAIT: 0 of 1 replicas") != std::string::npos, p.err());
   BOOST_TEST(!key_exists(srv, key));
}

BOOST_AUTO_TEST_CASE(key_of_another_type_exits_70, *utf::timeout(60))
{
   redis_server srv;
   auto key = unique_key();
   BOOST_TEST_REQUIRE(srv.text({"RPUSH", lock_key(key), "x"}) == "1");
   cli_process p(exec_args(srv, key, {"--wait", "1s"}, {"true"}));
   BOOST_TEST(p.wait() == 70);
   BOOST_TEST(p.err().find("unexpected reply") != std::string::npos, p.err());
   BOOST_TEST(p.err().find("WRONGTYPE") != std::string::npos, p.err());  // the server's own words
   BOOST_TEST(srv.text({"TYPE", lock_key(key)}) == "list");              // left alone
}

BOOST_AUTO_TEST_CASE(command_not_found_exits_127_and_releases, *utf::timeout(60))
{
   redis_server srv;
   auto key = unique_key();
   auto missing = "locksmith-no-such-command-" + std::to_string(::getpid());
   cli_process p(exec_args(srv, key, {}, {missing}));
   BOOST_TEST(p.wait() == 127);
   BOOST_TEST(p.err().find("No such file") != std::string::npos, p.err());
   BOOST_TEST(!key_exists(srv, key));
}

BOOST_FIXTURE_TEST_CASE(sigterm_is_forwarded_to_the_command, cli_fixture, *utf::timeout(60))
{
   // The trap is set before "ready" exists, so the forwarded SIGTERM finds it.
   cli_process p(
      exec_args(srv, key, {},
                {"sh", "-c", "trap 'exit 42' TERM; touch \"$1\"; while :; do sleep 0.01; done",
                 "sh", dir.file("ready")}),
      dir);
   ::kill(p.pid(), SIGTERM);
   BOOST_TEST(p.wait() == 42);  // the command's own code: locksmith waited for it
   BOOST_TEST(!key_exists(srv, key));
}

BOOST_FIXTURE_TEST_CASE(sigint_that_kills_the_command_exits_130, cli_fixture, *utf::timeout(60))
{
   cli_process p(
      exec_args(srv, key, {}, {"sh", "-c", "touch \"$1\"; exec sleep 30", "sh", dir.file("ready")}),
      dir);
   ::kill(p.pid(), SIGINT);
   BOOST_TEST(p.wait() == 128 + SIGINT);
   BOOST_TEST(!key_exists(srv, key));
}

BOOST_FIXTURE_TEST_CASE(a_signal_stops_the_wait_for_the_lock, cli_fixture, *utf::timeout(60))
{
   cli_process holder(exec_args(srv, key, {}, hold_until(dir)), dir);
   cli_process waiter(exec_args(srv, key, {"--wait", "30s", "--strategy", "subscribe"},
                                {"sh", "-c", "touch \"$1\"", "sh", dir.file("ran")}));
   BOOST_TEST_REQUIRE(poll_until([&] { return listeners(srv, key) == 1; }), waiter.err());
   ::kill(waiter.pid(), SIGTERM);
   BOOST_TEST(waiter.wait(5s) == 128 + SIGTERM);
   BOOST_TEST(!exists(dir.file("ran")));
   BOOST_TEST(key_exists(srv, key));  // the holder's lock is untouched
   create_file(dir.file("go"));
   BOOST_TEST(holder.wait() == 0);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_cli
