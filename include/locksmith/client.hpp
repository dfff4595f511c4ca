// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_CLIENT_HPP
#define LOCKSMITH_CLIENT_HPP

#include <locksmith/config.hpp>
#include <locksmith/detail/acquire_kind.hpp>
#include <locksmith/detail/lease_kind.hpp>
#include <locksmith/error.hpp>
#include <locksmith/inspection.hpp>
#include <locksmith/lease.hpp>
#include <locksmith/lock_options.hpp>
#include <locksmith/metrics.hpp>
#include <locksmith/report.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/deferred.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace locksmith {

/// Hands out leases on named locks kept in one Redis node, or in N independent nodes (RedLock):
/// the lock (`async_lock`, `async_try_lock`, fair with lock_options::fair), a semaphore's permits
/// (`async_acquire_permit`, semaphore.hpp), a read-write lock's sides (`async_read_lock`,
/// `async_write_lock`, rw_lock.hpp) and a reentrant lock's holds (`async_lock_reentrant`,
/// reentrant_lock.hpp). Every acquisition takes `(name, [the kind's own arguments],
/// lock_options, token)` and completes with a @ref lease, released by `async_unlock` and
/// extended by `async_extend` whatever its kind.
///
/// Construction starts two connections per node on the executor (one for the scripts, one for
/// the release messages; a Cluster node has such a pair per master), and does not wait for them.
/// The operations run on that executor, and never block.
///
/// Threads: the client's executor must run one handler at a time: an io_context run by one
/// thread, or a strand (`asio::make_strand(ioc)`) when several threads run the io_context; all
/// of the client's own work runs there. Its asynchronous operations (these, async_with_lock and
/// `lease::async_wait_lost`) may be started from any thread, concurrently, as Asio's composed
/// operations: each starts on the client's executor (at once when the caller already runs there,
/// else after at most one post), and completes on the completion handler's associated executor (a
/// coroutine's strand, say), or on the client's executor for a handler without one. The
/// caller's cancellation slot is emitted where the caller runs, and is relayed to the client's
/// executor. A lease and a @ref report given to an operation belong to its caller meanwhile:
/// not two operations at once on one lease. metrics(), get_executor() and config_error() may be
/// called from any thread. cancel() and the destructor touch the client's state directly: call
/// them on the client's executor, or while no thread runs it. test/integration/test_threads.cpp
/// drives one client from coroutines on several strands of a 4-thread io_context.
///
/// A malformed @ref config (no nodes, a bad URL) does not throw: every operation then completes
/// with error::invalid_argument, and `config_error()` says so up front.
class client {
public:
   /// The executor on which every operation runs and completes.
   using executor_type = boost::asio::any_io_executor;

   /// Starts the connections to `cfg.nodes` on `ex`, without waiting for them. A malformed config
   /// does not throw: see config_error().
   client(executor_type ex, config cfg);
   client(client const&) = delete;
   client& operator=(client const&) = delete;
   /// Takes over the other's connections and operations; the other is left empty.
   client(client&&) noexcept;
   /// Destroys this client (as the destructor does), then takes over the other's.
   client& operator=(client&&) noexcept;

   /// Closes the connections at once, like cancel(): operations in flight complete with errors,
   /// and releases that the client still owns are abandoned (their keys then expire by their
   /// TTL). Call async_close first to finish them. Leases still held stay in Redis until their
   /// TTL runs out. Does no I/O and never blocks. Threads: on the client's executor, or while no
   /// thread runs it.
   ~client();

   /// The executor given at construction, on which the client's work runs.
   executor_type get_executor() const noexcept;

   /// error::invalid_argument when the config was rejected, else success.
   error_code config_error() const noexcept;

   /// Closes the connections: operations in flight complete with errors, later ones fail.
   /// Threads: as the destructor.
   void cancel();

