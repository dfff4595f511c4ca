// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The watchdog: renews the held leases of a client before they expire, and declares a lease
// lost, from this process's own steady clock, before its validity runs out. A frozen or
// partitioned Redis cannot answer, so the loss never waits for one. Its schedule is a pure
// function (sansio/watchdog_schedule.hpp); this is the part that carries it out.
//
// One queue and one timer serve every lease of the client, ordered by when each is due: no
// coroutine and no timer per lease. The leases that fall due together (within batch_window) are
// renewed together, with one extend script call per node for up to max_batch of them (on a Redis
// Cluster, of one slot: a call's keys must share it), and each
// is settled on its own quorum once every node has answered or timed out. One such call is in
// flight at a time: what falls due meanwhile goes in the next. Only the leases of the kinds whose
// extend script is the lock's are batched (kind_calls.hpp, renewed_in_batches); a permit, a
// reader or a reentrant hold is renewed on its own, by extend_lease, as its holder would, and
// settled and scheduled as a batch's lease is.
#ifndef LOCKSMITH_SRC_WATCHDOG_HPP
#define LOCKSMITH_SRC_WATCHDOG_HPP

#include "engines/client_context.hpp"
#include "engines/lease_state.hpp"

#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <vector>

namespace locksmith::detail {

class watchdog {
public:
   using clock = lease_state::clock;

   /// A lease due within this much of another is renewed with it, that much early at most.
   static constexpr std::chrono::milliseconds batch_window{5};
   /// The most leases in one script call (its run blocks the server: about 1 µs per lease).
   static constexpr std::size_t max_batch = 512;

   explicit watchdog(client_context& ctx);
   ~watchdog();
   watchdog(watchdog const&) = delete;
   watchdog& operator=(watchdog const&) = delete;

   /// Keeps the held lease from now on: renews it every ttl/3 if `st.renew`, else only frees its
   /// name in this process once it expires (later if it is extended meanwhile).
   void keep(lease_state& st);

   /// Stops keeping the lease (it ended, or is being destroyed). A renewal in flight still
   /// completes, and finds it ended.
   void forget(lease_state& st) noexcept;

   /// Stops keeping every lease (the client stops): their keys expire by their TTL.
   void stop() noexcept;

   /// Leases waiting in the queue (not those whose renewal is in flight).
   std::size_t queued() const noexcept { return queue_.size(); }

private:
   void schedule(lease_state& st, clock::time_point at);
   void arm();
   void on_timer();
   /// Whether a renewed lease is to be renewed now. If not, it is lost (ended here) or waits
   /// until `wake`.
   bool due(lease_state& st, clock::time_point now, clock::time_point& wake);
   void renew_next();
   void renew(std::vector<std::shared_ptr<lease_state>> batch);
   void settle(std::vector<std::shared_ptr<lease_state>> const& batch,
               std::vector<node_reply> const& replies, clock::time_point t0);
   void renew_alone(std::shared_ptr<lease_state> st);
   // After a renewal that ended in `ec` (validity `before` it): lost, or scheduled again.
   void after_renewal(lease_state& st, error_code ec, clock::time_point before);

   client_context& ctx_;
   boost::asio::steady_timer timer_;
   clock::time_point armed_for_ = clock::time_point::max();
   std::multimap<clock::time_point, lease_state*> queue_;
   std::vector<std::shared_ptr<lease_state>> due_;  // due, waiting for the call in flight
   bool renewing_ = false;                          // a renewal call is in flight
   // Handlers (the timer's, the renewals') hold this weakly: after the watchdog is gone, they
   // find it expired and touch nothing.
   std::shared_ptr<watchdog*> alive_ = std::make_shared<watchdog*>(this);
};

}  // namespace locksmith::detail

#endif
