// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_LOCK_OPTIONS_HPP
#define LOCKSMITH_LOCK_OPTIONS_HPP

#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace locksmith {

struct report;

/// How a waiter learns that it may try again.
namespace wait_strategy {

/// Retry after `interval` plus a uniformly random extra in [0, jitter]. This is what redis-py,
/// node-redlock and redsync do; it costs Redis one command per waiter per interval, and learns of a
/// release half an interval late on average. Kept for servers where pub/sub is disabled, and for
/// the benchmark's comparison.
struct spin {
   /// Pause between two tries. Default 100 ms, as redis-py's `sleep`.
   std::chrono::milliseconds interval{100};

   /// Upper bound of the random extra pause, which keeps waiters from retrying in lockstep.
   std::chrono::milliseconds jitter{100};
};

/// Sleep until the holder's release is published on the lock's channel (or, should that message be
/// lost, until the lock's TTL runs out). Costs no Redis command while waiting.
struct subscribe_t {
   /// All subscribe strategies are alike (the variant compares them).
   friend bool operator==(subscribe_t, subscribe_t) = default;
};

/// The subscribe strategy, to write `.strategy = wait_strategy::subscribe`.
inline constexpr subscribe_t subscribe{};

}  // namespace wait_strategy

/// A wait with no end: `.wait = locksmith::forever` waits until the lock is taken or the
/// operation is cancelled. A century, not `milliseconds::max()`, so that a deadline computed from
/// it stays clear of the clock's overflow; any longer wait is read as this one.
inline constexpr std::chrono::milliseconds forever = std::chrono::hours{24 * 365 * 100};

/// One of the wait strategies.
using wait_strategy_type = std::variant<wait_strategy::subscribe_t, wait_strategy::spin>;

/// The longest holder label accepted (lock_options::owner), in bytes.
inline constexpr std::size_t max_owner_size = 256;

/// A holder label (lock_options::owner): its bytes kept inside the options, not on the heap, so
/// that lock_options stays trivially destructible. GCC 12 destroys a braced temporary of a
/// co_await expression twice (`co_await c.async_lock(k, {.owner = label})`): a std::string in
/// it would be freed twice. Converts from a string, a string_view or a C string.
class owner_label {
public:
   /// No label.
   constexpr owner_label() noexcept = default;
   /// The bytes of `s`. A label longer than max_owner_size is kept as too long (fits() is
   /// false), and an acquisition refuses it with error::invalid_argument.
   constexpr owner_label(std::string_view s) noexcept
       : size_{s.size() > max_owner_size ? max_owner_size + 1 : s.size()}
   {
      for (std::size_t i = 0; i < s.size() && i < max_owner_size; ++i)
         bytes_[i] = s[i];
   }
   /// The bytes of `s`, as above.
   owner_label(std::string const& s) noexcept
       : owner_label(std::string_view{s})
   {}
   /// The bytes of the C string `s`, as above.
   constexpr owner_label(char const* s) noexcept
       : owner_label(std::string_view{s})
   {}

   /// The label's bytes; empty when there is none, or when it is too long.
   constexpr std::string_view view() const noexcept
   {
      return fits() ? std::string_view{bytes_.data(), size_} : std::string_view{};
   }
   /// True when there is no label.
   constexpr bool empty() const noexcept { return size_ == 0; }
   /// False when the label given was longer than max_owner_size.
   constexpr bool fits() const noexcept { return size_ <= max_owner_size; }

private:
   std::array<char, max_owner_size> bytes_{};
   std::size_t size_ = 0;
};

/// Options of one acquisition. A plain aggregate: write designated initializers.
///
/// @code
/// auto opts = locksmith::lock_options{.ttl = 30s, .wait = 5s};
/// @endcode
struct lock_options {
   /// Time to live of the key in Redis: how long the lock outlives a crashed holder.
   /// From 1 ms to @ref locksmith::max_ttl. Default 30 s, as Redisson's lock watchdog.
   std::chrono::milliseconds ttl = std::chrono::seconds{30};

   /// How long `async_lock` may wait for a holder to let go. Zero makes one attempt, like
   /// `async_try_lock`; @ref locksmith::forever (or longer) waits until the lock is taken or the
   /// operation cancelled. Must not be negative. Default 10 s.
   std::chrono::milliseconds wait = std::chrono::seconds{10};

   /// How a waiter learns that it may try again. Default: subscribe, which wakes a waiter
   /// about 100 µs after the release and costs Redis nothing while it waits.
   wait_strategy_type strategy = wait_strategy::subscribe;

   /// Allowance for clock drift between this process and Redis, taken off the validity.
   /// Default (empty): ttl / 100 + 2 ms, as the RedLock description and redsync use. Must be
   /// below the TTL, so a TTL of 2 ms or less needs an explicit, smaller drift.
   std::optional<std::chrono::milliseconds> drift = {};