   /// The client's counters and histograms since it was made: acquisitions, failures by error,
   /// wait, hold and renewal slack times, lost leases, what woke waiters, and each node's votes.
   /// `to_prometheus(c.metrics())` renders them for a scrape. No I/O; a copy of a few hundred
   /// bytes. Threads: from any thread; the copy takes a lock that the client's executor holds
   /// only while it counts.
   metrics_snapshot metrics() const;

   /// Closes the client gracefully: no new lock or extend is accepted (they complete with
   /// operation_aborted), waiting lock operations end with operation_aborted, then it waits until
   /// the operations in flight have completed and every release that the client owns is done,
   /// for at most `config::close_timeout`, and closes the connections.
   ///
   /// The client owns every release it sends (an unlock's, and a failed or cancelled attempt's,
   /// which may have set keys) until each node has answered, or until the key has expired by
   /// itself: a release that a node did not answer (timed out, or not sent while its connection
   /// was down) is sent again, with a growing pause, while the key may still be there. A failing
   /// `async_lock` completes after its cleanup has been queued on every connection; the client,
   /// not the caller, then sees it through. Unlocks are still accepted while closing.
   ///
   /// Signature: `void(error_code)`. Success when everything owned was done; timed_out when the
   /// bound passed first (what was left is abandoned, and those keys expire by their TTL).
   /// Cancellation: none; the wait is bounded by config::close_timeout.
   template <
      boost::asio::completion_token_for<void(error_code)> CompletionToken = boost::asio::deferred_t>
   auto async_close(CompletionToken&& token = {})
   {
      return boost::asio::async_initiate<CompletionToken, void(error_code)>(close_initiation{this},
                                                                            token);
   }

   /// Takes the lock `name`, waiting up to `opts.wait` for its holder to let it go.
   ///
   /// Signature: `void(error_code, lease)`. Errors:
   /// @li error::invalid_argument: bad name or options (see lock_options), or a bad config.
   /// @li error::wait_timeout: still held by another owner when the wait ran out.
   /// @li error::lock_taken: held by another owner, and `opts.wait` is zero.
   /// @li error::quorum_unreachable: too few nodes answered (down, hung, refused) until the wait
   ///     ran out; a node that is down fails within the wait, it never hangs. A Redis Cluster
   ///     whose slot for the name is in motion (a reshard under way: TRYAGAIN, ASK, MOVED that
   ///     outlast a call) is waited out the same way, within the wait.
   /// @li error::unexpected_reply: a node answered with an error, such as WRONGTYPE when the key
   ///     holds another type.
   /// @li error::validity_expired: the quorum came too late to leave any validity.
   /// @li error::auth_failed, error::tls_failed: nodes that refuse our credentials or rights, or
   ///     fail the TLS handshake, leave no quorum; reported at once, not at the end of the wait.
   /// @li error::not_enough_replicas: with config::wait_replicas set, the key reached too few
   ///     replicas on enough nodes to sink the quorum until the wait ran out (it was released).
   ///
   /// `opts.diag`, when set, receives how each node answered in the last attempt (see @ref report).
   ///
   /// Coroutines of one process that ask for the same name queue in FIFO order in memory, and only
   /// the first one talks to Redis. The last attempt starts before the wait ends, so the
   /// operation may end up to one node timeout after it.
   ///
   /// Cancellation: terminal, partial and total are all accepted, and all do the same: the wait
   /// stops at once and the operation completes with `asio::error::operation_aborted`. Cancelled
   /// while queued in this process or sleeping between attempts, it leaves nothing behind.
   /// Cancelled while an attempt is in flight, it may leave two effects, both bounded: the key
   /// the attempt may have set is released (queued on every connection before completion, behind
   /// the attempt, and owned by the client until each node answered or the key expired, see
   /// async_close), and the name's fence may have advanced (a later fencing token skips a value;
   /// it never goes back). Asio defines total cancellation as one without side effects: only the
   /// first case meets that, so treat a total cancellation like a partial one.
   template <boost::asio::completion_token_for<void(error_code, lease)> CompletionToken =
                boost::asio::deferred_t>
   auto async_lock(std::string_view name, lock_options const& opts = {},
                   CompletionToken&& token = {})
   {
      return detail::initiate_acquire(*this, token, {}, name, opts);
   }

