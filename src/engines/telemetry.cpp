// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "engines/telemetry.hpp"

#include "engines/lease_state.hpp"
#include "sansio/metrics.hpp"

#include <algorithm>

namespace locksmith::detail {
namespace {

double seconds(std::chrono::steady_clock::duration d)
{
   return std::chrono::duration<double>(d).count();
}

long long ms(std::chrono::steady_clock::duration d)
{
   return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

std::string why(node_result const& n)
{
   if (!n.reply.server_message.empty())
      return n.reply.server_message;
   return n.reply.ec ? n.reply.ec.message() : std::string{"no answer in time"};
}

}  // namespace

telemetry::telemetry()
    : m_{empty_metrics()}
{}

void telemetry::configure(config const& cfg)
{
   log_ = log_sink{cfg};
}

void telemetry::lock_done(error_code ec, clock::duration waited)
{
   std::lock_guard const counting{counting_};
   if (!ec) {
      ++m_.acquisitions;
      m_.wait.record(seconds(waited));
      return;
   }
   auto it = std::find_if(m_.failures.begin(), m_.failures.end(),
                          [&](error_count const& f) { return f.ec == ec; });
   if (it == m_.failures.end())
      it = m_.failures.insert(m_.failures.end(), error_count{ec, error_label(ec), 0});
   ++it->count;
}

void telemetry::votes(std::string_view op, std::string_view name, fanout_result const& r,
                      std::vector<std::shared_ptr<node>> const& nodes)
{
   auto const n = std::min(r.nodes.size(), nodes.size());
   if (op == "acquire") {
      std::lock_guard const counting{counting_};
      m_.votes.resize(std::max(m_.votes.size(), n));
      for (std::size_t i = 0; i < n; ++i) {
         auto const v = r.nodes[i].v;
         auto& c = m_.votes[i];
         ++(v == vote::yes ? c.yes : v == vote::no ? c.no : v == vote::failed ? c.failed : c.none);
      }
   }
   failing_.resize(std::max(failing_.size(), n));
   for (std::size_t i = 0; i < n; ++i) {
      auto const& node_r = r.nodes[i];
      if (node_r.v == vote::yes || node_r.v == vote::no) {
         if (failing_[i])
            log_(log_level::info, [&] { return nodes[i]->name() + ": answers again"; });
         failing_[i] = false;
      } else if (node_r.v == vote::failed && r.decision == outcome::won) {
         // Only the first failure of a run is a warning: a node that is down fails every call.
         auto const level = failing_[i] ? log_level::debug : log_level::warning;
         failing_[i] = true;
         log_(level, [&] {
            return nodes[i]->name() + ": failed in " + std::string{op} + " of '" +
                   std::string{name} + "' (" + why(node_r) + "); the quorum held";
         });
      }
   }
}

void telemetry::woke(next_step step, bool by_event) noexcept
{
   std::lock_guard const counting{counting_};
   count_wake(m_.wakes, step, by_event);
}

void telemetry::retry_lost() noexcept
{
   std::lock_guard const counting{counting_};
   ++m_.retries_lost;
}

void telemetry::renewal(lease_state const& st, error_code ec, clock::time_point before)
{
   auto const now = clock::now();
   {
      std::lock_guard const counting{counting_};
      if (!ec) {
         ++m_.renewals;
         m_.renewal_slack.record(seconds(before - now));
         return;
      }
      ++m_.renewal_failures;
   }
   bool const final = ec == error::not_owner || ec == error::lease_expired;
   log_(log_level::warning, [&] {
      return "renewal of '" + st.name + "' failed: " + ec.message() +
             (final ? std::string{"; the key is gone or taken"}
                    : "; retrying, " + std::to_string(ms(before - now)) + " ms of validity left");
   });
}

void telemetry::lease_ended(lease_state const& st, bool lost)
{
   auto const held = clock::now() - st.acquired_at;
   {
      std::lock_guard const counting{counting_};
      m_.hold.record(seconds(held));
      if (!lost)
         return;
      ++m_.leases_lost;
   }
   log_(log_level::error, [&] {
      return "lease '" + st.name + "' (fencing token " + std::to_string(st.fence) +
             ") lost after " + std::to_string(ms(held)) + " ms: its holder must stop";
   });
}

metrics_snapshot telemetry::snapshot(std::vector<std::shared_ptr<node>> const& nodes) const
{
   auto m = [&] {
      std::lock_guard const counting{counting_};
      return m_;
   }();
   m.votes.resize(nodes.size());
   for (std::size_t i = 0; i < nodes.size(); ++i)
      m.votes[i].node = nodes[i]->name();
   return m;
}

}  // namespace locksmith::detail