   /// Renew the lease in the background while it is held: every ttl/3 its key is extended back
   /// to the full TTL. A failed renewal is retried every ttl/30 (5 to 100 ms) until one node
   /// timeout plus `loss_margin` before `valid_until()`; then, or at once when the key is found
   /// gone or taken, the lease is lost (see lease::lost()). A lost lease is not released behind
   /// the holder's back: the holder stops its work and calls unlock, which releases what is
   /// still ours and answers error::lease_lost. Default true, as Redisson's watchdog. With false,
   /// the lease simply expires.
   ///
   /// Renewal needs room. The validity ends at start + ttl - drift, the loss is declared one node
   /// timeout (config::node_timeout) plus `loss_margin` before that, and the first renewal, which
   /// starts at ttl/3, must be able to answer within one node timeout before the loss. So with
   /// renew, the options are error::invalid_argument, before any I/O, unless
   ///
   ///     ttl - ttl/3 - drift - loss_margin > 2 × node_timeout      (ttl/3 in whole ms)
   ///
   /// With the default 50 ms node timeout and drift and no margin, the shortest such TTL is
   /// 155 ms; a TTL of 1 s allows a margin of up to 554 ms. What the TTL has beyond the minimum is
   /// the time left to retry a failed renewal.
   bool renew = true;

   /// Stop renewing once the lease has been held this long, and report it lost. Empty: no
   /// cap, the default; given, it must be positive (else error::invalid_argument), and
   /// @ref locksmith::forever or longer is no cap either.
   std::optional<std::chrono::milliseconds> max_hold = {};

   /// Extra time, before the last moment the watchdog could wait, at which it gives a failing
   /// lease up: the time the holder needs to stop its work (a child process's grace period).
   /// Default zero: the holder learns of the loss one node timeout before `valid_until()`.
   std::chrono::milliseconds loss_margin{0};

   /// A fair lock (client::async_lock only; with any other kind of lease, invalid_argument):
   /// the waiters of every process queue in Redis in the order they arrive there, and a release
   /// hands the lock straight to the first of them (its key is set for that waiter by the
   /// release script) and wakes that waiter alone: no barging, no herd. A waiter keeps its place
   /// by trying again at least every 500 ms, whatever the strategy (a fair lock never spins);
   /// one that gives up leaves the queue, and one that dies loses its place after 2 s, which is
   /// how long it can hold the others up. Inside a process, the coroutines that wait for one
   /// name still queue in the process first, and a fair lease is never handed to one of them
   /// without going through Redis. Every contender of a name must agree on this option.
   /// Default false.
   bool fair = false;

   /// Mint a fencing token (lease::fencing_token()). With false the lock is taken by a plain
   /// `SET key token NX PX ttl` instead of the acquire script, which also keeps a fence key and
   /// reads the server's clock: about half the server's work of a lock cycle, for callers that
   /// never pass the fence on.
   /// The lease then has none (lease::has_fencing_token() is false, fencing_token() is 0).
   /// Everything else is as with a fence: release and renewal by the same scripts, waiting woken
   /// by the same release message, RedLock and Redis Cluster alike; fenced and unfenced leases of
   /// one name exclude each other, as they share the lock key (the fenced ones' tokens still rise
   /// among themselves). For client::async_lock and async_try_lock only: the fair lock, the
   /// semaphore, the read-write and the reentrant lock always mint one, and answer false with
   /// error::invalid_argument. Default true: a lease that can be fenced is the safe default, and
   /// the cost is the server's, not the caller's latency (one round trip either way).
   bool fence = true;

   /// Where to say how each node answered in the acquisition's last attempt (see @ref report),
   /// for callers who want to know why it failed. Reset when the operation starts; it must
   /// outlive the operation, which only writes it while it runs (never a lease's later renewals).
   /// Default none.
   report* diag = nullptr;

   /// A label for the holder, such as `host:pid`, that client::async_inspect and `locksmith
   /// status` show beside the lease's token, so that the answer to "who holds it" is a name.
   /// Bytes, at most max_owner_size (256), none of them an ASCII control character (status
   /// prints one holder per line); anything else is error::invalid_argument before any I/O. It is
   /// stored inside the value that the lease writes (the lock key's, a permit's, a reader's, a
   /// hold's or a fair waiter's place: the token, '@' and the label), so it costs no command, no
   /// script argument and no key, and goes with the lease's release or expiry; every kind of lease
   /// takes it. It only names the holder: it is not the reentrant lock's owner id
   /// (which decides who may re-enter), and that owner shows the label of its latest hold.
   /// lease::token() stays the token alone. Default empty: no label, nothing stored but the
   /// token.
   owner_label owner = {};
};

/// The longest lock name accepted, in bytes. Names are bytes; one may not begin with '}'.
inline constexpr std::size_t max_key_size = 1024;

/// The shortest TTL accepted.
inline constexpr std::chrono::milliseconds min_ttl{1};

/// The longest TTL accepted: one day. Longer jobs keep a shorter lease and renew it.
inline constexpr std::chrono::milliseconds max_ttl = std::chrono::hours{24};

}  // namespace locksmith

#endif
