// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The work that a client owns until it is done: operations in flight, and releases that must
// reach every node (a failed or cancelled attempt's, an unlock's) even after their caller moved
// on. A graceful close waits for it. Everything here lives on the client's executor.
#ifndef LOCKSMITH_SRC_CLEANUP_HPP
#define LOCKSMITH_SRC_CLEANUP_HPP

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

namespace locksmith::detail {

class owned_work {
public:
   void add() noexcept { ++pending_; }
   void done() noexcept;
   std::size_t pending() const noexcept { return pending_; }

   /// Once closed, no release is sent again after a failure: close() bounds the wait.
   bool closed() const noexcept { return closed_; }
   void close() noexcept;

   /// Waits until nothing is pending any more (a graceful close), or until `bound` has passed:
   /// true when nothing is. The caller keeps this alive until it completes.
   boost::asio::awaitable<bool> idle_within(boost::asio::any_io_executor ex,
                                            std::chrono::milliseconds bound);

   /// A retry's timer, cancelled by close() so that nothing waits on it, and by hurry().
   void track(std::weak_ptr<boost::asio::steady_timer> t);

   /// Ends every retry's pause now, so that each release waiting for its next try is sent at
   /// once: a node found a new route (a failover's new master), where a release that waits out
   /// its pause (up to 1 s) would keep the key, and the name, from everyone meanwhile.
   void hurry() noexcept;

private:
   void forget_idle_waiter(boost::asio::steady_timer* t) noexcept;

   std::size_t pending_ = 0;
   bool closed_ = false;
   // Timers that done() cancels when nothing is pending any more: locals of idle_within's
   // frames, which remove them before they end.
   std::vector<boost::asio::steady_timer*> idle_waiters_;
   std::vector<std::weak_ptr<boost::asio::steady_timer>> retry_timers_;
};

/// Counts one operation in flight for as long as it lives (or until a move leaves it empty), so
/// that a callback can carry it as well as a coroutine's frame.
class work_guard {
public:
   explicit work_guard(std::shared_ptr<owned_work> w) noexcept
       : w_{std::move(w)}
   {
      w_->add();
   }
   ~work_guard()
   {
      if (w_)
         w_->done();
   }
   work_guard(work_guard&&) noexcept = default;
   work_guard& operator=(work_guard&&) = delete;

private:
   std::shared_ptr<owned_work> w_;
};

/// How long a release is owned: until each node answered, or the key cannot be there any more.
struct persistence {
   std::chrono::steady_clock::time_point until;  // the key expires by itself by then
   std::shared_ptr<owned_work> work;
   std::vector<bool> nodes{};  // the nodes that may hold the key, by index (empty: every node)
   // The call goes to `nodes` alone: the others, where the key cannot be (another owner held it
   // when it was taken), are not asked and count as no, as a release finding it gone would.
   bool only_there = false;
   // A node that answers that it is busy with a routine operation (asio::error::try_again: a
   // cluster's slot in motion or a failover's election, or a server that loads its data, whose
   // connection failures count as the same for restart_patience after it said so last), or whose
   // master does not answer while the node follows failovers (node::follows_failovers: a Redis
   // Cluster or a Sentinel, which may be promoting a replica), has not voted yet: the call is
   // sent again as a failed one is, and the node votes with its first answer of another kind, or
   // with that failure once `until` has passed or the work is closed. A failure that waiting does
   // not mend (a TLS refusal) is a vote at once. For an unlock that its caller waits for, so that
   // a slot move or a failover is waited out instead of reported as an outage. On a node that
   // follows failovers each call then waits patient_timeout for its answer, so that a slow new
   // master's is not lost.
   bool wait_out_operations = false;
   // With wait_out_operations, a plain node (one that does not follow failovers) whose call
   // failed on its connection (refused, reset, timed out) may be restarting: that failure is held
   // back as a routine operation's until then (restart_patience after the unlock began), and is
   // the vote only after. A restart takes a moment; an outage lasts.
   std::chrono::steady_clock::time_point restart_until{};
   // By node index: the node's run (node::run) when the lease's acquire set the key there, or
   // node::unknown_run. A release that finds the key gone from a later run may count as landed
   // (fanout.cpp, lost_with_a_restart). Empty: nowhere known, or a lease no longer valid.
   std::vector<unsigned> key_runs{};

   bool covers(std::size_t node) const noexcept
   {
      return nodes.empty() || (node < nodes.size() && nodes[node]);
   }
};

/// The pause before sending a release again after its `attempt`-th failure, and that call's
/// timeout: doubling from the node timeout, the pause up to 1 s and the timeout up to 2 s, so
/// that a release meets a node back from a reconnect without hammering a frozen one.
struct retry_plan {
   std::chrono::milliseconds pause;
   std::chrono::milliseconds timeout;
};
retry_plan release_retry(std::chrono::milliseconds node_timeout, unsigned attempt) noexcept;

/// How long an unlock waits for a plain node whose connection fails, as a restart's
/// (persistence::restart_until): release_retry's longest timeout (2 s), and never under the node
/// timeout. A server restarted by its supervisor answers again well within it.
std::chrono::milliseconds restart_patience(std::chrono::milliseconds node_timeout) noexcept;

/// How long a release call to a plain node waits for its answer while the unlock waits out a
/// restart (persistence::restart_until, which it passes by a node timeout at most): a quarter of
/// restart_patience (500 ms), never under the node timeout. A server that stalls for a moment (a
/// fork for BGSAVE, a CLIENT PAUSE) runs the release when it wakes, and a reply lost to the node
/// timeout could have said so; the next call, finding no key, cannot tell that from a lease that
/// ran out. A quarter, so that a request lost with its connection is still sent again within the
/// patience.
std::chrono::milliseconds stall_patience(std::chrono::milliseconds node_timeout) noexcept;

/// The timeout of a release call that waits out a failover (persistence::wait_out_operations, on
/// a node that follows failovers): release_retry's longest (2 s), or the `left` of the key's life
/// when that is shorter, and never under the node timeout. A master that was just promoted may
/// answer late (busy with its old master's resync, or with a MIGRATE batch); a reply lost to the
/// node timeout there could have said that the release landed, and the next call, finding no key,
/// cannot tell that from a lease that ran out. A call in flight to a master that dies is moved to
/// the new one when the node learns of it (cluster_node's reroute, sentinel_node's reconnect);
/// only a master that hangs with no failover holds a call this long.
std::chrono::milliseconds patient_timeout(std::chrono::milliseconds node_timeout,
                                          std::chrono::steady_clock::duration left) noexcept;

}  // namespace locksmith::detail

#endif
