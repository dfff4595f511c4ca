// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "sansio/metrics.hpp"

#include <boost/asio/error.hpp>

#include <charconv>
#include <string_view>

namespace locksmith {
namespace {

// Durations and counts as Prometheus reads them: the shortest text that reads back the same.
std::string number(double v)
{
   char buf[32];
   auto const r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general);
   return std::string(buf, r.ptr);
}

// A label value, escaped as the text format requires.
std::string quoted(std::string_view v)
{
   std::string out = "\"";
   for (char c : v) {
      if (c == '\\' || c == '"')
         out += '\\';
      out += c == '\n' ? std::string_view{"\\n"} : std::string_view{&c, 1};
   }
   return out + '"';
}

class exposition {
public:
   void family(std::string_view name, std::string_view type, std::string_view help)
   {
      name_ = "locksmith_";
      name_ += name;
      text_ += "# HELP " + name_ + ' ' + std::string{help} + "\n# TYPE " + name_ + ' ' +
               std::string{type} + '\n';
   }

   // A sample of the current family: `labels` is empty or `{a="x",b="y"}`.
   void sample(std::string_view suffix, std::string const& labels, std::string const& value)
   {
      text_ += name_ + std::string{suffix} + labels + ' ' + value + '\n';
   }

   void counter(std::string_view name, std::string_view help, std::uint64_t v)
   {
      family(name, "counter", help);
      sample("", "", std::to_string(v));
   }

   void histogram(std::string_view name, std::string_view help, locksmith::histogram const& h)
   {
      family(name, "histogram", help);
      std::uint64_t below = 0;
      for (std::size_t i = 0; i <= h.bounds.size(); ++i) {
         below += i < h.counts.size() ? h.counts[i] : 0;
         auto const le = i < h.bounds.size() ? number(h.bounds[i]) : "+Inf";
         sample("_bucket", "{le=" + quoted(le) + '}', std::to_string(below));
      }
      sample("_sum", "", number(h.sum));
      sample("_count", "", std::to_string(h.count));
   }

   std::string take() { return std::move(text_); }

private:
   std::string text_;
   std::string name_;
};

}  // namespace

std::string to_prometheus(metrics_snapshot const& m)
{
   exposition out;
   out.counter("acquisitions_total", "Leases granted.", m.acquisitions);
   out.family("lock_failures_total", "counter", "Lock operations that granted no lease, by error.");
   for (auto const& f : m.failures)
      out.sample("", "{error=" + quoted(f.name) + '}', std::to_string(f.count));
   out.histogram("lock_wait_seconds", "From the lock call to the grant.", m.wait);
   out.histogram("lease_hold_seconds", "From the grant to the lease's end.", m.hold);
   out.histogram("renewal_slack_seconds", "Validity left when a renewal succeeded.",
                 m.renewal_slack);
   out.counter("renewals_total", "Watchdog renewals that succeeded.", m.renewals);
   out.counter("renewal_failures_total", "Watchdog renewals that failed.", m.renewal_failures);
   out.counter("leases_lost_total", "Leases that the watchdog declared lost.", m.leases_lost);
   out.family("wakes_total", "counter", "What ended a waiter's sleep between two attempts.");
   auto const wake = [&](char const* source, std::uint64_t n) {
      out.sample("", "{source=" + quoted(source) + '}', std::to_string(n));
   };
   wake("message", m.wakes.message);
   wake("ttl_timer", m.wakes.ttl_timer);
   wake("spin", m.wakes.spin);
   wake("lots", m.wakes.lots);
   wake("subscription", m.wakes.subscription);
   out.counter("retries_lost_total",
               "Attempts after a lock call's first that lost (a waiter woken in vain).",
               m.retries_lost);
   out.family("node_votes_total", "counter", "Acquire votes by node: yes, no, failed, none.");
   for (auto const& v : m.votes) {
      std::pair<char const*, std::uint64_t> const counts[] = {
         {"yes", v.yes}, {"no", v.no}, {"failed", v.failed}, {"none", v.none}};
      for (auto const& [vote, n] : counts)
         out.sample("", "{node=" + quoted(v.node) + ",vote=" + quoted(vote) + '}',
                    std::to_string(n));
   }
   return out.take();
}

namespace detail {

metrics_snapshot empty_metrics()
{
   metrics_snapshot m;
   m.wait = histogram{.bounds = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                 0.1, 0.25, 0.5, 1, 2.5, 5, 10}};
   m.hold = histogram{.bounds = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300}};
   m.renewal_slack =
      histogram{.bounds = {0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 60}};
   return m;
}

std::string error_label(error_code ec)
{
   static constexpr std::string_view names[] = {"",
                                                "invalid_argument",
                                                "lock_taken",
                                                "wait_timeout",
                                                "quorum_unreachable",
                                                "lease_lost",
                                                "not_owner",
                                                "lease_expired",
                                                "not_held",
                                                "unexpected_reply",
                                                "validity_expired",
                                                "auth_failed",
                                                "tls_failed",
                                                "not_enough_replicas"};
   // One name per enumerator: a new one fails here until it is named (it was labelled
   // "locksmith:13" once, when not_enough_replicas came without a name).
   static_assert(std::size(names) == static_cast<std::size_t>(error::not_enough_replicas) + 1);
   auto const v = ec.value();
   if (ec.category() == error_category() && v > 0 && v < static_cast<int>(std::size(names)))
      return std::string{names[v]};
   if (ec == boost::asio::error::operation_aborted)
      return "operation_aborted";
   if (ec == boost::asio::error::timed_out)
      return "timed_out";
   return std::string{ec.category().name()} + ':' + std::to_string(v);
}

void count_wake(wake_counts& w, next_step step, bool by_event) noexcept
{
   if (step == next_step::retry_now || (step == next_step::sleep_until_release && by_event))
      ++w.message;
   else if (step == next_step::sleep_until_release)
      ++w.ttl_timer;
   else if (step == next_step::sleep_spin)
      ++w.spin;
   else if (step == next_step::draw_lots)
      ++w.lots;
   else if (step == next_step::await_subscription)
      ++w.subscription;
}

}  // namespace detail
}  // namespace locksmith
