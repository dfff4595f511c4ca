// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// What a client tells about itself: its log lines (config::logger) and its metrics
// (client::metrics). The parts of the client call one hook each where something happens; the
// hooks count and log here, so that those parts stay about locks. Lives on the client's
// executor; only snapshot() may be called from any thread (client::metrics), so a mutex guards
// the counters, which the client's executor alone writes.
#ifndef LOCKSMITH_SRC_TELEMETRY_HPP
#define LOCKSMITH_SRC_TELEMETRY_HPP

#include "protocol/fanout.hpp"
#include "transport/log.hpp"

#include "sansio/retry.hpp"
#include <locksmith/metrics.hpp>

#include <chrono>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

namespace locksmith::detail {

struct lease_state;

class telemetry {
public:
   using clock = std::chrono::steady_clock;

   telemetry();

   /// Reads config::logger and config::min_log_level.
   void configure(config const& cfg);

   log_sink const& log() const noexcept { return log_; }

   /// A lock operation ended: granted after `waited`, or with `ec`.
   void lock_done(error_code ec, clock::duration waited);

   /// A fan-out of `op` ("acquire", "extend", "release") on `name` was decided: counts the
   /// acquire votes by node, and logs a node that failed while the quorum held (once, until it
   /// answers again).
   void votes(std::string_view op, std::string_view name, fanout_result const& r,
              std::vector<std::shared_ptr<node>> const& nodes);

   /// A waiter woke after `step` (count_wake).
   void woke(next_step step, bool by_event) noexcept;

   /// An attempt after a lock call's first lost (metrics_snapshot::retries_lost).
   void retry_lost() noexcept;

   /// A watchdog renewal of `st` ended with `ec`; `before` was its validity's end before it.
   void renewal(lease_state const& st, error_code ec, clock::time_point before);

   /// `st` ended (released, dropped or lost): its hold time, and a loss.
   void lease_ended(lease_state const& st, bool lost);

   /// The counters, with the nodes' names. From any thread.
   metrics_snapshot snapshot(std::vector<std::shared_ptr<node>> const& nodes) const;

private:
   log_sink log_;
   mutable std::mutex counting_;  // guards m_ (uncontended but for a snapshot)
   metrics_snapshot m_;
   std::vector<bool> failing_;  // by node: a failure was logged, and it has not answered since
};

}  // namespace locksmith::detail

#endif
