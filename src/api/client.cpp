// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include <locksmith/client.hpp>
#include <locksmith/detail/acquire_kind.hpp>

#include "core/client_core.hpp"
#include "engines/spawn.hpp"
#include "protocol/inspect.hpp"
#include "sansio/validate.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

namespace locksmith {
namespace asio = boost::asio;

using detail::code_of;
using detail::enter;
using detail::spawn;

client::client(executor_type ex, config cfg)
    : core_{std::make_shared<detail::client_core>(std::move(ex), std::move(cfg))}
{
   core_->start();
}

client::client(client&&) noexcept = default;
client& client::operator=(client&& other) noexcept
{
   if (this != &other) {
      if (core_)
         core_->stop();
      core_ = std::move(other.core_);
   }
   return *this;
}

client::~client()
{
   if (core_) {
      core_->stop();
      core_->detach_logger();
   }
}

client::executor_type client::get_executor() const noexcept
{
   return core_->executor();
}

error_code client::config_error() const noexcept
{
   return core_->config_error();
}

void client::cancel()
{
   core_->stop();
}

metrics_snapshot client::metrics() const
{
   return core_->metrics();
}

std::shared_ptr<detail::client_core> const& detail::core_of(client const& c) noexcept
{
   return c.core_;
}

// Every operation may start on any thread, and moves to the client's executor first: through
// enter() (engines/spawn.hpp), or through spawn(), whose co_spawn dispatches there and relays the
// caller's cancellation there likewise.
void client::async_unlock_impl(lease* l, report* diag, done_handler h, bool on_client)
{
   if (diag)
      *diag = report{};
   enter(core_->executor(), std::move(h),
         [core = core_, st = l->state(), diag, on_client](done_handler h) {
            core->unlock(st, diag, std::move(h), on_client);
         });
}

void client::async_extend_impl(lease* l, std::chrono::milliseconds ttl, report* diag,
                               done_handler h)
{
   if (diag)
      *diag = report{};
   spawn(core_->executor(), core_->extend(l->state(), ttl, diag), std::move(h),
         [core = core_](done_handler h, std::exception_ptr e, error_code ec) {
            std::move(h)(e ? code_of(e) : ec);
         });
}

void client::async_close_impl(done_handler h)
{
   spawn(core_->executor(), core_->close(core_->settings().close_timeout), std::move(h),
         [core = core_](done_handler h, std::exception_ptr e, error_code ec) {
            std::move(h)(e ? code_of(e) : ec);
         });
}

void client::async_inspect_impl(std::string name, inspect_handler h)
{
   // On the client's executor, like every operation (enter, engines/spawn.hpp): the nodes and the
   // stopped flag live there.
   enter(core_->executor(), std::move(h),
         [core = core_, name = std::move(name)](inspect_handler h) mutable {
            error_code refused = core->config_error();
            if (!refused)
               refused = detail::validate_name(name);
            if (!refused && core->stopped())
               refused = asio::error::operation_aborted;
            if (!refused)
               return detail::start_inspect(core->executor(), core->nodes(),
                                            core->settings().prefix, std::move(name),
                                            core->settings().node_timeout, std::move(h));
            // Never complete inside the initiating call: post, then the handler's executor.
            asio::post(core->executor(), [h = std::move(h), refused]() mutable {
               auto ex = asio::get_associated_executor(h);
               asio::dispatch(ex, [h = std::move(h), refused]() mutable {
                  std::move(h)(refused, inspection{});
               });
            });
         });
}

}  // namespace locksmith