   /// Takes the lock `name` if it is free, without waiting (`opts.wait` is ignored).
   ///
   /// Signature: `void(error_code, lease)`. Errors as `async_lock`, but error::lock_taken where
   /// it would wait. A name that this process already holds or waits for answers lock_taken
   /// with no round trip. It makes one attempt: when too few nodes answer within their node
   /// timeout (a Redis Cluster whose slot for the name stays in motion that long counts as one
   /// that did not answer), it fails with error::quorum_unreachable, which means "try again
   /// later", never with unexpected_reply. Cancellation: as `async_lock`.
   template <boost::asio::completion_token_for<void(error_code, lease)> CompletionToken =
                boost::asio::deferred_t>
   auto async_try_lock(std::string_view name, lock_options opts = {}, CompletionToken&& token = {})
   {
      opts.wait = std::min(
         opts.wait, std::chrono::milliseconds{0});  // does not wait; a negative wait stays invalid
      return async_lock(name, opts, std::forward<CompletionToken>(token));
   }

   /// Takes the read-write lock `name` shared, as a reader: any number of readers hold it at
   /// once, never with a writer, and none enters while a writer holds it or waits for it
   /// (writer preference; rw_lock.hpp says how it works).
   ///
   /// Signature: `void(error_code, lease)`. Errors as `async_lock`: lock_taken or wait_timeout
   /// while a writer holds or waits. `opts.wait` zero makes one attempt; lock_options::fair and
   /// `fence = false` are error::invalid_argument. Coroutines of one process that ask for the
   /// same name contend one at a time (FIFO), readers and writers alike; a reader that got the
   /// lock lets the next one contend at once. Cancellation: as `async_lock`.
   template <boost::asio::completion_token_for<void(error_code, lease)> CompletionToken =
                boost::asio::deferred_t>
   auto async_read_lock(std::string_view name, lock_options const& opts = {},
                        CompletionToken&& token = {})
   {
      return detail::initiate_acquire(*this, token, {detail::lease_kind::of::read}, name, opts);
   }

   /// Takes the read-write lock `name` exclusive, as the writer: no reader and no other writer
   /// holds it meanwhile (rw_lock.hpp). Use it, not `async_lock`, for every writer of a
   /// read-write lock: a plain lock of the name does not look at readers.
   ///
   /// Signature, errors and cancellation: as `async_read_lock`.
   template <boost::asio::completion_token_for<void(error_code, lease)> CompletionToken =
                boost::asio::deferred_t>
   auto async_write_lock(std::string_view name, lock_options const& opts = {},
                         CompletionToken&& token = {})
   {
      return detail::initiate_acquire(*this, token, {detail::lease_kind::of::write}, name, opts);
   }

   /// Takes one of the `permits` permits of the semaphore `name`: at most `permits` leases on
   /// the name are held at once, across every process (semaphore.hpp). Every caller must pass
   /// the same `permits` for a name.
   ///
   /// Signature: `void(error_code, lease)`. Errors as `async_read_lock` (lock_taken or
   /// wait_timeout when no permit came free), and error::invalid_argument for zero permits.
   /// Cancellation: as `async_lock`.
   template <boost::asio::completion_token_for<void(error_code, lease)> CompletionToken =
                boost::asio::deferred_t>
   auto async_acquire_permit(std::string_view name, std::size_t permits,
                             lock_options const& opts = {}, CompletionToken&& token = {})
   {
      return detail::initiate_acquire(*this, token, {detail::lease_kind::of::permit, permits}, name,
                                      opts);
   }

