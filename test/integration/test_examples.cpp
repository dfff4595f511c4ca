// The examples, run as processes against a real redis-server: what each prints, its exit code,
// and what it leaves in Redis. Built only with the examples (LOCKSMITH_BUILD_TOOLS). The HTTP
// gateway is not tested here.
#include "support/keys.hpp"
#include "support/preconditions.hpp"
#include "support/redis_server.hpp"
#include "support/spawned_process.hpp"

#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <regex>
#include <string>
#include <vector>

namespace test_examples {

namespace utf = boost::unit_test;
using namespace std::chrono_literals;
using locksmith::test::fence_key;
using locksmith::test::lock_key;
using locksmith::test::needs_redis_server;
using locksmith::test::poll_until;
using locksmith::test::redis_server;
using locksmith::test::spawned_process;

namespace {

// One run of build/examples/<name> against `srv`, with `args` after the server's URL.
spawned_process run_example(std::string const& name, redis_server const& srv,
                            std::vector<std::string> args = {})
{
   args.insert(args.begin(), srv.url());
   return spawned_process(std::string{LOCKSMITH_EXAMPLES_DIR} + "/" + name, std::move(args));
}

// The stdout of the example, run on `srv`, which must exit 0 within `deadline`: else the case
// stops, with its stderr.
std::string output_of(std::string const& name, redis_server const& srv,
                      std::chrono::seconds deadline = 30s)
{
   auto p = run_example(name, srv);
   BOOST_TEST_REQUIRE(p.wait(deadline) == 0, p.err());
   return p.out();
}

// Every key on the server, sorted, one per line.
std::string keys(redis_server const& srv)
{
   std::vector<std::string> names;
   for (auto const& k : srv.command({"KEYS", "*"}).elements)
      names.push_back(k.str);
   std::sort(names.begin(), names.end());
   std::string lines;
   for (auto const& n : names)
      lines.append(n).append("\n");
   return lines;
}

bool key_exists(redis_server const& srv, std::string const& key)
{
   return srv.text({"EXISTS", key}) == "1";
}

// What a lock leaves behind once released: its fence key alone, which expires by itself.
void only_the_fence_key_is_left(redis_server const& srv, std::string const& name)
{
   BOOST_TEST(keys(srv) == fence_key(name) + "\n");
   BOOST_TEST(std::stoll(srv.text({"PTTL", fence_key(name)})) > 0);
}

// The numbers that `pattern`'s first group matches in `text`, in order.
std::vector<std::uint64_t> numbers(std::string const& text, std::string const& pattern)
{
   std::vector<std::uint64_t> found;
   std::regex const re{pattern};
   for (std::sregex_iterator i{text.begin(), text.end(), re}, end; i != end; ++i)
      found.push_back(std::stoull((*i)[1].str()));
   return found;
}

bool contains(std::string const& text, std::string const& part)
{
   return text.find(part) != std::string::npos;
}

bool matches(std::string const& text, std::string const& pattern)
{
   return std::regex_search(text, std::regex{pattern});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(examples, *needs_redis_server())

BOOST_AUTO_TEST_CASE(basic_lock_locks_by_hand_then_scoped, *utf::timeout(60))
{
   redis_server srv;
   auto p = run_example("basic_lock", srv);
   BOOST_TEST_REQUIRE(p.wait(30s) == 0, p.err());
   auto const out = p.out();
   // While held, try_lock answers lock_taken, and a short wait times out.
   BOOST_TEST(matches(out, R"(try_lock again: .* \(expected\))"), out);
   BOOST_TEST(contains(out, "unlocked: Success"), out);
   BOOST_TEST(contains(out, "body returned 42, lock released"), out);
   BOOST_TEST(matches(out, R"(second async_lock threw: .* \(expected\))"), out);
   auto const tokens = numbers(out, R"(fencing token +(\d+))");
   BOOST_TEST_REQUIRE(tokens.size() == 2u, out);
   BOOST_TEST(tokens[1] > tokens[0]);
   BOOST_TEST(p.err().empty(), p.err());
   only_the_fence_key_is_left(srv, "examples/basic");
}

BOOST_AUTO_TEST_CASE(basic_lock_releases_on_ctrl_c, *utf::timeout(60))
{
   redis_server srv;
   auto p = run_example("basic_lock", srv);
   // Its stdout is a file, so buffered: the key tells when the lock is held.
   BOOST_TEST_REQUIRE(poll_until([&] { return key_exists(srv, lock_key("examples/basic")); }),
                      p.err());
   ::kill(p.pid(), SIGINT);
   BOOST_TEST(p.wait() == 1, p.out());
   BOOST_TEST(contains(p.err(), "stopped: "), p.err());
   only_the_fence_key_is_left(srv, "examples/basic");
}

// The URLs on the command line are the nodes (examples/common/main.cpp): three make a RedLock,
// taken on a quorum of them and released on all.
BOOST_AUTO_TEST_CASE(basic_lock_takes_a_redlock_over_the_urls_given, *utf::timeout(60))
{
   redis_server a, b, c;
   auto p = run_example("basic_lock", a, {b.url(), c.url()});
   BOOST_TEST_REQUIRE(p.wait(30s) == 0, p.err());
   BOOST_TEST(contains(p.out(), "body returned 42, lock released"), p.out());
   // A quorum at least minted fences; no node keeps the lock.
   int fenced = 0;
   for (auto const* srv : {&a, &b, &c}) {
      BOOST_TEST(!key_exists(*srv, lock_key("examples/basic")));
      fenced += key_exists(*srv, fence_key("examples/basic")) ? 1 : 0;
   }
   BOOST_TEST(fenced >= 2);
}

BOOST_AUTO_TEST_CASE(an_example_refuses_a_bad_url_with_status_2, *utf::timeout(60))
{
   redis_server srv;
   auto p = run_example("cron_once", srv, {"http://127.0.0.1:6379", "1"});
   BOOST_TEST(p.wait(30s) == 2, p.out());
   BOOST_TEST(contains(p.err(), "bad Redis URL: "), p.err());
   BOOST_TEST(!contains(p.out(), "running the job"), p.out());
}

BOOST_AUTO_TEST_CASE(cron_once_runs_the_job_and_releases, *utf::timeout(60))
{
   redis_server srv;
   auto p = run_example("cron_once", srv, {"1"});
   BOOST_TEST_REQUIRE(p.wait(30s) == 0, p.out() << p.err());  // its reasons go to stdout
   auto const out = p.out();
   BOOST_TEST(matches(out, R"(running the job, fencing token [1-9])"), out);
   BOOST_TEST(contains(out, "step 1/1, lease valid for another "), out);
   BOOST_TEST(contains(out, "job done, lock released"), out);
   only_the_fence_key_is_left(srv, "cron/nightly-report");
}

BOOST_AUTO_TEST_CASE(cron_once_runs_on_one_machine_only, *utf::timeout(60))
{
   redis_server srv;
   auto first = run_example("cron_once", srv, {"30"});
   BOOST_TEST_REQUIRE(poll_until([&] { return key_exists(srv, lock_key("cron/nightly-report")); }),
                      first.err());
   auto second = run_example("cron_once", srv, {"1"});
   BOOST_TEST(second.wait() == 0, second.err());
   BOOST_TEST(contains(second.out(), "another machine runs the job: nothing to do"), second.out());
   BOOST_TEST(!contains(second.out(), "running the job"), second.out());
   // Ctrl-C cancels the job and releases the lock.
   ::kill(first.pid(), SIGINT);
   BOOST_TEST(first.wait() == 130, first.err());
   BOOST_TEST(contains(first.out(), "interrupted: the job was cancelled and the lock released"),
              first.out());
   only_the_fence_key_is_left(srv, "cron/nightly-report");
}

BOOST_AUTO_TEST_CASE(cron_once_stops_the_job_when_its_key_is_deleted, *utf::timeout(60))
{
   redis_server srv;
   auto p = run_example("cron_once", srv, {"30"});
   auto const key = lock_key("cron/nightly-report");
   BOOST_TEST_REQUIRE(poll_until([&] { return key_exists(srv, key); }), p.err());
   BOOST_TEST_REQUIRE(srv.text({"DEL", key}) == "1");
   // The next renewal (every 2 s) finds the key gone, and the job is cancelled.
   BOOST_TEST(p.wait() == 76, p.err());
   BOOST_TEST(contains(p.out(), "lease lost"), p.out());
   BOOST_TEST(!contains(p.out(), "step 30/30"), p.out());
   BOOST_TEST(!key_exists(srv, key));
}

BOOST_AUTO_TEST_CASE(cron_once_without_redis_does_not_run_the_job, *utf::timeout(60))
{
   redis_server srv;
   srv.kill();  // the port stays ours, and nothing listens on it
   auto p = run_example("cron_once", srv, {"1"});
   BOOST_TEST(p.wait() == 69, p.err());
   BOOST_TEST(contains(p.out(), "could not run the job: "), p.out());
   BOOST_TEST(!contains(p.out(), "running the job"), p.out());
}

BOOST_AUTO_TEST_CASE(fencing_token_storage_refuses_the_stale_write, *utf::timeout(60))
{
   redis_server srv;
   auto const out = output_of("fencing_token", srv);
   auto const accepted = numbers(out, R"(B: write with fence (\d+) accepted)");
   auto const refused = numbers(out, R"(A: write with fence (\d+) REFUSED)");
   BOOST_TEST_REQUIRE(accepted.size() == 1u, out);
   BOOST_TEST_REQUIRE(refused.size() == 1u, out);
   BOOST_TEST(refused[0] < accepted[0]);
   BOOST_TEST(numbers(out, R"(the storage is at fence (\d+))") == accepted,
              boost::test_tools::per_element());
   // The storage holds B's write, with B's fence.
   BOOST_TEST(srv.text({"HGET", "fencing-demo:storage", "fence"}) == std::to_string(accepted[0]));
   BOOST_TEST(srv.text({"HGET", "fencing-demo:storage", "value"}) == "by B");
   BOOST_TEST(!key_exists(srv, lock_key("examples/fencing")));
   BOOST_TEST(keys(srv) == "fencing-demo:storage\n" + fence_key("examples/fencing") + "\n");
}

// Four customers arrive at a busy desk one after the other, each through its own client: the
// fair lock serves them in that order.
BOOST_AUTO_TEST_CASE(fair_lock_serves_customers_in_their_order_of_arrival, *utf::timeout(60))
{
   redis_server srv;
   auto const out = output_of("fair_lock", srv);
   BOOST_TEST(numbers(out, R"(customer (\d+) served)") == (std::vector<std::uint64_t>{1, 2, 3, 4}),
              boost::test_tools::per_element());
   auto const fences = numbers(out, R"(served \(fencing token (\d+)\))");
   BOOST_TEST(std::is_sorted(fences.begin(), fences.end()), out);
   only_the_fence_key_is_left(srv, "examples/desk");
}

// The semaphore's six callers never hold more than two permits at once, and give them all back.
BOOST_AUTO_TEST_CASE(semaphore_holds_at_most_two_permits, *utf::timeout(60))
{
   redis_server srv;
   auto const out = output_of("semaphore", srv, 40s);
   auto const held = numbers(out, R"(, (\d+) held here)");
   BOOST_TEST(held.size() == 18u, out);  // 6 callers x 3 rounds
   BOOST_TEST(*std::max_element(held.begin(), held.end()) <= 2u, out);
   BOOST_TEST(!contains(out, "no permit"), out);
   only_the_fence_key_is_left(srv, "examples/partner-api");
}

// The read-write lock's writer finds no reader of its process beside it, and readers share.
// It runs until Ctrl-C; it is stopped once the writer has held the lock.
BOOST_AUTO_TEST_CASE(rw_lock_writer_excludes_the_readers, *utf::timeout(60))
{
   redis_server srv;
   auto p = run_example("rw_lock", srv);
   BOOST_TEST_REQUIRE(poll_until([&] { return key_exists(srv, lock_key("examples/prices")); }, 20s),
                      p.err());
   ::kill(p.pid(), SIGINT);
   BOOST_TEST_REQUIRE(p.wait(30s) == 0, p.err());
   auto const out = p.out();
   auto const beside_writer =
      numbers(out, R"(republishes \(fencing token \d+\), readers here: (\d+))");
   BOOST_TEST_REQUIRE(!beside_writer.empty(), out);
   BOOST_TEST(*std::max_element(beside_writer.begin(), beside_writer.end()) == 0u, out);
   BOOST_TEST(matches(out, R"(reader \d reads, with [1-3] other readers here)"), out);
   BOOST_TEST(!key_exists(srv, lock_key("examples/prices")));
   BOOST_TEST(srv.text({"EXISTS", lock_key("examples/prices") + ":readers"}) == "0");
}

// The reentrant example's helper takes the account again for its request at once, and the
// other request gets it only after both holds are released.
BOOST_AUTO_TEST_CASE(reentrant_takes_the_lock_again_for_the_same_request, *utf::timeout(60))
{
   redis_server srv;
   auto p = run_example("reentrant", srv);
   BOOST_TEST_REQUIRE(p.wait(30s) == 0, p.err());
   auto const out = p.out();
   BOOST_TEST(contains(out, "helper holds it again"), out);
   BOOST_TEST(!contains(out, "could not lock"), out);
   BOOST_TEST(!key_exists(srv, lock_key("examples/account-42")));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_examples
