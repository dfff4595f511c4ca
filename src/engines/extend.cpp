// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "engines/extend.hpp"
#include "engines/spawn.hpp"

#include "protocol/kind_calls.hpp"
#include "protocol/fanout.hpp"
#include "protocol/verdicts.hpp"

#include "sansio/validate.hpp"
#include "sansio/validity.hpp"

namespace locksmith::detail {
namespace asio = boost::asio;

asio::awaitable<error_code> extend_lease(client_context& ctx, std::shared_ptr<lease_state> st,
                                         std::chrono::milliseconds ttl, report* diag)
{
   using clock = lease_state::clock;
   if (auto ec = validate_ttl(ttl))
      co_return ec;
   if (auto ec = validate_drift(ttl, st ? st->drift : std::nullopt))
      co_return ec;
   if (!st || st->st != lease_state::status::held)
      co_return error::not_held;
   if (ctx.stopped)
      co_return asio::error::operation_aborted;
   auto const t0 = clock::now();
   auto const call =
      extend_call(st->kind, ctx.cfg.prefix, st->name, st->token, ttl, ctx.nodes.size());
   auto [ec, r] = co_await async_fanout(ctx.ex, ctx.nodes, call, ctx.cfg.node_timeout, use_tuple);
   describe(r, ctx.nodes, diag);
   ctx.tel.votes("extend", st->name, r, ctx.nodes);
   if (ec)
      co_return ec;
   co_return settle_extension(*st, r, t0, ttl);
}

error_code settle_extension(lease_state& st, fanout_result const& r,
                            lease_state::clock::time_point t0, std::chrono::milliseconds ttl)
{
   if (r.decision != outcome::won)
      return ownership_result(r);
   auto const now = lease_state::clock::now();
   // A quorum that answers after the old validity ended cannot be trusted: others may have
   // taken the lock on nodes that restarted in between.
   if (now >= st.valid_until)
      return error::lease_expired;
   auto const until = valid_until(t0, now, ttl, st.drift.value_or(default_drift(ttl)));
   if (!until)
      return error::validity_expired;
   st.valid_until = *until;
   st.renewed_at = t0;
   st.ttl = ttl;
   return {};
}

}  // namespace locksmith::detail
