// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_LEASE_HPP
#define LOCKSMITH_LEASE_HPP

#include <locksmith/error.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/system_executor.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/post.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace locksmith {

namespace detail {
struct lease_state;
}

/// A held lock: the proof that this process owns the name until `valid_until()`.
///
/// Move-only. Obtained from `client::async_lock` or `client::async_try_lock` (a lock or a fair
/// lock), `async_acquire_permit` (a semaphore's permit), `async_read_lock` and
/// `async_write_lock` (a read-write lock's sides), `async_lock_reentrant` (one hold of a
/// reentrant lock), or lent to the body of `async_with_lock`; given back with
/// `client::async_unlock`. Unless `lock_options::renew` is false, a watchdog renews it in the
/// background, and declares it lost (`lost()`, `async_wait_lost`) before its validity runs out
/// when renewal fails. The destructor does no I/O: it stops renewal, and a lease dropped without
/// unlock stays in Redis until its TTL runs out (other processes wait that long), while waiters
/// of this process may take it over at once.
///
/// Threads: a lease may be moved to, used and destroyed on any thread, one at a time. name(),
/// token() and fencing_token() never change. valid_until(), held() and lost() read what the
/// client's executor changes while the lease is held (renewal, loss): read them there (the body
/// of `async_with_lock` runs there), or await `async_wait_lost` from anywhere. The destructor
/// ends the lease on the client's executor: at once when it runs there, else posted there.
class lease {
public:
   /// The clock of `valid_until()`: this process's monotonic clock, never the wall clock.
   using clock = std::chrono::steady_clock;
   /// The client's executor type.
   using executor_type = boost::asio::any_io_executor;

   /// An empty lease, which holds nothing.
   lease() noexcept;
   /// Takes the other's lock; the other is left empty.
   lease(lease&&) noexcept;
   /// Drops this lease (as the destructor does), then takes the other's lock.
   lease& operator=(lease&&) noexcept;
   ~lease();

   /// The lock's name, as given to `async_lock`.
   std::string const& name() const noexcept;

   /// This owner's token: 32 lower-case hex characters (128 random bits), the lock key's value;
   /// with a label (lock_options::owner) the value is the token, '@' and the label.
   std::string const& token() const noexcept;

   /// The fencing token: strictly greater than that of every earlier acquisition of the same
   /// name on the node. Pass it to the resource you protect, and have it refuse writes with a
   /// smaller one: a paused holder whose lease ran out is then stopped by the resource, not by
   /// the lock.
   ///
   /// With RedLock it is the maximum over the nodes that voted for this lease. That is not
   /// consensus-safe (Kleppmann, "How to do distributed locking"): nodes mint fences
   /// independently, and after a node restarts empty, or when clocks jump, a later holder's
   /// quorum may report a smaller maximum than an earlier holder's. Where fencing must be
   /// airtight, take the token from a consensus system, or from the protected store itself.
   ///
   /// 0 when there is none: for an empty lease, and for a lock taken with
   /// `lock_options::fence = false` (see has_fencing_token()). A minted fence is never 0.
   std::uint64_t fencing_token() const noexcept;

   /// False when the lease has no fencing token: it is empty, or its lock was taken with
   /// `lock_options::fence = false`. Then fencing_token() is 0, which no resource should accept.
   bool has_fencing_token() const noexcept { return fencing_token() != 0; }

   /// Until when the lock may be relied on, on this process's steady clock: the attempt's start +
   /// ttl - drift. After that, Redis may have let someone else in.
   clock::time_point valid_until() const noexcept;

   /// True while the lease was acquired and not released, dropped or lost, and `valid_until()`
   /// has not passed.
   bool held() const noexcept;

   /// True once the watchdog found the lease lost: renewal failed until one node timeout before
   /// `valid_until()`, the key was found gone or held by another token, or `max_hold` was
   /// reached. Decided on this process's steady clock, without waiting for Redis.
   bool lost() const noexcept;

   /// The client's executor (empty for an empty lease).
   executor_type get_executor() const noexcept;

   /// Waits until the lease is lost.
   ///
   /// Signature: `void(error_code)`. Success when the lease was lost (at once if it already
   /// was); asio::error::operation_aborted when it was released or dropped instead, or on
   /// cancellation; error::not_held for an empty lease. Completes before `valid_until()`, on the
   /// handler's associated executor (the lease's, for a handler without one); may be started
   /// from any thread (see client). Cancellation: terminal, partial and total; each completes with
   /// operation_aborted and leaves the lease as it is.
   template <
      boost::asio::completion_token_for<void(error_code)> CompletionToken = boost::asio::deferred_t>
   auto async_wait_lost(CompletionToken&& token = {})
   {
      return boost::asio::async_initiate<CompletionToken, void(error_code)>(
         wait_lost_initiation{this}, token);
   }

   /// @private
   explicit lease(std::shared_ptr<detail::lease_state> st) noexcept;
   /// @private
   std::shared_ptr<detail::lease_state> const& state() const noexcept { return st_; }

private:
   using wait_handler = boost::asio::any_completion_handler<void(error_code)>;
   struct wait_lost_initiation {
      lease* self;
      using executor_type = lease::executor_type;
      executor_type get_executor() const noexcept { return self->get_executor(); }
      template <class Handler>
      void operator()(Handler&& h) const
      {
         // An empty lease has no executor of ours: complete on the handler's own (the system
         // executor for a handler without one), never inline.
         if (!self->st_) {
            auto ex = boost::asio::get_associated_executor(h, boost::asio::system_executor{});
            boost::asio::post(
               ex, boost::asio::append(std::forward<Handler>(h), error_code{error::not_held}));
            return;
         }
         self->async_wait_lost_impl(wait_handler{std::forward<Handler>(h)});
      }
   };
   void async_wait_lost_impl(wait_handler h);
   void drop() noexcept;
   std::shared_ptr<detail::lease_state> st_;
};

}  // namespace locksmith

#endif