   /// Takes the lock `name` for `owner`, reentrantly: while `owner` holds it, taking it again
   /// for the same `owner` (from this process or another) succeeds at once and adds one hold,
   /// each a lease of its own; the lock is free again when every hold has been released or has
   /// expired (reentrant_lock.hpp). The owner is an id that the caller chooses (a request id, a
   /// job id), never a thread.
   ///
   /// Signature: `void(error_code, lease)`. Errors as `async_read_lock`, and
   /// error::invalid_argument for an empty owner. A hold taken again while this process holds
   /// the name for the same owner does not queue behind the process's other contenders (they
   /// wait for the owner). Cancellation: as `async_lock`.
   template <boost::asio::completion_token_for<void(error_code, lease)> CompletionToken =
                boost::asio::deferred_t>
   auto async_lock_reentrant(std::string_view name, std::string_view owner,
                             lock_options const& opts = {}, CompletionToken&& token = {})
   {
      return detail::initiate_acquire(
         *this, token, {detail::lease_kind::of::reentrant, 1, std::string{owner}}, name, opts);
   }

   /// Releases the lease: deletes the key only where it still holds this lease's token, and
   /// publishes the release so that waiters wake.
   ///
   /// When another coroutine of this client waits for the same name, the lease is handed to it
   /// instead: the unlock completes at once with success and no I/O, and the waiter takes the
   /// key over (a new token and a higher fencing token) in one round trip; should it fail to, it
   /// releases the key. Never twice in a row: a lease that was handed over is released in Redis,
   /// so that other processes get their turn.
   ///
   /// Signature: `void(error_code)`. Errors:
   /// @li error::not_held: the lease is empty, or was already released.
   /// @li error::lease_lost: the watchdog had found the lease lost; what was still ours in Redis
   ///     is released now.
   /// @li error::lease_expired: the key had expired (nobody held it).
   /// @li error::not_owner: the key had expired and someone else holds the lock now.
   /// @li error::quorum_unreachable, error::unexpected_reply: as `async_lock`. After
   ///     quorum_unreachable the release goes on, owned by the client: it is sent again to each
   ///     node that did not answer (a silent or restarting node) until it lands or the key has
   ///     expired (see async_close).
   ///
   /// A routine operation delays an unlock; it does not fail it. A Redis Cluster node that answers
   /// that the name's slot is in motion (`TRYAGAIN`, `ASK` or `MOVED` for longer than the node
   /// timeout, or a script stopped by a migrating slot) or that its cluster is electing a master
   /// (`CLUSTERDOWN`) has not voted yet, and neither has a Redis Cluster or Sentinel node whose
   /// master does not answer (killed, paused by a manual failover: a replica may be being
   /// promoted): the release is sent again until that node answers otherwise, or the key has
   /// expired, and the unlock completes then with the verdict (the time a reshard takes to move
   /// the slot's keys, or a failover's detection and election). Each call of that wait waits up
   /// to 2 s for its answer (never past the key's expiry), not the node timeout: a new master
   /// busy with its old one's resync may answer late, and a lost answer would leave the verdict
   /// unknown (quorum_unreachable). A cluster that stays down (a
   /// master lost with no replica to promote), or a Sentinel's master that stays dead, is waited
   /// for until the key has expired, and the unlock completes then with quorum_unreachable. A
   /// plain node (`redis://`) has no failover to wait for, but may be restarting: a failure of
   /// its connection (refused, reset, timed out) is waited out for 2 s (never less than the node
   /// timeout, never past the key's expiry), and after that it fails the unlock, as an outage.
   /// Meanwhile each of its calls waits up to 500 ms (or the node timeout, if longer) for its
   /// answer, so that a server stalled for a moment (a fork for `BGSAVE`, a `CLIENT PAUSE`) is
   /// heard when it wakes; after a longer stall the verdict is unknown (quorum_unreachable). A
   /// server that loads its data after a restart (`LOADING`) is waited for while it says so, up
   /// to the key's expiry, its connection's failures included until 2 s after it said so last.
   /// A plain node whose server restarted since the lock set its key there, and sits out its
   /// restart quarantine (config::restart_quarantine), lost the key with its memory: while the
   /// lease is valid, its "no key" (or another owner's key) counts as released there, on at most
   /// N - quorum nodes, since no client counts its votes before its quarantine has passed. The
   /// other nodes' releases must make up the rest (a fleet restarted whole within one
   /// quarantine leaves none, and the unlock reports the lease lost). Each of these waits
   /// matters only when the verdict hangs on that node: an unlock completes as soon as a quorum
   /// released.
   /// Cancel it to stop waiting: the release goes on, as below.
   ///
   /// error::lease_expired and error::not_owner mean that the lease ran out before this unlock:
   /// for a while, perhaps from well before the call, another holder may have held the name while
   /// you believed you did. Your critical section may have overlapped with someone else's; only a
   /// fencing token checked by the resource can have stopped that (docs/guarantees.md).
   /// Never error::not_enough_replicas: a release does not wait for replicas (a release that a
   /// failover forgets leaves a key that expires by its TTL).
   ///
   /// The lease is not held any more once this is called, whatever the outcome.
   /// Cancellation: terminal, partial and total are accepted and do the same: the operation
   /// completes at once with operation_aborted, and the release, already sent, goes on, owned by
   /// the client (see async_close). That is a side effect, so no cancellation type undoes an
   /// unlock: a cancelled unlock is a partial cancellation whatever was asked.
   template <
      boost::asio::completion_token_for<void(error_code)> CompletionToken = boost::asio::deferred_t>
   auto async_unlock(lease& l, CompletionToken&& token = {})
   {
      return boost::asio::async_initiate<CompletionToken, void(error_code)>(unlock_initiation{this},
                                                                            token, &l, nullptr);
   }

