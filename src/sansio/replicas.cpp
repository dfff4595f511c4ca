// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "sansio/replicas.hpp"
#include "sansio/unfenced_reply.hpp"

#include <algorithm>
#include <charconv>

namespace locksmith::detail {

std::chrono::milliseconds effective_replica_timeout(config const& cfg) noexcept
{
   return cfg.replica_timeout.value_or(
      std::max(cfg.node_timeout / 2, std::chrono::milliseconds{1}));
}

bool waits_for_replicas(script const& code) noexcept
{
   return code.role == script_role::acquire || code.role == script_role::extend;
}

boost::redis::generic_response first_error_wins(boost::redis::resp3::tree const& replies,
                                                std::size_t skip)
{
   using boost::redis::resp3::type;
   boost::redis::generic_response out;
   std::size_t command = 0;  // the command whose reply the node is part of, from 1
   for (auto const& n : replies) {
      if (n.depth == 0)
         ++command;
      if (n.data_type == type::simple_error || n.data_type == type::blob_error) {
         out = boost::redis::adapter::error{n.data_type, n.value};
         return out;
      }
      if (command > skip)
         out.value().push_back(n);
   }
   return out;
}

std::optional<std::int64_t> take_wait_reply(boost::redis::generic_response& r)
{
   if (r.has_error() || r.value().size() < 2)
      return std::nullopt;
   auto& nodes = r.value();
   auto const& last = nodes.back();
   std::int64_t n = 0;
   auto const* first = last.value.data();
   auto const* end = first + last.value.size();
   auto const [p, ec] = std::from_chars(first, end, n);
   if (last.depth != 0 || last.data_type != boost::redis::resp3::type::number ||
       ec != std::errc{} || p != end || n < 0)
      return std::nullopt;
   nodes.pop_back();
   return n;
}

bool granted(script const& code, boost::redis::generic_response const& r)
{
   if (code.role == script_role::acquire) {
      acquire_reply a;
      return !parse_acquire(code, r, a) && a.acquired;
   }
   // A lease kind's extend script renews one lease and answers one integer.
   if (!code.batched) {
      ownership own{};
      return !parse_ownership(r, own) && own == ownership::done;
   }
   // An extension of any number of leases (the watchdog's batches): one that it renewed wrote.
   if (r.has_error() || r.value().empty())
      return false;
   std::vector<ownership> owns;
   return !parse_ownerships(r, r.value().front().aggregate_size, owns) &&
          std::find(owns.begin(), owns.end(), ownership::done) != owns.end();
}

std::string replicas_message(std::int64_t acked, unsigned wanted, std::chrono::milliseconds timeout)
{
   return "WAIT: " + std::to_string(acked) + " of " + std::to_string(wanted) +
          " replicas acknowledged within " + std::to_string(timeout.count()) + " ms";
}

}  // namespace locksmith::detail
