// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// What a lease shares with the operations that act on it and with its watchdog. Everything
// here lives on the client's executor.
#ifndef LOCKSMITH_SRC_LEASE_STATE_HPP
#define LOCKSMITH_SRC_LEASE_STATE_HPP

#include <locksmith/detail/lease_kind.hpp>
#include <locksmith/lock_options.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace locksmith::detail {

class lease_owner;
class watchdog;

struct lease_state : std::enable_shared_from_this<lease_state> {
   using clock = std::chrono::steady_clock;
   enum class status { held, released, dropped, lost };

   lease_state(std::shared_ptr<lease_owner> const& owner, std::string name, std::string token,
               std::uint64_t fence, clock::time_point start, clock::time_point valid_until,
               lock_options const& opts);

   std::weak_ptr<lease_owner> core;  // the client that owns it (core/client_core.hpp)
   std::string name;
   std::string token;       // the stored value: the token, and '@' and the owner label if any
   std::string bare_token;  // lease::token() of a labelled lease; empty without a label
   std::uint64_t fence = 0;
   std::chrono::milliseconds ttl;
   std::optional<std::chrono::milliseconds> drift;
   clock::time_point acquired_at;  // start of the acquire attempt that won
   clock::time_point renewed_at;   // start of the last acquire or extend that succeeded
   clock::time_point valid_until;
   status st = status::held;
   // Set once end() is done, the only member that another thread may read: the lease's
   // destructor lets go of an ended state where it runs, and sends a held one's end to us.
   std::atomic<bool> ended{false};

   boost::asio::any_io_executor ex;  // the client's; never changes, so any thread may read it
   // Made by the first async_wait_lost (most leases never have one: a timer costs its service's
   // lookup and its cancel a lock of the reactor); never expires; cancelled when the lease ends.
   std::optional<boost::asio::steady_timer> lost_event;

   /// The lost_event, made if it was not: on the client's executor only.
   boost::asio::steady_timer& lost_timer();

   bool in_slot = true;  // holds the name's place in the in-process queue

   std::vector<bool> may_hold;  // by node index: the key may be there (may_hold_key of the acquire)
   std::vector<unsigned> key_runs;  // by node index: its run when the acquire set the key there
   // The token of the lease that a local unlock handed over and this one took over in its key
   // (local_queue::pass), if any: where that write was lost with a failed-over master, the new
   // one still holds the handed token, and only this lease's release can delete it.
   std::string took_over;

   lease_kind kind;  // which scripts renew and release it

   // The watchdog's part (watchdog.hpp): whether it renews the lease or only sees it expire,
   // where max_hold ends, the loss margin, whether the last renewal failed, and the lease's
   // place in its queue while it waits there.
   bool renew = true;
   clock::time_point cap = clock::time_point::max();
   std::chrono::milliseconds loss_margin{0};
   bool failing = false;
   watchdog* dog = nullptr;  // the watchdog whose queue holds the lease, if any
   std::multimap<clock::time_point, lease_state*>::iterator queued_at;

   ~lease_state();

   /// Ends the lease in this process (no I/O): stops renewal and wakes the loss waiters. Unless
   /// it is being released, it also frees the name for the next local waiter; an unlock does that
   /// once its release has been answered.
   void end(status s) noexcept;

   /// Frees the name for the next local waiter, once.
   void leave_slot() noexcept;
};

}  // namespace locksmith::detail

#endif
