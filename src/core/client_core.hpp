// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The client's owner of parts (DESIGN.md, "Components"): the nodes and what they share
// (client_context), the in-process queue (local_queue), the release listener, the watchdog of its
// leases (watchdog.hpp), and the acquisition engine (acquisition.hpp), which owns every lock
// attempt whole. Everything here lives on the client's executor.
#ifndef LOCKSMITH_SRC_CLIENT_CORE_HPP
#define LOCKSMITH_SRC_CLIENT_CORE_HPP

#include "engines/acquisition.hpp"
#include "engines/client_context.hpp"
#include "engines/lease_owner.hpp"
#include "engines/lease_state.hpp"
#include "engines/local_queue.hpp"
#include "transport/node.hpp"
#include "engines/release_listener.hpp"
#include "engines/watchdog.hpp"

#include <locksmith/config.hpp>
#include <locksmith/lease.hpp>
#include <locksmith/lock_options.hpp>
#include <locksmith/metrics.hpp>
#include <locksmith/report.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/deferred.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace locksmith::detail {

class client_core final : public lease_owner {
public:
   using clock = std::chrono::steady_clock;

   client_core(boost::asio::any_io_executor ex, config cfg);
   /// Over the given nodes instead of Redis connections made from cfg.nodes (unit tests' fake
   /// nodes); cfg.nodes is ignored.
   client_core(boost::asio::any_io_executor ex, config cfg,
               std::vector<std::shared_ptr<node>> nodes);

   /// Connects the nodes (unless the config is invalid).
   void start();
   /// Ends every operation and stops the nodes at once; owned releases are abandoned.
   void stop();
   /// From now on, config::logger is never called: its owner may be gone (the client's
   /// destructor). The connections that end after the client log into nothing.
   void detach_logger() noexcept;
   /// Ends new and waiting operations, waits until the operations in flight and the owned
   /// releases are done, at most `bound`, then stops: success, or timed_out at the bound.
   boost::asio::awaitable<error_code> close(std::chrono::milliseconds bound);

   using lock_result = acquisition::lock_result;
   using lock_handler = acquisition::lock_handler;
   /// Validates, queues behind the process's other contenders for the name, then acquires, and
   /// completes `h` on its associated executor, never inside this call (acquisition::lock).
   void lock(std::string name, lock_options opts, bool try_only, report* diag, lease_kind kind,
             lock_handler h, bool on_client = false)
   {
      acquisition_.lock(std::move(name), std::move(opts), try_only, diag, std::move(kind),
                        std::move(h), on_client);
   }
   /// The same for any completion token.
   template <class CompletionToken = boost::asio::deferred_t>
   auto async_lock(std::string name, lock_options opts, bool try_only, report* diag,
                   lease_kind kind, CompletionToken&& token = {})
   {
      return boost::asio::async_initiate<CompletionToken, void(error_code, lease)>(
         [this](auto h, std::string n, lock_options o, bool t, report* d, lease_kind k) {
            lock(std::move(n), std::move(o), t, d, std::move(k), lock_handler{std::move(h)});
         },
         token, std::move(name), std::move(opts), try_only, diag, std::move(kind));
   }
   /// The lock's, as a coroutine (the unit tests await it).
   boost::asio::awaitable<lock_result> lock(std::string name, lock_options opts, bool try_only,
                                            report* diag);
   /// Hands the lease to a local waiter, or releases it (release_lease). Completes `h` on its
   /// associated executor, never inside this call; cancellation as release_lease.
   void unlock(std::shared_ptr<lease_state> st, report* diag,
               boost::asio::any_completion_handler<void(error_code)> h, bool on_client = false);
   /// The same for any completion token (the unit tests await it).
   template <class CompletionToken = boost::asio::deferred_t>
   auto async_unlock(std::shared_ptr<lease_state> st, report* diag, CompletionToken&& token = {})
   {
      return boost::asio::async_initiate<CompletionToken, void(error_code)>(
         [this](auto h, std::shared_ptr<lease_state> s, report* d) {
            unlock(std::move(s), d, std::move(h));
         },
         token, std::move(st), diag);
   }
   boost::asio::awaitable<error_code> extend(std::shared_ptr<lease_state> st,
                                             std::chrono::milliseconds ttl, report* diag);

   /// The counters so far (client::metrics), and where the parts report to them.
   metrics_snapshot metrics() const;
   telemetry& observer() noexcept override { return ctx_.tel; }

   /// Passes the name to the next local waiter, or forgets it (and its release subscription).
   void leave_slot(std::string const& name) noexcept override;

   boost::asio::any_io_executor const& executor() const noexcept override { return ctx_.ex; }
   config const& settings() const noexcept { return ctx_.cfg; }
   error_code config_error() const noexcept { return ctx_.config_error; }
   bool stopped() const noexcept { return ctx_.stopped; }
   std::vector<std::shared_ptr<node>> const& nodes() const noexcept { return ctx_.nodes; }

private:
   release_listener::links listener_links();
   void halt();

   client_context ctx_;
   std::shared_ptr<log_function> logger_;  // config::logger, shared by every copy of the config
   release_listener listener_;
   local_queue queue_;
   watchdog dog_;
   acquisition acquisition_;
};

}  // namespace locksmith::detail

#endif
