// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include <locksmith/detail/replicas.hpp>

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
   return &code == &acquire_script() || &code == &extend_script();
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
   if (&code == &acquire_script()) {
      acquire_reply a;
      return !parse_acquire(r, a) && a.acquired;
   }
   auto own = ownership::expired;
   return !parse_ownership(r, own) && own == ownership::done;
}

std::string replicas_message(std::int64_t acked, unsigned wanted, std::chrono::milliseconds timeout)
{
   return "WAIT: " + std::to_string(acked) + " of " + std::to_string(wanted) +
          " replicas acknowledged within " + std::to_string(timeout.count()) + " ms";
}

}  // namespace locksmith::detail
