// The fixture of the single-server integration suites: one real redis-server, one io_context,
// and the small helpers that tests against it keep needing.
#pragma once

#include <locksmith/config.hpp>
#include <locksmith/detail/keys.hpp>

#include "support/redis_server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <string>

namespace locksmith::test {

/// (error_code, value) instead of exceptions.
inline constexpr auto tuple = boost::asio::as_tuple(boost::asio::deferred);

struct server_fixture {
   redis_server srv;
   boost::asio::io_context ioc;

   /// A client config for this server, with the defaults otherwise.
   locksmith::config cfg() const { return {.nodes = {srv.url()}}; }

   /// The Redis key of the lock `name` under the default prefix.
   static std::string lock_key(std::string const& name) { return detail::lock_key("locksmith:", name); }

   /// Calls of one command so far, from INFO commandstats (e.g. calls("evalsha")).
   long long calls(std::string const& cmd) const
   {
      auto const info = srv.text({"INFO", "commandstats"});
      auto const tag = "cmdstat_" + cmd + ":calls=";
      auto const at = info.find(tag);
      return at == std::string::npos ? 0 : std::stoll(info.substr(at + tag.size()));
   }

   /// Sleeps on the io_context, so that other work (a client's connection) goes on meanwhile.
   boost::asio::awaitable<void> sleep(std::chrono::steady_clock::duration d)
   {
      boost::asio::steady_timer t{ioc, d};
      co_await t.async_wait(boost::asio::use_awaitable);
   }

   /// Polls until the key is gone, while the io_context runs; false if it is still there at the
   /// deadline.
   boost::asio::awaitable<bool> key_disappears(
      std::string const& key,
      std::chrono::milliseconds deadline = std::chrono::seconds{2})
   {
      auto const until = std::chrono::steady_clock::now() + deadline;
      while (std::chrono::steady_clock::now() < until) {
         if (srv.text({"EXISTS", key}) == "0")
            co_return true;
         co_await sleep(std::chrono::milliseconds{1});
      }
      co_return false;
   }
};

}  // namespace locksmith::test
