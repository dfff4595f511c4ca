// An in-memory Redis node for unit tests of the quorum engine (no sockets).
//
// fake_node implements locksmith::detail::node the way a Redis master behind a Boost.Redis
// connection behaves, as far as the engine can tell:
//  - commands run one at a time, in the order they were sent (a FIFO per node), and each reply
//    is delivered through the executor, never inline;
//  - the lock's scripts are evaluated on its keyspace (fake_store.hpp), with the arguments parsed
//    back from the call's `EVAL` request (the RESP text that would go on the wire);
//  - each call has its own timeout, after which it completes with asio::error::timed_out;
//  - the script cache is modelled, with the NOSCRIPT fallback as node.hpp specifies it: EVALSHA
//    first, and on NOSCRIPT the script's text, but only while `still_wanted()` says so.
//
// A fault_plan shared by the nodes of a test (fake_faults.hpp) injects one failure at the n-th
// node call, counted across all nodes.
#pragma once

#include "transport/node.hpp"

#include "support/fake_faults.hpp"
#include "support/fake_store.hpp"

#include "sansio/scripts.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace locksmith::test {

class fake_node final : public detail::node,
                        public fake_store,
                        public std::enable_shared_from_this<fake_node> {
public:
   /// `clock_base`: see fake_store.
   fake_node(boost::asio::any_io_executor ex, std::string name, std::shared_ptr<fault_plan> plan,
             std::uint64_t clock_base)
       : fake_store{clock_base}
       , ex_{std::move(ex)}
       , name_{std::move(name)}
       , plan_{std::move(plan)}
       , hang_timer_{ex_}
   {
      // A warm node: every script is in its cache, as on a connection that has run a while.
      for (auto const* s : detail::all_scripts())
         cached_.insert(s->sha1);
   }

   // --- detail::node
   // A fake has no silence to respect: eval_even_if_silent is eval.
   void do_eval(std::shared_ptr<detail::script_call const> call, std::chrono::milliseconds timeout,
                std::function<bool()> still_wanted, std::function<void(detail::node_reply&&)> done,
                bool /*even_if_silent*/) override
   {
      auto p = std::make_shared<pending>(ex_);
      p->call = std::move(call);
      p->still_wanted = std::move(still_wanted);
      p->done = std::move(done);
      p->f = plan_->next();
      p->start = clock::now();
      ++evals;
      if (p->f == fault::refused || p->f == fault::timeout)
         note_dropped_release(*p, releases_lost_to_faults);
      if (p->f == fault::refused || p->f == fault::in_motion) {
         auto const ec = p->f == fault::refused ? boost::asio::error::connection_refused
                                                : boost::asio::error::try_again;
         boost::asio::post(ex_, [self = shared_from_this(), p, ec] { self->finish(*p, ec, {}); });
         return;
      }
      p->timeout.expires_after(timeout);
      p->timeout.async_wait([self = shared_from_this(), p](error_code ec) {
         if (!ec)
            self->finish(*p, boost::asio::error::timed_out, {});
      });
      if (p->f == fault::timeout)
         return;  // lost on the way: never runs
      enqueue(std::move(p), false);
   }
   // Subscriptions are confirmed at once, as a server would, by a push posted to the client.
   void subscribe(std::string const& channel) override
   {
      ++subscriptions[channel];
      push({detail::push_event::kind::subscribed, channel, {}});
   }
   void unsubscribe(std::string const& channel) override
   {
      --subscriptions[channel];
      push({detail::push_event::kind::unsubscribed, channel, {}});
   }
   void reconnect() override { ++reconnects; }
   void start(detail::push_handler on_push) override
   {
      on_push_ = std::move(on_push);
      started = true;
      push({detail::push_event::kind::connected, {}, {}});
   }
   void stop() override { started = false; }
   std::string const& name() const noexcept override { return name_; }
   bool follows_failovers() const noexcept override { return failovers; }
   bool restarted_recently() const noexcept override { return restarted; }
   bool run_unknown() const noexcept override { return run_not_known; }
   unsigned run() const noexcept override { return run_not_known ? unknown_run : run_number; }

   // --- what tests look at and control

   /// What follows_failovers() says: true to stand for a Redis Cluster or a Sentinel's master.
   bool failovers = false;

   /// What restarted_recently() says: true to stand for a server restarted within its quarantine.
   bool restarted = false;

   /// What run_unknown() says: true to stand for a new connection whose INFO has not answered.
   bool run_not_known = false;

   /// What run() says (unless run_not_known): one more stands for a restart.
   unsigned run_number = 0;

   /// Stalls the node (SIGSTOP): commands queue up and run, in order, after thaw().
   void freeze() { frozen_ = true; }
   void thaw()
   {
      frozen_ = false;
      pump();
   }

   /// Drops the queued commands unanswered, their completions destroyed and never run: what
   /// becomes of a connection's requests in flight when its io_context is destroyed.
   void drop_backlog()
   {
      queue_.clear();
      busy_ = false;
   }

   /// Empties the script cache (SCRIPT FLUSH, or a restart's lost cache).
   void flush_scripts() { cached_.clear(); }

   /// The commands queued or running.
   std::size_t backlog() const noexcept { return queue_.size() + (busy_ ? 1 : 0); }

   std::vector<std::string>
      releases_lost_to_faults;  // tokens whose release an injected fault dropped
   std::vector<std::string>
      releases_not_retried;  // tokens whose release got NOSCRIPT and no fallback
   std::map<std::string, int> subscriptions;
   std::size_t evals = 0;
   std::size_t reconnects = 0;  // reconnect() calls: replies of the wrong shape
   bool started = false;

private:
   struct pending {
      explicit pending(boost::asio::any_io_executor const& ex)
          : timeout{ex}
      {}
      std::shared_ptr<detail::script_call const> call;
      std::function<bool()> still_wanted;
      std::function<void(detail::node_reply&&)> done;
      fault f = fault::none;
      clock::time_point start;
      boost::asio::steady_timer timeout;
      bool replied = false;
   };

   struct command {
      std::shared_ptr<pending> p;
      bool by_text;
   };

   void enqueue(std::shared_ptr<pending> p, bool by_text)
   {
      queue_.push_back({std::move(p), by_text});
      // The first call that comes while the node hangs finds it hung for hang_for more: so a test
      // can count on a later call (a release after a hung extend) meeting the hang, however late
      // the machine's load makes it. Only the first: a waiter that spins would keep it hung.
      if (hanging_ && !hang_extended_) {
         hang_until_ = clock::now() + plan_->hang_for;
         hang_extended_ = true;
      }
      pump();
   }

   // Runs the head of the queue after a hop through the executor (or after the stall of a hang).
   void pump()
   {
      if (busy_ || frozen_ || queue_.empty())
         return;
      busy_ = true;
      auto const& head = queue_.front();
      auto step = [self = shared_from_this()](error_code = {}) { self->step(); };
      if (head.p->f == fault::hang && !head.by_text) {
         hanging_ = true;
         hang_extended_ = false;
         hang_until_ = clock::now() + plan_->hang_for;
         wait_out_hang();
      } else {
         boost::asio::post(ex_, step);
      }
   }

   void wait_out_hang()
   {
      hang_timer_.expires_at(hang_until_);
      hang_timer_.async_wait([self = shared_from_this()](error_code) {
         if (clock::now() < self->hang_until_)
            return self->wait_out_hang();  // a call came meanwhile
         self->hanging_ = false;
         self->step();
      });
   }

   void step()
   {
      busy_ = false;
      if (frozen_)
         return;  // the head stays queued until thaw()
      auto c = std::move(queue_.front());
      queue_.pop_front();
      run(c);
      pump();
   }

   // Executes one command as Redis would, and sends its reply on its way.
   void run(command const& c)
   {
      auto const& p = c.p;
      auto const& code = *p->call->code;
      bool const first_try = !c.by_text;
      if (first_try && p->f == fault::noscript)
         cached_.clear();
      if (first_try && p->f == fault::error_reply) {
         note_dropped_release(*p, releases_lost_to_faults);
         return reply_later(p, {}, error_resp("ERR injected fault"));
      }
      if (first_try && !cached_.contains(code.sha1)) {
         // NOSCRIPT: the node falls back to the text only if the caller still wants the call.
         return boost::asio::post(ex_, [self = shared_from_this(), p] {
            if (!p->replied && p->still_wanted())
               return self->enqueue(p, true);
            self->note_dropped_release(*p, self->releases_not_retried);
            self->finish(*p, {}, error_resp("NOSCRIPT No matching script. Please use EVAL."));
         });
      }
      cached_.insert(code.sha1);
      auto words = parse_resp_command(p->call->by_text().payload());
      if (words.size() < 3 || words[0] != "EVAL" || words[1] != code.text)
         throw std::logic_error("fake_node: the call's by_text request is not EVAL of its script");
      auto const nkeys = std::stoul(words[2]);
      std::vector<std::string> keys(words.begin() + 3,
                                    words.begin() + 3 + static_cast<long>(nkeys));
      std::vector<std::string> args(words.begin() + 3 + static_cast<long>(nkeys), words.end());
      auto resp =
         evaluate(code, keys, args, [this](std::string const& channel, std::string const& message) {
            if (subscriptions[channel] > 0)
               push({detail::push_event::kind::message, channel, message});
         });
      if (p->f == fault::lost_reply && first_try)
         return reply_later(p, boost::asio::error::connection_reset, {});
      if (p->f == fault::wrong_shape &&
          first_try)  // a release's reply for an acquire, a grant for the others
         return reply_later(p, {},
                            code.role == detail::script_role::acquire ? number(1) : pair(1, 42));
      reply_later(p, {}, std::move(resp));
   }

   // A release that never ran on this node (its key, if any, stays until its TTL).
   static void note_dropped_release(pending const& p, std::vector<std::string>& to)
   {
      if (p.call->code != &detail::release_script())
         return;
      // EVAL text numkeys key... token channel...
      auto const words = parse_resp_command(p.call->by_text().payload());
      to.push_back(words.at(3 + std::stoul(words.at(2))));
   }

   void reply_later(std::shared_ptr<pending> const& p, error_code ec,
                    boost::redis::generic_response resp)
   {
      boost::asio::post(ex_, [self = shared_from_this(), p, ec, resp = std::move(resp)]() mutable {
         self->finish(*p, ec, std::move(resp));
      });
   }

   // Delivers the call's one reply: the first of its answer and its timeout.
   void finish(pending& p, error_code ec, boost::redis::generic_response resp)
   {
      if (p.replied)
         return;
      p.replied = true;
      p.timeout.cancel();
      detail::node_reply r;
      r.ec = ec;
      if (!ec && resp.has_error())
         r.server_message = resp.error().diagnostic;
      else if (ec)
         r.server_message = "fake: " + ec.message();
      r.resp = std::move(resp);
      r.latency = clock::now() - p.start;
      auto done = std::move(p.done);
      done(std::move(r));
   }

   boost::asio::any_io_executor ex_;
   // Delivers a push on the executor, never inline, as a subscriber connection would.
   void push(detail::push_event e)
   {
      if (!on_push_)
         return;
      boost::asio::post(ex_, [self = shared_from_this(), e = std::move(e)] {
         if (self->started)
            self->on_push_(e);
      });
   }

   detail::push_handler on_push_;
   std::string name_;
   std::shared_ptr<fault_plan> plan_;
   boost::asio::steady_timer hang_timer_;
   bool hanging_ = false;
   bool hang_extended_ = false;
   clock::time_point hang_until_{};
   std::set<std::string> cached_;
   std::deque<command> queue_;
   bool busy_ = false;
   bool frozen_ = false;
};

}  // namespace locksmith::test
