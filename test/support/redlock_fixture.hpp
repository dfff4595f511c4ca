// The fixture of the RedLock suites: five real redis-servers with the scripts loaded, which a test
// freezes (SIGSTOP) and thaws, and the checks of what each node holds.
#pragma once

#include <locksmith/report.hpp>

#include "support/fixture.hpp"
#include "support/tasks.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace locksmith::test {

struct redlock_fixture : servers_fixture {
   static constexpr std::size_t node_count = 5;
   static constexpr std::chrono::milliseconds node_timeout{50};

   // Warm nodes, as after the first call of a long-running client. (A node whose cache is empty
   // answers NOSCRIPT, and the client sends the text; see
   // release_reaches_a_node_whose_scripts_were_flushed.)
   redlock_fixture()
   {
      start(node_count);
      for (auto& s : servers)
         load_scripts(*s);
   }

   ~redlock_fixture()
   {
      for (auto i : paused)
         servers[i]->resume();
   }

   config cfg() const { return servers_fixture::cfg(node_timeout); }

   redis_server& srv(std::size_t i) { return *servers.at(i); }

   void pause(std::size_t i)
   {
      servers.at(i)->pause();
      paused.insert(i);
   }
   void resume(std::size_t i)
   {
      servers.at(i)->resume();
      paused.erase(i);
   }

   // Node indexes [first, last). (A braced list inside a coroutine trips GCC 12.)
   static std::vector<std::size_t> nodes_in(std::size_t first, std::size_t last)
   {
      std::vector<std::size_t> v;
      for (auto i = first; i < last; ++i)
         v.push_back(i);
      return v;
   }

   // True when every node in `which` holds `value` at `key`.
   bool all_hold(std::vector<std::size_t> const& which, std::string const& key,
                 std::string const& value)
   {
      return std::all_of(which.begin(), which.end(), [&](std::size_t i) {
         return srv(i).text({"GET", key}) == value;
      });
   }

   // True when no running, unpaused server in `which` has the key.
   boost::asio::awaitable<bool>
   gone_from(std::vector<std::size_t> which, std::string const& key,
             std::chrono::steady_clock::duration deadline = std::chrono::seconds{3})
   {
      co_return co_await eventually(
         [&] {
            return std::all_of(which.begin(), which.end(), [&](std::size_t i) {
               return srv(i).text({"EXISTS", key}) == "0";
            });
         },
         deadline);
   }

   boost::asio::awaitable<bool>
   gone_everywhere(std::string const& key,
                   std::chrono::steady_clock::duration deadline = std::chrono::seconds{3})
   {
      co_return co_await gone_from(nodes_in(0, node_count), key, deadline);
   }

   std::set<std::size_t> paused;
};

// How many nodes voted `v` in the report.
inline std::size_t count_votes(report const& r, node_vote v)
{
   return static_cast<std::size_t>(
      std::count_if(r.nodes.begin(), r.nodes.end(), [v](auto const& n) { return n.vote == v; }));
}

}  // namespace locksmith::test
