// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
//
// What every example shares, so that each example's file holds only its idea. An example
// defines co_main; main() (main.cpp, as in Boost.Redis's examples) parses the command line,
// builds the client, runs co_main on one io_context (on one thread, unless co_main asks for more),
// turns Ctrl-C or SIGTERM into a terminal cancellation of co_main, and closes the clients once
// co_main has finished, on every path. The exit status is co_main's result. A bad URL exits with 2,
// and an exception that leaves co_main is shown on stderr ("stopped: ...") and exits with 1.
#pragma once

#include <locksmith/client.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <list>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace boost::asio {
class io_context;
}
namespace boost::redis {
class connection;
}

namespace example {

// What main() hands to co_main. The arguments that contain "://" are the nodes' URLs
// (redis://127.0.0.1:6379 when there are none; three or more make a RedLock); the others are
// the example's own, in their order.
class context {
   boost::asio::io_context& ioc_;
   std::list<locksmith::client> clients_;
   std::unique_ptr<boost::redis::connection> data_;
   std::vector<std::jthread> threads_;

public:
   context(boost::asio::io_context& ioc, std::vector<std::string> node_urls,
           std::vector<std::string> other_args);
   ~context();

   // A strand of the io_context: co_main, the clients and the data connection run on it, one
   // handler at a time however many threads run the io_context.
   boost::asio::any_io_executor const ex;
   std::vector<std::string> const urls;
   std::vector<std::string> const args;
   locksmith::client& locks;  // a client of those nodes

   // Another client of the same nodes, as another process would have: its own connections and
   // its own in-process queue. main() closes it too.
   locksmith::client& another_client();

   // A plain Boost.Redis connection to the first node, for the example's own data (a store that
   // the lock protects); made on first use, from host and port alone (no user, password,
   // database or TLS). main() cancels it.
   boost::redis::connection& data();

   // Runs the io_context on n threads from now on: main()'s own and n - 1 more, which main()
   // joins once run() has returned (join()). Other work then runs on strands of its own
   // (asio::make_strand(ctx.ioc())), and calls the data connection on `ex` only: a client takes
   // calls from any thread, a Boost.Redis connection does not.
   void run_on_threads(int n);
   boost::asio::io_context& ioc() { return ioc_; }
   void join() { threads_.clear(); }

   // Closes the clients (the releases they own go out first) and cancels the data connection:
   // main() calls it once co_main has finished, and io_context::run then returns.
   void close();
};

// Runs the tasks at once and completes when all have finished. Cancelling the caller (Ctrl-C)
// cancels each task. A task's exception is rethrown once all have finished, unless it is
// operation_aborted: that task was stopped, as asked.
boost::asio::awaitable<void> run_all(std::vector<boost::asio::awaitable<void>> tasks);

}  // namespace example

// Defined by each example: what it shows. Its result is the process's exit status.
boost::asio::awaitable<int> co_main(example::context& ctx);
