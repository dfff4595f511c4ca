// The fixture of the tests of the subscribe wait strategy, the local queue and the commands they
// cost: one redis-server with the scripts loaded, and what the tests look at (subscribers, the
// commands counted between two moments, how a waiter ended).
#pragma once

#include <locksmith/locksmith.hpp>

#include "support/command_stats.hpp"
#include "support/fixture.hpp"
#include "support/tasks.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace locksmith::test {

inline lock_options subscribe(std::chrono::milliseconds ttl, std::chrono::milliseconds wait,
                              report* diag = nullptr)
{
   return {.ttl = ttl, .wait = wait, .strategy = wait_strategy::subscribe, .diag = diag};
}

// The commands that Redis counted between two INFO commandstats.
struct command_cost {
   long long sent = 0;  // commands that clients sent (EVALSHA, SUBSCRIBE, PING...), without INFO
   long long all = 0;   // plus those the scripts ran (SET, GET, TIME, PTTL, DEL, PUBLISH)
   long long evalsha = 0;
   long long ping = 0;  // the connections' health checks, one per second each
};

command_cost cost_between(command_stats const& before, command_stats const& after);

struct subscribe_fixture : server_fixture {
   // Loads the scripts, so that no NOSCRIPT fallback (one more EVAL) blurs the command counts.
   subscribe_fixture() { load_scripts(srv); }

   // A node timeout of 1 s instead of 50 ms: this 2-core machine is shared with compilers, and a
   // reply that comes late must not turn into an error that these tests are not about.
   config cfg() const { return test_config({srv.url()}, std::chrono::seconds{1}); }

   static std::string channel(std::string const& name) { return release_channel(name); }

   // Subscribers of the channel, as the server counts them.
   long long numsub(std::string const& ch) const;

   // The ids of the connections that are subscribed to something.
   std::vector<std::string> pubsub_client_ids() const;

   // True once a waiter on `name` sleeps subscribed: the server counts its subscription, and the
   // try made after subscribing has been answered (the waiter's report counts two attempts).
   boost::asio::awaitable<bool> sleeps_subscribed(std::string const& name, report const& diag);
};

// What one waiter ended with.
struct outcome {
   std::optional<std::chrono::steady_clock::time_point> at;  // when it completed
   error_code ec;
   lease held;
   report diag;
};

// Waits for the lock, records how and when it ended in `out`, then sets `done`.
boost::asio::awaitable<void> wait_for_lock(client& c, std::string const& name, lock_options opts,
                                           outcome& out, event& done);

}  // namespace locksmith::test
