// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The acquisition: one lock attempt, whole, from lock() to the granted lease. It refuses what
// nobody could hold, queues the attempt behind the process's other contenders for the name
// (local_queue), lets the acquire engine try and wait (acquire_engine.hpp), and hands the won
// lease to the watchdog (watchdog.hpp). A plain lock that no coroutine of this process contends
// for sends its first try without a coroutine; only a try that loses goes on as one. The owner
// of the parts (core/client_core.hpp) reaches it through lock(), and it reaches the owner
// through lease_owner. Everything here lives on the client's executor.
#ifndef LOCKSMITH_SRC_ACQUISITION_HPP
#define LOCKSMITH_SRC_ACQUISITION_HPP

#include "engines/acquire_engine.hpp"
#include "engines/client_context.hpp"
#include "engines/lease_owner.hpp"
#include "engines/local_queue.hpp"
#include "engines/reentrant_holds.hpp"
#include "engines/release_listener.hpp"
#include "engines/watchdog.hpp"

#include <locksmith/detail/lease_kind.hpp>
#include <locksmith/lease.hpp>
#include <locksmith/lock_options.hpp>
#include <locksmith/report.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace locksmith::detail {

class acquisition {
public:
   using clock = std::chrono::steady_clock;

   struct lock_result {
      error_code ec;
      lease held;
   };
   using lock_handler = boost::asio::any_completion_handler<void(error_code, lease)>;

   /// Over the parts of `owner`, which outlive it. Every operation holds the owner (its
   /// shared_from_this) until it completes, and grants its leases in the owner's name.
   acquisition(client_context& ctx, local_queue& queue, release_listener& listener, watchdog& dog,
               lease_owner& owner);

   /// Validates, queues behind the process's other contenders for the name, then acquires, and
   /// completes `h` on its associated executor, never inside this call. `kind`: what the lease
   /// holds; a shared kind's holder leaves the queue at once. A plain lock that no coroutine of
   /// this process has sends its first try at once, without a coroutine; only if that try loses
   /// does the acquisition go on as one. Cancellation (any type) through `h`'s slot:
   /// operation_aborted, and whatever a try may have taken is released. `on_client`: `h`'s
   /// associated executor is the client's (runs_on), so that a completion there calls it at once.
   void lock(std::string name, lock_options opts, bool try_only, report* diag, lease_kind kind,
             lock_handler h, bool on_client = false);

private:
   // The acquisition as a coroutine: from the start, or (`first`) after a first try that lock()
   // sent and that lost, once the options were validated and the name's slot taken for it.
   // `kind` by reference: it lives in the caller's frame, and no lease_kind temporary stands in
   // a co_await expression (GCC 12 destroys such a temporary twice).
   boost::asio::awaitable<lock_result> take(std::string name, lock_options opts, bool try_only,
                                            report* diag, lease_kind const& kind,
                                            std::shared_ptr<acquire_engine::attempt> first);
   // take(), and the acquisition's outcome and time counted from `start`.
   boost::asio::awaitable<lock_result> timed_take(std::string name, lock_options opts,
                                                  bool try_only, report* diag, lease_kind kind,
                                                  clock::time_point start,
                                                  std::shared_ptr<acquire_engine::attempt> first);
   // Why an acquisition of `name` is refused before any try (a bad config or options, a kind
   // that nobody could hold), or success.
   error_code refusal(std::string const& name, lock_options const& opts,
                      lease_kind const& kind) const;
   struct first_try;
   // lock()'s first try came back: completes, or goes on with take().
   void after_first_try(std::unique_ptr<first_try> op);
   // Counts the outcome, then completes `h` (at once, `on_client`).
   void finish_lock(lock_handler h, clock::time_point start, lock_result r, bool on_client);
   lease grant(std::string const& name, acquire_engine::won w, lock_options const& opts,
               lease_kind const& kind);

   client_context& ctx_;
   local_queue& queue_;
   watchdog& dog_;
   lease_owner& owner_;
   acquire_engine acquire_;
   reentrant_holds reentrant_;  // the reentrant holds of this process, by name
};

}  // namespace locksmith::detail

#endif
