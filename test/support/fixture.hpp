// The fixtures of the integration suites: real redis-servers and one io_context, the checks every
// such test ends with, and the small helpers that tests against them keep needing.
#pragma once

#include <locksmith/client.hpp>
#include <locksmith/config.hpp>
#include "sansio/scripts.hpp"

#include "support/config.hpp"
#include "support/keys.hpp"
#include "support/preconditions.hpp"
#include "support/redis_server.hpp"
#include "support/tasks.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace locksmith::test {

/// (error_code, value) instead of exceptions.
inline constexpr auto tuple = boost::asio::as_tuple(boost::asio::deferred);

/// After a test: what it started on `ioc` must wind down once its clients are gone. Runs the
/// context for at most `deadline` and fails the test if work is still pending then (a timer, a
/// connection or a coroutine that outlived the clients). The fixtures call it from teardown(),
/// which Boost.Test runs only after a test body that returned: after one that threw, an abandoned
/// coroutine may still refer to the body's destroyed locals.
void expect_no_work_left(boost::asio::io_context& ioc,
                         std::chrono::steady_clock::duration deadline = std::chrono::seconds{5});

/// Loads the three scripts, as on a node that a long-running client has used already, so that no
/// NOSCRIPT fallback (one more EVAL) blurs what a test counts.
void load_scripts(redis_server& s);

/// `n` clients with the same config, each with its own connections, as separate processes have.
inline std::vector<std::unique_ptr<client>> make_clients(boost::asio::io_context& ioc,
                                                         config const& cfg, int n)
{
   std::vector<std::unique_ptr<client>> cs;
   for (int i = 0; i < n; ++i)
      cs.push_back(std::make_unique<client>(ioc.get_executor(), cfg));
   return cs;
}

/// What the fixtures below share: one io_context, checked for work left behind after the test,
/// and a lock name of the test's own.
struct context_fixture {
   boost::asio::io_context ioc;
   /// A lock name of this test's own (unique_key()), for the many tests that need just one.
   std::string const name = unique_key();

   context_fixture() = default;
   context_fixture(context_fixture const&) = delete;
   context_fixture& operator=(context_fixture const&) = delete;
   void teardown() { expect_no_work_left(ioc); }
};

/// One server, started with the test.
struct server_fixture : context_fixture {
   redis_server srv;

   /// A client config for this server, with the defaults otherwise.
   locksmith::config cfg() const { return test_config({srv.url()}); }

   /// The same, with the given node timeout.
   locksmith::config cfg(std::chrono::milliseconds node_timeout) const
   {
      return test_config({srv.url()}, node_timeout);
   }

   /// The Redis key of the lock `name` under the default prefix.
   static std::string lock_key(std::string const& name) { return test::lock_key(name); }

   /// Calls of one command so far, from INFO commandstats (e.g. calls("evalsha")).
   long long calls(std::string const& cmd) const { return calls_of(srv.commandstats(), cmd); }

   /// Sleeps on the io_context, so that other work (a client's connection) goes on meanwhile.
   boost::asio::awaitable<void> sleep(std::chrono::steady_clock::duration d)
   {
      return sleep_for(d);
   }

   /// Polls until the key is gone, while the io_context runs; false if it is still there at the
   /// deadline.
   boost::asio::awaitable<bool>
   key_disappears(std::string const& key,
                  std::chrono::milliseconds deadline = std::chrono::seconds{2});
};

/// Several servers, started by the test (start()), and one io_context.
struct servers_fixture : context_fixture {
   std::vector<std::unique_ptr<redis_server>> servers;

   void start(std::size_t n)
   {
      for (std::size_t i = 0; i < n; ++i)
         servers.push_back(std::make_unique<redis_server>());
   }

   /// A client config for every server, with the given node timeout.
   locksmith::config cfg(std::chrono::milliseconds node_timeout) const
   {
      return test_config(urls_of(servers), node_timeout);
   }

   /// Every server, for a test body that runs on any number of them.
   std::vector<redis_server*> all() const
   {
      std::vector<redis_server*> out;
      for (auto const& s : servers)
         out.push_back(s.get());
      return out;
   }
};

/// Five servers, started: the smallest fleet where a quorum (3) survives two failed nodes.
struct five_servers_fixture : servers_fixture {
   five_servers_fixture() { start(5); }
};

}  // namespace locksmith::test