   /// As above; `diag` receives how each node answered (see @ref report). It must outlive the
   /// operation. (An acquisition takes its report in lock_options::diag instead.)
   template <
      boost::asio::completion_token_for<void(error_code)> CompletionToken = boost::asio::deferred_t>
   auto async_unlock(lease& l, report& diag, CompletionToken&& token = {})
   {
      return boost::asio::async_initiate<CompletionToken, void(error_code)>(unlock_initiation{this},
                                                                            token, &l, &diag);
   }

   /// Sets the lease's TTL back to `ttl`, where the key still holds its token, and moves
   /// `valid_until()` to (start of this call) + ttl - drift. The name's fence key is kept alive
   /// with it (ttl + 60 s), so that the next fencing token follows this lease's however long it
   /// is held, and does not rest on the server's clock alone.
   ///
   /// Signature: `void(error_code)`. Errors as `async_unlock`, plus error::invalid_argument for a
   /// TTL out of range; error::lease_expired also when the quorum answered after the old
   /// validity had ended; error::not_enough_replicas when config::wait_replicas is set and the
   /// extension reached too few replicas on enough nodes to sink the quorum. After a failed
   /// extension `valid_until()` is not moved.
   /// Cancellation: terminal, partial and total are accepted and do the same: the operation
   /// completes at once with operation_aborted. The extension, if already sent, may still take
   /// effect in Redis (the key then lives longer than `valid_until()` says, which errs on the
   /// safe side), but `valid_until()` is not moved; the lease stays held and renewed as before.
   template <
      boost::asio::completion_token_for<void(error_code)> CompletionToken = boost::asio::deferred_t>
   auto async_extend(lease& l, std::chrono::milliseconds ttl, CompletionToken&& token = {})
   {
      return boost::asio::async_initiate<CompletionToken, void(error_code)>(
         extend_initiation{this}, token, &l, ttl, nullptr);
   }

   /// As above; `diag` receives how each node answered (see @ref report). It must outlive the
   /// operation. (An acquisition takes its report in lock_options::diag instead.)
   template <
      boost::asio::completion_token_for<void(error_code)> CompletionToken = boost::asio::deferred_t>
   auto async_extend(lease& l, std::chrono::milliseconds ttl, report& diag,
                     CompletionToken&& token = {})
   {
      return boost::asio::async_initiate<CompletionToken, void(error_code)>(extend_initiation{this},
                                                                            token, &l, ttl, &diag);
   }

