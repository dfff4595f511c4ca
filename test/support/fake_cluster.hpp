// N fake nodes (fake_node.hpp) that share one fault plan, and a client_core over them: the quorum
// engine with no sockets, for the unit tests of the fan-out.
#pragma once

#include "core/client_core.hpp"

#include "support/fake_node.hpp"

#include "sansio/keys.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace locksmith::test {

struct fake_cluster {
   boost::asio::io_context ioc;
   std::shared_ptr<fault_plan> plan = std::make_shared<fault_plan>();
   std::vector<std::shared_ptr<fake_node>> fakes;
   std::shared_ptr<detail::client_core> core;

   explicit fake_cluster(std::size_t n,
                         std::chrono::milliseconds node_timeout = std::chrono::milliseconds{20})
   {
      for (std::size_t i = 0; i < n; ++i) {
         // Server clocks that differ, and not in node order, so that the highest fence of a
         // quorum is not always the last node's.
         auto const clock_base = 1'000'000 + 1'000 * ((i * 3) % n);
         fakes.push_back(std::make_shared<fake_node>(ioc.get_executor(), "fake" + std::to_string(i),
                                                     plan, clock_base));
      }
      core = std::make_shared<detail::client_core>(
         ioc.get_executor(), config{.node_timeout = node_timeout},
         std::vector<std::shared_ptr<detail::node>>(fakes.begin(), fakes.end()));
      core->start();
   }

   /// How many nodes hold `token` at `key`.
   std::size_t holding(std::string const& key, std::string const& token) const
   {
      return static_cast<std::size_t>(std::count_if(
         fakes.begin(), fakes.end(), [&](auto const& f) { return f->get(key) == token; }));
   }

   /// Runs the coroutine, then everything it left behind (late replies, queued releases, a hung
   /// node's backlog) until the io_context is idle. False if that takes longer than `deadline`.
   bool run_until_idle(boost::asio::awaitable<void> body,
                       std::chrono::seconds deadline = std::chrono::seconds{10})
   {
      std::exception_ptr failure;
      bool finished = false;
      boost::asio::co_spawn(ioc, std::move(body), [&](std::exception_ptr e) {
         failure = e;
         finished = true;
      });
      auto const until = std::chrono::steady_clock::now() + deadline;
      while (ioc.run_one_until(until) != 0) {}
      if (failure)
         std::rethrow_exception(failure);
      return finished && ioc.stopped();
   }
};

}  // namespace locksmith::test
