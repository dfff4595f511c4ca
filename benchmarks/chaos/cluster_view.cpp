// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "cluster_view.hpp"

#include "support/sentinel_group.hpp"

#include <sstream>
#include <stdexcept>

namespace locksmith::bench {
namespace {

bool has(std::string const& text, std::string const& what)
{
   return text.find(what) != std::string::npos;
}

// One line of CLUSTER NODES: <id> <ip:port@cport> <flags> <master> <ping> <pong> <epoch>
// <link> <slot or range>...
struct node_line {
   std::string id, flags, master;
   std::vector<std::string> slots;
};

std::vector<node_line> cluster_nodes(test::redis_server const& s)
{
   std::vector<node_line> nodes;
   std::istringstream lines{s.command({"CLUSTER", "NODES"}).str};
   for (std::string line; std::getline(lines, line);) {
      std::istringstream fields{line};
      node_line n;
      std::string addr, skip;
      fields >> n.id >> addr >> n.flags >> n.master >> skip >> skip >> skip >> skip;
      for (std::string range; fields >> range;)
         n.slots.push_back(range);
      if (!n.id.empty())
         nodes.push_back(std::move(n));
   }
   return nodes;
}

// "5", "0-5460"; not "[5->-id]" (a migration in progress).
bool covers(std::string const& range, std::uint16_t slot)
{
   if (range.empty() || range.front() == '[')
      return false;
   auto const dash = range.find('-');
   auto const first = std::stoi(range.substr(0, dash));
   auto const last = dash == std::string::npos ? first : std::stoi(range.substr(dash + 1));
   return first <= slot && slot <= last;
}

}  // namespace

bool cluster_view::is_master(test::redis_server const& s)
{
   return s.running() && has(test::info_section(s, "replication"), "role:master");
}

std::string cluster_view::id(test::redis_server const& s) const
{
   return s.text({"CLUSTER", "MYID"});
}

test::redis_server& cluster_view::by_id(std::string const& node_id) const
{
   for (auto* s : servers_)
      if (s->running() && id(*s) == node_id)
         return *s;
   throw std::runtime_error("no live server has the node id " + node_id);
}

test::redis_server& cluster_view::owner(std::uint16_t slot) const
{
   for (auto* s : servers_) {
      if (!is_master(*s))
         continue;
      for (auto const& n : cluster_nodes(*s))
         if (has(n.flags, "master") && !has(n.flags, "fail"))
            for (auto const& range : n.slots)
               if (covers(range, slot))
                  return by_id(n.id);
   }
   throw std::runtime_error("no live master owns slot " + std::to_string(slot));
}

test::redis_server& cluster_view::replica_of(test::redis_server const& master) const
{
   auto const master_id = id(master);
   for (auto const& n : cluster_nodes(master))
      if (n.master == master_id && has(n.flags, "slave") && !has(n.flags, "fail"))
         return by_id(n.id);
   throw std::runtime_error("the master on port " + std::to_string(master.port()) +
                            " has no live replica");
}

std::vector<std::string> cluster_view::live_urls() const
{
   std::vector<std::string> urls;
   for (auto* s : servers_)
      if (is_master(*s))
         urls.push_back(s->url());
   return urls;
}

bool cluster_view::settled() const
{
   for (auto* s : servers_) {
      if (!s->running())
         return false;
      if (!has(s->text({"CLUSTER", "INFO"}), "cluster_state:ok"))
         return false;
      for (auto const& n : cluster_nodes(*s))
         if (has(n.flags, "fail"))
            return false;
      auto const repl = test::info_section(*s, "replication");
      if (has(repl, "role:slave") && !has(repl, "master_link_status:up"))
         return false;
   }
   return true;
}

bool cluster_view::settle(std::chrono::milliseconds timeout) const
{
   return test::wait_until([this] { return settled(); }, timeout);
}

}  // namespace locksmith::bench
