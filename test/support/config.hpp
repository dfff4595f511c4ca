// The client config that the tests and the benchmarks share. No Boost.Test here.
#pragma once

#include <locksmith/config.hpp>

#include "support/redis_server.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace locksmith::test {

// A config for these nodes, with the defaults otherwise, but no restart quarantine: the servers of
// a test have just started, and would all be in quarantine (config::restart_quarantine, which
// test_quarantine.cpp tests).
inline config test_config(std::vector<std::string> nodes,
                          std::chrono::milliseconds node_timeout = config{}.node_timeout)
{
   return {.nodes = std::move(nodes),
           .node_timeout = node_timeout,
           .restart_quarantine = std::chrono::milliseconds{0}};
}

// The URLs of these servers, in order.
inline std::vector<std::string> urls_of(std::vector<std::unique_ptr<redis_server>> const& servers)
{
   std::vector<std::string> urls;
   for (auto const& s : servers)
      urls.push_back(s->url());
   return urls;
}

}  // namespace locksmith::test