   /// Reads what the servers know of the name, whatever primitive holds it: on each node its
   /// kind, holders (their time left and owner label), the last fencing token, a fair lock's queued
   /// waiters and a read-write lock's waiting writer; and the quorum's view: whether a quorum of
   /// nodes shows a holder, and which. One read-only script call per node, all at once, each
   /// within config::node_timeout; it writes nothing, votes on nothing, and does not wait for
   /// the name. What it reports may have changed by the time it completes: it is for operators
   /// and diagnostics (`locksmith status`), never a way to decide whether to lock.
   ///
   /// Signature: `void(error_code, inspection)`. Errors:
   /// @li error::invalid_argument: an empty name, or one longer than max_key_size, or a bad
   ///     config; the inspection is then empty.
   /// @li error::quorum_unreachable: fewer than a quorum of nodes answered; the inspection holds
   ///     what those that answered said, and each other node's error.
   /// @li error::auth_failed, error::tls_failed, error::unexpected_reply: as quorum_unreachable,
   ///     when a node that did not answer failed so (refused credentials or rights, a failed TLS
   ///     handshake, an error reply such as NOPERM for a script command).
   ///
   /// Cancellation: terminal, partial and total are accepted and do the same: the operation
   /// completes at once with operation_aborted. It has no side effect to undo: the reads in
   /// flight are ignored.
   template <boost::asio::completion_token_for<void(error_code, inspection)> CompletionToken =
                boost::asio::deferred_t>
   auto async_inspect(std::string_view name, CompletionToken&& token = {})
   {
      return boost::asio::async_initiate<CompletionToken, void(error_code, inspection)>(
         inspect_initiation{this}, token, std::string{name});
   }

private:
   using done_handler = boost::asio::any_completion_handler<void(error_code)>;

   // `on_client`: the handler runs on the client's executor (detail::runs_on).
   void async_unlock_impl(lease* l, report* diag, done_handler h, bool on_client);
   void async_extend_impl(lease* l, std::chrono::milliseconds ttl, report* diag, done_handler h);
   void async_close_impl(done_handler h);
   using inspect_handler = boost::asio::any_completion_handler<void(error_code, inspection)>;
   void async_inspect_impl(std::string name, inspect_handler h);

   // Named initiations expose get_executor(), so that asio::cancel_after works. Each hands its
   // arguments and the type-erased handler to the member that starts the operation, which
   // moves to the client's executor first (src/engines/spawn.hpp, enter).
   template <class Erased, auto Start>
   struct initiation {
      client* self;
      using executor_type = client::executor_type;
      executor_type get_executor() const noexcept { return self->get_executor(); }
      template <class Handler, class... Args>
      void operator()(Handler&& h, Args&&... args) const
      {
         (self->*Start)(std::forward<Args>(args)..., Erased{std::forward<Handler>(h)});
      }
   };
   struct unlock_initiation {
      client* self;
      using executor_type = client::executor_type;
      executor_type get_executor() const noexcept { return self->get_executor(); }
      template <class Handler>
      void operator()(Handler&& h, lease* l, report* diag) const
      {
         bool const on_client = detail::runs_on(h, self->get_executor());
         self->async_unlock_impl(l, diag, done_handler{std::forward<Handler>(h)}, on_client);
      }
   };
   using extend_initiation = initiation<done_handler, &client::async_extend_impl>;
   using close_initiation = initiation<done_handler, &client::async_close_impl>;
   using inspect_initiation = initiation<inspect_handler, &client::async_inspect_impl>;

   friend std::shared_ptr<detail::client_core> const& detail::core_of(client const&) noexcept;
   std::shared_ptr<detail::client_core> core_;
};

}  // namespace locksmith

#endif
