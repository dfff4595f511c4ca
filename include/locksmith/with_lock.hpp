// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_WITH_LOCK_HPP
#define LOCKSMITH_WITH_LOCK_HPP

#include <locksmith/client.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/deferred.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

namespace locksmith {

namespace detail {

template <class T>
struct awaitable_value;
template <class T, class Executor>
struct awaitable_value<boost::asio::awaitable<T, Executor>> {
   using type = T;
};

template <class R>
struct with_lock_signature_of {
   using type = void(error_code, R);
};
template <>
struct with_lock_signature_of<void> {
   using type = void(error_code);
};

using body_fn = std::function<boost::asio::awaitable<void>(lease&)>;
void async_with_lock_impl(client& c, std::string name, lock_options opts, body_fn body,
                          boost::asio::any_completion_handler<void(error_code)> h);

// A named initiation with get_executor(), as the client's own, so that asio::cancel_after works.
template <class Body, class R>
struct with_lock_initiation {
   client* c;
   using executor_type = client::executor_type;
   executor_type get_executor() const noexcept { return c->get_executor(); }

   template <class Handler>
   void operator()(Handler&& h, std::string name, lock_options opts, Body body) const
   {
      namespace asio = boost::asio;
      if constexpr (std::is_void_v<R>) {
         async_with_lock_impl(*c, std::move(name), std::move(opts), std::move(body),
                              std::forward<Handler>(h));
      } else {
         // The body's value is kept aside, and given to the caller's handler with the error code.
         auto out = std::make_shared<R>();
         auto run = [body = std::move(body), out](lease& l) mutable -> asio::awaitable<void> {
            *out = co_await body(l);
         };
         auto slot = asio::get_associated_cancellation_slot(h);
         auto ex = asio::get_associated_executor(h, c->get_executor());
         auto done = [h = std::forward<Handler>(h), out](error_code ec) mutable {
            std::move(h)(ec, ec ? R{} : std::move(*out));
         };
         async_with_lock_impl(
            *c, std::move(name), std::move(opts), std::move(run),
            asio::bind_cancellation_slot(slot, asio::bind_executor(ex, std::move(done))));
      }
   }
};

}  // namespace detail

/// The completion signature of async_with_lock for a body returning `awaitable<R>`.
template <class R>
using with_lock_signature = typename detail::with_lock_signature_of<R>::type;

/// Takes the lock `name`, runs `body(lease&)`, and releases the lock on every path.
///
/// A free function, not a member of @ref client, as `asio::co_spawn` is one beside the executor:
/// it is not one more kind of lease but a scope built from the client's public members
/// (`async_lock`, then `async_unlock`), and it needs `asio::awaitable`, which client.hpp, usable
/// with any completion token, does not impose. Its arguments follow the members' order: the
/// client first, then `(name, opts)`, then what this operation adds (the body), then the token.
///
/// `body` is callable as `body(lease&)` and returns `asio::awaitable<R>`; it runs on the client's
/// executor. `opts.diag`, when set, receives the lock's report (see client::async_lock). The lease
/// renews itself while the body runs (`opts.renew`, on by default). With
/// `renew = false` nothing watches the lease: the body is not cancelled when it expires, and
/// the result then says error::lease_lost.
///
/// Signature: `void(error_code)` when R is void, else `void(error_code, R)` (R default-constructed
/// on error). Errors:
/// @li the errors of `client::async_lock`, when the lock was not taken (the body does not run);
/// @li error::lease_lost when the lease was lost while the body ran: the body then received a
///     terminal cancellation before `valid_until()`, and this is the result even if the body
///     swallowed the cancellation and returned normally;
/// @li the body's own error, when it throws a system_error;
/// @li the release's error otherwise (not_owner and lease_expired read as error::lease_lost).
/// Any other exception thrown by the body is rethrown from the completion, after the release.
///
/// Cancellation: terminal, partial and total. While waiting for the lock, as `async_lock`. While
/// the body runs, the same cancellation type is passed on to the body; the lock is released once
/// the body has finished.
template <class Body,
          class R = typename detail::awaitable_value<std::invoke_result_t<Body&, lease&>>::type,
          boost::asio::completion_token_for<with_lock_signature<R>> CompletionToken =
             boost::asio::deferred_t>
auto async_with_lock(client& c, std::string_view name, lock_options const& opts, Body body,
                     CompletionToken&& token = {})
{
   return boost::asio::async_initiate<CompletionToken, with_lock_signature<R>>(
      detail::with_lock_initiation<Body, R>{&c}, token, std::string{name}, opts, std::move(body));
}

}  // namespace locksmith

#endif
