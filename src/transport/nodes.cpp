// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "transport/nodes.hpp"

#include "transport/cluster_node.hpp"
#include "transport/redis_node.hpp"
#include "transport/sentinel_node.hpp"

#include "sansio/url.hpp"

namespace locksmith::detail {

std::vector<std::shared_ptr<node>> make_nodes(boost::asio::any_io_executor ex, config const& cfg)
{
   // The single nodes and Sentinel groups share one view of the fleet, for the restart
   // quarantine. A cluster node never reports a first contact to it, so a fleet with a cluster
   // in it is never taken for fresh: its nodes sit out the quarantine as before.
   auto const fleet = std::make_shared<node_fleet>(cfg.nodes.size());
   std::vector<std::shared_ptr<node>> nodes;
   for (auto const& url : cfg.nodes) {
      auto u = *parse_url(url);
      if (u.cluster())
         nodes.push_back(std::make_shared<cluster_node>(ex, std::move(u), cfg));
      else if (u.sentinel())
         nodes.push_back(
            std::make_shared<sentinel_node>(ex, std::move(u), cfg, fleet, nodes.size()));
      else
         nodes.push_back(std::make_shared<redis_node>(ex, std::move(u), cfg, fleet, nodes.size()));
   }
   return nodes;
}

}  // namespace locksmith::detail
