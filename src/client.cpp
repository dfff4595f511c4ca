// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include <locksmith/client.hpp>

#include "core.hpp"
#include "spawn.hpp"

#include <new>
#include <system_error>

namespace locksmith {
namespace asio = boost::asio;

using detail::code_of;
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
   if (core_)
      core_->stop();
}

client::executor_type client::get_executor() const noexcept { return core_->ex; }

error_code client::config_error() const noexcept { return core_->config_error; }

void client::cancel() { core_->stop(); }

void client::async_lock_impl(std::string name, lock_options opts, bool try_only, report* diag, lock_handler h)
{
   if (diag)
      *diag = report{};
   // Each completion holds the core, which the coroutine uses, until the operation is done.
   spawn(core_->ex, core_->lock(std::move(name), std::move(opts), try_only, diag), std::move(h),
         [core = core_](lock_handler h, std::exception_ptr e, detail::client_core::lock_result r) {
            if (e)
               return std::move(h)(code_of(e), lease{});
            std::move(h)(r.ec, std::move(r.held));
         });
}

void client::async_unlock_impl(lease* l, report* diag, done_handler h)
{
   if (diag)
      *diag = report{};
   spawn(core_->ex, core_->unlock(l->state(), diag), std::move(h),
         [core = core_](done_handler h, std::exception_ptr e, error_code ec) { std::move(h)(e ? code_of(e) : ec); });
}

void client::async_extend_impl(lease* l, std::chrono::milliseconds ttl, report* diag, done_handler h)
{
   if (diag)
      *diag = report{};
   spawn(core_->ex, core_->extend(l->state(), ttl, diag), std::move(h),
         [core = core_](done_handler h, std::exception_ptr e, error_code ec) { std::move(h)(e ? code_of(e) : ec); });
}

void client::async_close_impl(done_handler h)
{
   spawn(core_->ex, core_->close(core_->cfg.close_timeout), std::move(h),
         [core = core_](done_handler h, std::exception_ptr e, error_code ec) { std::move(h)(e ? code_of(e) : ec); });
}

namespace detail {

error_code code_of(std::exception_ptr e)
{
   try {
      std::rethrow_exception(e);
   } catch (boost::system::system_error const& x) {
      return x.code();
   } catch (std::system_error const& x) {
      return error_code{x.code().value(), boost::system::generic_category()};
   } catch (std::bad_alloc const&) {
      return make_error_code(boost::system::errc::not_enough_memory);
   }
}

}  // namespace detail
}  // namespace locksmith
