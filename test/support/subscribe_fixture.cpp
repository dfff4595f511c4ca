#include "support/subscribe_fixture.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/deferred.hpp>

#include <sstream>

namespace locksmith::test {

command_cost cost_between(command_stats const& before, command_stats const& after)
{
   command_cost c;
   for (auto const& [cmd, stat] : after) {
      auto const d = stat.calls - calls_of(before, cmd);
      if (cmd == "info" || cmd.starts_with("pubsub"))
         continue;  // ours: INFO commandstats, and PUBSUB NUMSUB polled while a channel lingers
      c.all += d;
      if (!run_by_scripts(cmd))
         c.sent += d;
      if (cmd == "evalsha")
         c.evalsha += d;
      if (cmd == "ping")
         c.ping += d;
   }
   return c;
}

long long subscribe_fixture::numsub(std::string const& ch) const
{
   auto const r = srv.command({"PUBSUB", "NUMSUB", ch});
   BOOST_REQUIRE(r.elements.size() == 2u);
   return r.elements[1].integer;
}

std::vector<std::string> subscribe_fixture::pubsub_client_ids() const
{
   std::vector<std::string> ids;
   std::istringstream in{srv.text({"CLIENT", "LIST", "TYPE", "pubsub"})};
   std::string line;
   while (std::getline(in, line))
      if (line.starts_with("id="))
         ids.push_back(line.substr(3, line.find(' ') - 3));
   return ids;
}

boost::asio::awaitable<bool> subscribe_fixture::sleeps_subscribed(std::string const& name,
                                                                  report const& diag)
{
   auto const ch = channel(name);
   co_return co_await eventually([&] { return numsub(ch) == 1 && diag.attempts >= 2; });
}

boost::asio::awaitable<void> wait_for_lock(client& c, std::string const& name, lock_options opts,
                                           outcome& out, event& done)
{
   opts.diag = &out.diag;
   auto [ec, l] = co_await c.async_lock(name, opts, boost::asio::as_tuple(boost::asio::deferred));
   out.at = std::chrono::steady_clock::now();
   out.ec = ec;
   out.held = std::move(l);
   done.set();
}

}  // namespace locksmith::test
