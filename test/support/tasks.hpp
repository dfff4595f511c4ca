// Helpers for tests that run several coroutines at once on one io_context: an event to wait for
// with a deadline, a countdown of finished tasks, a group of spawned coroutines that cannot outlive
// the clients they use, and waiting for a condition with a deadline.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <exception>
#include <list>

namespace locksmith::test {

// A one-shot event that a coroutine waits for with a deadline: set() wakes it at once.
class event {
public:
   explicit event(boost::asio::io_context& ioc)
       : timer_{ioc}
   {}
   void set()
   {
      set_ = true;
      timer_.cancel();
   }
   bool is_set() const { return set_; }
   // True when set() was called before the deadline.
   boost::asio::awaitable<bool> wait(std::chrono::steady_clock::duration deadline)
   {
      if (!set_) {
         timer_.expires_after(deadline);
         co_await timer_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
      }
      co_return set_;
   }

private:
   boost::asio::steady_timer timer_;
   bool set_ = false;
};

// Sets its event when `n` tasks have called done().
struct countdown {
   countdown(boost::asio::io_context& ioc, int n)
       : left{n}
       , all_done{ioc}
   {
      if (n == 0)
         all_done.set();
   }
   void done()
   {
      if (--left == 0)
         all_done.set();
   }
   int left;
   event all_done;
};

// Spawns coroutines that each have their own cancellation signal. Declared after the clients, it
// is destroyed before them: it then cancels what still runs (after a failed check) and runs the
// io_context until those coroutines have finished, so that none outlives the clients it uses.
class task_group {
public:
   explicit task_group(boost::asio::io_context& ioc)
       : ioc_{ioc}
   {}
   task_group(task_group const&) = delete;
   task_group& operator=(task_group const&) = delete;
   ~task_group();

   void spawn(boost::asio::awaitable<void> aw)
   {
      auto& sig = signals_.emplace_back();
      ++running_;
      auto on_end = [this](std::exception_ptr e) {
         --running_;
         if (e && !error_)
            error_ = e;
      };
      boost::asio::co_spawn(ioc_, std::move(aw),
                            boost::asio::bind_cancellation_slot(sig.slot(), on_end));
   }
   int running() const { return running_; }

private:
   boost::asio::io_context& ioc_;
   std::list<boost::asio::cancellation_signal> signals_;
   int running_ = 0;
   std::exception_ptr error_;
};

inline task_group::~task_group()
{
   if (running_ > 0) {
      for (auto& s : signals_)
         s.emit(boost::asio::cancellation_type::terminal);
      auto const until = std::chrono::steady_clock::now() + std::chrono::seconds{3};
      while (running_ > 0 && std::chrono::steady_clock::now() < until) {
         if (ioc_.stopped())
            ioc_.restart();
         ioc_.run_one_until(until);
      }
   }
   if (error_) {
      try {
         std::rethrow_exception(error_);
      } catch (std::exception const& e) {
         BOOST_ERROR("a spawned coroutine threw: " << e.what());
      } catch (...) {
         BOOST_ERROR("a spawned coroutine threw");
      }
   }
}

// Polls `pred` every `every` while the io_context runs (it carries the clients' commands); false
// if it is still false after `deadline`.
template <class Pred>
boost::asio::awaitable<bool>
eventually(Pred pred, std::chrono::steady_clock::duration deadline = std::chrono::seconds{3},
           std::chrono::steady_clock::duration every = std::chrono::milliseconds{1})
{
   auto const until = std::chrono::steady_clock::now() + deadline;
   boost::asio::steady_timer t{co_await boost::asio::this_coro::executor};
   for (;;) {
      if (pred())
         co_return true;
      if (std::chrono::steady_clock::now() >= until)
         co_return false;
      t.expires_after(every);
      co_await t.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
   }
}

// Lets the io_context run the handlers that are ready now (and those they post), a few rounds.
inline boost::asio::awaitable<void> yield(int rounds = 3)
{
   auto ex = co_await boost::asio::this_coro::executor;
   for (int i = 0; i < rounds; ++i)
      co_await boost::asio::post(ex, boost::asio::use_awaitable);
}

// Sleeps on the coroutine's executor, so that other work (a client's connection) goes on meanwhile.
inline boost::asio::awaitable<void> sleep_for(std::chrono::steady_clock::duration d)
{
   boost::asio::steady_timer t{co_await boost::asio::this_coro::executor, d};
   co_await t.async_wait(boost::asio::use_awaitable);
}

}  // namespace locksmith::test
