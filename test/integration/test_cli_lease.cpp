// The `locksmith exec` command-line tool, run as a process against a real redis-server: the lease
// is renewed while CMD runs; once it is lost, CMD is stopped (SIGTERM, then SIGKILL after --grace)
// and locksmith exits 76.
#include "cli.hpp"

#include <thread>
#include <utility>

namespace test_cli_lease {

namespace {

// Deletes the lock's key under the running exec `p`, which must then exit 76 (lease lost) within
// 5 s; the milliseconds from the deletion to the exit. A deleted key is found at the next
// renewal, within ttl/3: the loss comes at a known time.
long long ms_from_deletion_to_exit(redis_server const& srv, std::string const& key, cli_process& p)
{
   auto const deleted = clock_type::now();
   BOOST_TEST_REQUIRE(srv.text({"DEL", lock_key(key)}) == "1");
   BOOST_TEST(p.wait(5s) == 76);
   return ms_since(deleted);
}

}  // namespace

// Renewal and lost leases: the lease is renewed while CMD runs; once it is lost, CMD is stopped
// (SIGTERM, then SIGKILL after --grace) and locksmith exits 76.
BOOST_AUTO_TEST_SUITE(cli_lease, *needs_redis_server())

BOOST_FIXTURE_TEST_CASE(the_lease_is_renewed_while_the_command_outlives_the_ttl, cli_fixture,
                        *utf::timeout(60))
{
   cli_process holder(
      exec_args(srv, key, {"--ttl", "1s", "--grace", "200ms"},
                {"sh", "-c", "touch \"$1\"; while [ ! -e \"$2\" ]; do sleep 0.01; done; exit 5",
                 "sh", dir.file("ready"), dir.file("go")}));
   auto started = appears_at(dir.file("ready"), 10s);
   BOOST_TEST_REQUIRE(started.has_value(), holder.err());
   const auto token = srv.text({"GET", lock_key(key)});
   // The key keeps our token all along (never expired and retaken) until `until`.
   auto same_owner_until = [&](clock_type::time_point until) {
      for (; clock_type::now() < until; std::this_thread::sleep_for(20ms))
         if (srv.text({"GET", lock_key(key)}) != token)
            return false;
      return true;
   };
   // 2.5 TTLs in: without renewal the key would be long gone.
   BOOST_TEST(same_owner_until(*started + 2500ms));
   BOOST_TEST(std::stoll(srv.text({"PTTL", lock_key(key)})) > 0);
   cli_process other(exec_args(srv, key, {"--wait", "100ms"},
                               {"sh", "-c", "touch \"$1\"", "sh", dir.file("ran")}));
   BOOST_TEST(other.wait() == 75, other.err());
   BOOST_TEST(same_owner_until(*started + 3000ms));
   create_file(dir.file("go"));
   BOOST_TEST(holder.wait() == 5);  // CMD's own code: 3 TTLs long, and never stopped
   BOOST_TEST(ms_since(*started) >= 3000);
   BOOST_TEST(holder.err().empty(), holder.err());
   BOOST_TEST(!exists(dir.file("ran")));
   BOOST_TEST(!key_exists(srv, key));  // released at the end
}

BOOST_FIXTURE_TEST_CASE(frozen_redis_stops_the_command_before_the_key_expires, cli_fixture,
                        *utf::timeout(60))
{
   cli_process p(exec_args(srv, key, {"--ttl", "1s", "--grace", "500ms"}, trap_term(dir)), dir);
   // The key expires in Redis at (the moment PTTL ran) + pttl, so no earlier than before + pttl.
   auto before = clock_type::now();
   auto pttl = std::chrono::milliseconds{std::stoll(srv.text({"PTTL", lock_key(key)}))};
   auto frozen = clock_type::now();
   srv.pause();
   auto termed = appears_at(dir.file("termed"), 5s);
   BOOST_TEST_REQUIRE(termed.has_value(), "CMD got no SIGTERM; stderr: " << p.err());
   BOOST_TEST(p.wait(5s) == 76);  // although CMD itself exited 3
   auto exited = clock_type::now();
   srv.resume();
   auto expiry = before + pttl;
   BOOST_TEST_MESSAGE("freeze to SIGTERM " << ms_between(frozen, *termed)
                                           << " ms (TTL 1000 ms), "
                                              "to exit "
                                           << ms_between(frozen, exited) << " ms; SIGTERM "
                                           << ms_between(*termed, expiry)
                                           << " ms before the key's earliest expiry");
   // Within a few TTLs of the freeze, not 30 s. (The bound that matters is the next one; these
   // leave a loaded machine under the sanitizers its stalls.)
   BOOST_TEST(ms_between(frozen, *termed) < 3000);
   BOOST_TEST(ms_between(frozen, exited) < 4000);
   BOOST_TEST(ms_between(*termed, expiry) > 0);  // CMD was told before another could lock
   auto err = p.err();
   BOOST_TEST(err == "locksmith: lease on '" + key + "' lost; stopping CMD\n", err);
   BOOST_TEST(!still_runs(dir.file("pid")));
   BOOST_TEST(poll_until([&] { return !key_exists(srv, key); }, 5s));  // it expires
}

BOOST_FIXTURE_TEST_CASE(a_command_that_ignores_sigterm_is_killed_after_the_grace, cli_fixture,
                        *utf::timeout(60))
{
   cli_process p(exec_args(srv, key, {"--ttl", "1s", "--grace", "200ms"}, ignore_term(dir)), dir);
   auto const took = ms_from_deletion_to_exit(srv, key, p);
   BOOST_TEST_MESSAGE("key deleted to exit, with a 200 ms grace: " << took << " ms");
   BOOST_TEST(took >= 200);  // CMD had its grace before the SIGKILL
   BOOST_TEST(took < 4000);  // killed: it would have slept on
   auto err = p.err();
   BOOST_TEST(err.find("lost; stopping CMD") != std::string::npos, err);
   BOOST_TEST(err.find("SIGKILL") != std::string::npos, err);
   BOOST_TEST(count_lines(err) == 2, err);
   BOOST_TEST(!still_runs(dir.file("pid")));  // the sleep that ignored SIGTERM is gone
}

BOOST_FIXTURE_TEST_CASE(a_deleted_key_stops_the_command_promptly, cli_fixture, *utf::timeout(60))
{
   cli_process p(exec_args(srv, key, {"--ttl", "1s", "--grace", "500ms"}, trap_term(dir)), dir);
   auto const took = ms_from_deletion_to_exit(srv, key, p);
   BOOST_TEST_MESSAGE("key deleted to exit: " << took << " ms");
   BOOST_TEST(took < 3000);  // at the next renewal (ttl/3), with room for a loaded machine
   BOOST_TEST(exists(dir.file("termed")));
   BOOST_TEST(count_lines(p.err()) == 1, p.err());
}

BOOST_FIXTURE_TEST_CASE(grace_zero_kills_at_once_without_sigterm, cli_fixture, *utf::timeout(60))
{
   cli_process p(exec_args(srv, key, {"--ttl", "1s", "--grace", "0ms"}, trap_term(dir, "3")), dir);
   BOOST_TEST_REQUIRE(srv.text({"DEL", lock_key(key)}) == "1");
   BOOST_TEST(p.wait(5s) == 76);
   BOOST_TEST(!exists(dir.file("termed")));  // killed outright: its trap never ran
   BOOST_TEST(!still_runs(dir.file("pid")));
}

BOOST_AUTO_TEST_CASE(max_hold_lets_the_lock_go_and_stops_the_command, *utf::timeout(60))
{
   redis_server srv;
   auto key = unique_key();
   auto t0 = clock_type::now();
   cli_process p(exec_args(srv, key, {"--ttl", "1s", "--max-hold", "500ms", "--grace", "200ms"},
                           {"sleep", "10"}));
   BOOST_TEST(p.wait(5s) == 76, p.err());
   auto took = ms_since(t0);
   BOOST_TEST_MESSAGE("--max-hold 500ms: exit after " << took << " ms");
   BOOST_TEST(took >= 500);  // the hold counts from the lock attempt, which began after t0
   BOOST_TEST(took < 4000);  // stopped: `sleep 10` would have run on
   BOOST_TEST(p.err().find("lost; stopping CMD") != std::string::npos, p.err());
   BOOST_TEST(!key_exists(srv, key));  // let go, not left to expire
}

// A short --ttl needs no --grace: the default grace shrinks to leave the watchdog room to renew.
BOOST_AUTO_TEST_CASE(a_short_ttl_works_with_the_default_grace, *utf::timeout(60))
{
   redis_server srv;
   auto key = unique_key();
   cli_process quick(exec_args(srv, key, {"--ttl", "1s"}, {"sh", "-c", "exit 7"}));
   BOOST_TEST(quick.wait() == 7);
   BOOST_TEST(quick.err().empty(), quick.err());
   // And the lease is renewed while CMD outlives the TTL.
   temp_dir dir;
   cli_process holder(
      exec_args(srv, key, {"--ttl", "1s"},
                {"sh", "-c", "touch \"$1\"; while [ ! -e \"$2\" ]; do sleep 0.01; done; exit 5",
                 "sh", dir.file("ready"), dir.file("go")}),
      dir);
   const auto token = srv.text({"GET", lock_key(key)});
   // A renewal shows as the key's PTTL going up again; three of them (one every ttl/3) take the
   // lease past its first TTL.
   auto pttl = [&] { return std::stoll(srv.text({"PTTL", lock_key(key)})); };
   for (int renewals = 0; renewals < 3; ++renewals) {
      auto last = pttl();
      auto went_up = [&] {
         auto now = pttl();
         return std::exchange(last, now) < now;
      };
      BOOST_TEST_REQUIRE(poll_until(went_up, 5s),
                         "no renewal " << renewals + 1 << "; stderr: " << holder.err());
   }
   BOOST_TEST(srv.text({"GET", lock_key(key)}) == token);
   create_file(dir.file("go"));
   BOOST_TEST(holder.wait() == 5);
   BOOST_TEST(holder.err().empty(), holder.err());
   BOOST_TEST(!key_exists(srv, key));
}

BOOST_AUTO_TEST_CASE(bad_grace_or_max_hold_exits_64, *utf::timeout(60))
{
   redis_server srv;
   auto key = unique_key();
   std::vector<std::vector<std::string>> bad = {
      {"--grace", "1.5s"}, {"--grace", "-1s"},    {"--grace", "soon"},  {"--grace", "25h"},
      {"--grace", ""},     {"--max-hold", "0ms"}, {"--max-hold", "1d"}, {"--max-hold", "8761h"},
   };
   for (const auto& options : bad) {
      cli_process p(exec_args(srv, key, options, {"true"}));
      BOOST_TEST(p.wait() == 64, options[0] << " '" << options[1] << "'; stderr: " << p.err());
      auto err = p.err();
      BOOST_TEST(count_lines(err) == 1, "not one line: " << err);
      BOOST_TEST(err.rfind("locksmith: " + options[0], 0) == 0u, err);
   }
   BOOST_TEST(srv.text({"DBSIZE"}) == "0");  // nothing was locked
}

BOOST_AUTO_TEST_CASE(grace_must_be_below_the_ttl_and_leave_room_to_renew, *utf::timeout(60))
{
   redis_server srv;
   auto key = unique_key();
   cli_process refused(exec_args(srv, key, {"--ttl", "1s", "--grace", "1s"}, {"true"}));
   BOOST_TEST(refused.wait() == 64);
   BOOST_TEST(refused.err().find("--grace must be below --ttl") != std::string::npos,
              refused.err());
   // 1s - 333ms - 12ms drift - 2 x 50ms node timeout: the grace must be below 555ms.
   cli_process too_long(exec_args(srv, key, {"--ttl", "1s", "--grace", "555ms"}, {"true"}));
   BOOST_TEST(too_long.wait() == 64);
   BOOST_TEST(too_long.err() ==
                 "locksmith: --grace 555ms leaves --ttl 1s no room to renew: it must be below "
                 "555ms\n",
              too_long.err());
   cli_process short_ttl(exec_args(srv, key, {"--ttl", "154ms", "--grace", "0ms"}, {"true"}));
   BOOST_TEST(short_ttl.wait() == 64);
   BOOST_TEST(short_ttl.err().rfind("locksmith: --ttl 154ms is too short to renew", 0) == 0u,
              short_ttl.err());
   BOOST_TEST(srv.text({"DBSIZE"}) == "0");  // the refused ones locked nothing
   cli_process risky(exec_args(srv, key, {"--ttl", "1s", "--grace", "554ms"}, {"true"}));
   BOOST_TEST(risky.wait() == 0);
   BOOST_TEST(risky.err().find("warning: --ttl") != std::string::npos, risky.err());
   cli_process fine(exec_args(srv, key, {"--ttl", "3s", "--grace", "1s"}, {"true"}));
   BOOST_TEST(fine.wait() == 0);
   BOOST_TEST(fine.err().empty(), fine.err());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_cli_lease
