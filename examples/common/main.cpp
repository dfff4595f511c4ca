// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
//
// The main() of every example (see example.hpp): the examples link it in, and define co_main.
#include "example.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>
#include <boost/redis/connection.hpp>
#include <boost/system/system_error.hpp>

#include <csignal>
#include <iostream>
#include <string_view>

namespace asio = boost::asio;
namespace redis = boost::redis;

namespace example {
namespace {

// The data connection's config, from a redis://host:port URL.
redis::config data_config(std::string_view url)
{
   redis::config cfg;
   url.remove_prefix(url.starts_with("redis://") ? 8 : 0);
   auto const colon = url.rfind(':');
   cfg.addr.host = url.substr(0, colon);
   cfg.addr.port = colon == url.npos ? "6379" : url.substr(colon + 1);
   return cfg;
}

bool is_aborted(std::exception_ptr e)
{
   try {
      std::rethrow_exception(e);
   } catch (boost::system::system_error const& x) {
      return x.code() == asio::error::operation_aborted;
   } catch (...) {
      return false;
   }
}

}  // namespace

context::context(asio::io_context& ioc, std::vector<std::string> node_urls,
                 std::vector<std::string> other_args)
    : ioc_{ioc}
    , ex{asio::make_strand(ioc)}
    , urls{std::move(node_urls)}
    , args{std::move(other_args)}
    , locks{another_client()}
{}

context::~context() = default;

locksmith::client& context::another_client()
{
   return clients_.emplace_back(ex, locksmith::config{.nodes = urls});
}

redis::connection& context::data()
{
   if (!data_) {
      data_ = std::make_unique<redis::connection>(ex, redis::logger{redis::logger::level::warning});
      data_->async_run(data_config(urls.front()), asio::detached);
   }
   return *data_;
}

void context::run_on_threads(int n)
{
   for (int i = 1; i < n; ++i)
      threads_.emplace_back([this] { ioc_.run(); });
}

void context::close()
{
   for (auto& c : clients_)
      c.async_close(asio::detached);
   if (data_)
      data_->cancel();
}

asio::awaitable<void> run_all(std::vector<asio::awaitable<void>> tasks)
{
   auto const ex = co_await asio::this_coro::executor;
   using task_op = decltype(asio::co_spawn(ex, std::move(tasks.front()), asio::deferred));
   std::vector<task_op> ops;
   for (auto& t : tasks)
      ops.push_back(asio::co_spawn(ex, std::move(t), asio::deferred));
   // The group passes a cancellation of this coroutine on to every task.
   auto [order, errors] = co_await asio::experimental::make_parallel_group(std::move(ops))
                             .async_wait(asio::experimental::wait_for_all(), asio::deferred);
   for (auto const& e : errors)
      if (e && !is_aborted(e))
         std::rethrow_exception(e);
}

}  // namespace example

namespace {

// The exit status of an exception that left co_main, which is shown on stderr.
int report(std::exception_ptr e)
{
   try {
      std::rethrow_exception(e);
   } catch (boost::system::system_error const& x) {
      std::cerr << "stopped: " << x.code().message() << '\n';
   } catch (std::exception const& x) {
      std::cerr << "stopped: " << x.what() << '\n';
   } catch (...) {
      std::cerr << "stopped: an exception of unknown type\n";
   }
   return 1;
}

}  // namespace

int main(int argc, char** argv)
{
   std::vector<std::string> urls, args;
   for (int i = 1; i < argc; ++i)
      (std::string_view{argv[i]}.find("://") != std::string_view::npos ? urls : args)
         .push_back(argv[i]);
   if (urls.empty())
      urls.push_back("redis://127.0.0.1:6379");

   asio::io_context ioc;
   example::context ctx{ioc, std::move(urls), std::move(args)};
   if (auto ec = ctx.locks.config_error()) {
      std::cerr << "bad Redis URL: " << ec.message() << '\n';
      return 2;
   }

   // Ctrl-C cancels co_main; whatever it holds is released on the way out.
   asio::cancellation_signal stop;
   asio::signal_set signals{ctx.ex, SIGINT, SIGTERM};
   signals.async_wait([&](boost::system::error_code ec, int) {
      if (!ec)
         stop.emit(asio::cancellation_type::terminal);
   });

   int status = 1;
   auto done = [&](std::exception_ptr e, int result) {
      status = e ? report(e) : result;
      signals.cancel();
      ctx.close();  // nothing is left to do, so run() returns once the connections are closed
   };
   // On ctx.ex, as the signal's handler and `done`: with more threads, they never run at once.
   asio::co_spawn(ctx.ex, co_main(ctx), asio::bind_cancellation_slot(stop.slot(), done));
   ioc.run();
   ctx.join();  // the other threads have run out of work too: wait until they return
   return status;
}
