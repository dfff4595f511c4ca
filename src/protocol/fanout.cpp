// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "protocol/fanout.hpp"

#include "sansio/unfenced_reply.hpp"

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <optional>
#include <utility>

namespace locksmith::detail {
namespace asio = boost::asio;

std::size_t fanout_result::count(vote v) const noexcept
{
   return static_cast<std::size_t>(
      std::count_if(nodes.begin(), nodes.end(), [v](node_result const& n) { return n.v == v; }));
}

bool fanout_result::server_error() const noexcept
{
   return std::any_of(nodes.begin(), nodes.end(), [](node_result const& n) {
      return n.v == vote::failed && !n.reply.ec && (n.reply.resp.has_error() || n.malformed);
   });
}

namespace {

// How one node voted, from the script's reply. A reply that is neither an error nor of the
// script's shape is no vote.
vote classify(script const& code, node_result& r)
{
   if (r.reply.ec)
      return vote::failed;
   bool const acquire = code.role == script_role::acquire;
   error_code ec;
   if (acquire) {
      ec = parse_acquire(code, r.reply.resp, r.acquire);
   } else if (code.batched) {
      // A fan-out extends one lease (the watchdog's batches settle apart, see watchdog.cpp).
      std::vector<ownership> one;
      ec = parse_ownerships(r.reply.resp, 1, one);
      if (!ec)
         r.own = one.front();
   } else {
      ec = parse_ownership(r.reply.resp, r.own);
   }
   if (ec) {
      r.malformed = !r.reply.resp.has_error();
      return vote::failed;
   }
   if (acquire)
      return r.acquire.acquired ? vote::yes : vote::no;
   return r.own == ownership::done ? vote::yes : vote::no;
}

// How `reply` votes on the release or extend `code`, classified apart (a copy).
vote vote_of(script const& code, node_reply const& reply)
{
   node_result r;
   r.reply = reply;
   return classify(code, r);
}

// A release that finds its key gone, or another's, on a plain node whose server restarted since
// the lease set the key there (another run) learns nothing of the lease: the node lost the key
// with its memory. While the node's quarantine lasts for every client, no client has counted its
// votes since (node::restarted_recently), so a valid lease was as safe there as if the key had
// stayed, and the release may count as landed (fanout_op::on_reply, at most N - quorum of
// them). `key_run` is node::unknown_run for a lease that was no longer valid (release_lease):
// its keys may have expired before the restart. Only a plain node, where another run is a
// restart (a Sentinel's is a failover, to a replica that others may count at once), and only a
// release, which speaks of the past: an extend, which a lease's future rests on, needs the key.
bool lost_with_a_restart(script const& code, vote v, node const& from, unsigned key_run)
{
   return code.role == script_role::release && v == vote::no && key_run != node::unknown_run &&
          !from.follows_failovers() && from.restarted_recently() &&
          from.run() != node::unknown_run && from.run() != key_run;
}

// A restarted node may have forgotten a key that a quorum relied on: no acquire vote of its counts
// during its quarantine (its key, if set, is released like a failed vote's). One whose restarts
// cannot be judged (INFO denied) is out until they can be, whatever it says: an ACL that denies
// what a guarantee needs fails as any denied command does (auth_failed), at once when such nodes
// alone sink the quorum.
void sit_out_quarantine(node_result& r, node& from)
{
   if (r.v == vote::failed || !from.quarantined())
      return;
   auto const u = from.unjudged();
   if (u.why.empty() && r.v != vote::yes)
      return;  // a "taken" from a node in quarantine is still news of a holder
   r.v = vote::failed;
   r.reply.server_message = "in restart quarantine (config::restart_quarantine)";
   if (u.why.empty())
      return;
   if (u.denied)
      r.reply.ec = error::auth_failed;
   r.reply.server_message =
      "not counted, its restarts cannot be judged: " + u.why + " (config::restart_quarantine)";
}

struct fanout_op : std::enable_shared_from_this<fanout_op> {
   fanout_op(std::size_t n, std::size_t quorum, fanout_handler h, late_vote_handler l)
       : votes{n, quorum}
       , handler{std::move(h)}
       , late_votes{std::move(l)}
   {
      result.nodes.resize(n);
      result.quorum = votes.quorum();
   }

   // `lost`: a release's answer from a node that lost the key in a restart (lost_with_a_restart).
   void on_reply(script const& code, std::size_t i, node_reply&& reply, node& from,
                 bool lost = false)
   {
      node_result late;
      // Once decided, `result` may have been moved out: a late reply is looked at apart.
      auto& r = handler ? result.nodes[i] : late;
      r.reply = std::move(reply);
      r.v = classify(code, r);
      if (code.role == script_role::acquire) {
         if (r.acquire.acquired)
            r.run = from.run();
         sit_out_quarantine(r, from);
      }
      // Counted as released on N - quorum nodes at most: the others' keys must show that the
      // lease held, even if every node restarted within one quarantine (the fresh-fleet limit).
      if (lost && r.v == vote::no && credits + votes.quorum() < result.nodes.size()) {
         ++credits;
         r.v = vote::yes;
         r.reply.server_message += std::string{r.reply.server_message.empty() ? "" : "; "} +
                                   "counted as released: its server restarted since the key was "
                                   "set, and sits out its quarantine (config::restart_quarantine)";
      }
      // A reply of the wrong shape means the connection matches replies to the wrong requests:
      // nothing more it answers can be trusted until it is a new connection.
      if (r.malformed)
         from.reconnect();
      if (!handler) {
         if (late_votes)
            late_votes(i, r.v);
         return;
      }
      if (votes.record(r.v == vote::yes) != outcome::pending)
         complete({}, votes.state());
   }

   // A node that the call does not go to (persistence::only_there): no, as an expired key's.
   void unasked(std::size_t i)
   {
      auto& r = result.nodes[i];
      r.v = vote::no;
      r.own = ownership::expired;
      r.reply.sent = false;
      votes.record(false);
   }

   void complete(error_code ec, outcome decision)
   {
      auto slot = asio::get_associated_cancellation_slot(handler);
      if (slot.is_connected())
         slot.clear();
      result.decision = decision;
      // Called from a reply or a posted cancellation, on `io`, where the handler runs (see
      // start_fanout): at once, with no hop through its type-erased executor. Late replies find
      // no handler and leave `result` alone, so it can be moved out.
      auto h = std::move(handler);
      std::move(h)(ec, std::move(result));
   }

   vote_counter votes;
   std::size_t credits = 0;  // releases counted so (on_reply's `lost`)
   fanout_handler handler;
   late_vote_handler late_votes;
   fanout_result result;
};

// One node's part of a fan-out: the call, and with persistence its retries.
struct node_call : std::enable_shared_from_this<node_call> {
   node_call(std::shared_ptr<fanout_op> o, std::shared_ptr<node> nd, std::size_t i,
             std::shared_ptr<script_call const> c, std::chrono::milliseconds t,
             std::function<bool()> wanted, std::optional<persistence> k, asio::any_io_executor ex)
       : op{std::move(o)}
       , n{std::move(nd)}
       , index{i}
       , call{std::move(c)}
       , timeout{t}
       , still_wanted{std::move(wanted)}
       , keep{std::move(k)}
       , io{std::move(ex)}
   {}

   std::shared_ptr<fanout_op> op;
   std::shared_ptr<node> n;
   std::size_t index;
   std::shared_ptr<script_call const> call;
   std::chrono::milliseconds timeout;
   std::function<bool()> still_wanted;
   std::optional<persistence> keep;
   asio::any_io_executor io;
   unsigned attempt = 0;
   bool voted = false;
   std::optional<node_reply> held_back;  // a routine operation's answer, not yet a vote
   bool may_have_run = false;            // a call held back may have run (node_reply::sent)
   // Until when the node's failures are a routine operation's that it said was under way
   // (asio::error::try_again), restart_patience after it said so last: a server that loads its
   // data answers its connection's health check with LOADING, which drops the connection, again
   // and again until it is done. One that dies meanwhile fails the unlock as an outage.
   std::chrono::steady_clock::time_point operation_until{};

   void send(std::chrono::milliseconds t)
   {
      auto done = [self = shared_from_this()](node_reply&& r) { self->on_reply(std::move(r)); };
      // An owned release goes where the key may be, even to a silent node: it lands behind the
      // acquire that set it when the node answers again. While it waits out a failover, each
      // call waits long for its answer (patient_timeout), which a short timeout could lose: the
      // next call, finding the key gone, could not tell that from a lease that ran out. While it
      // waits out a plain node's restart, each call waits so for a stall's (stall_patience).
      if (keep) {
         if (keep->wait_out_operations) {
            auto const now = std::chrono::steady_clock::now();
            if (n->follows_failovers())
               t = std::max(t, patient_timeout(timeout, keep->until - now));
            else if (now < keep->restart_until)
               t = std::max(t, std::min(patient_timeout(timeout, keep->restart_until - now),
                                        stall_patience(timeout)));
         }
         n->eval_even_if_silent(call, t, still_wanted, std::move(done));
      } else {
         n->eval(call, t, still_wanted, std::move(done));
      }
   }

   void on_reply(node_reply&& r)
   {
      // Only a transport failure may mend: an answer, even an error, is final, and so is a
      // refusal of our rights or of the server (an ACL denial, a Redis 6 cluster), which the
      // node reports as an error code of its own.
      bool const final_refusal = r.ec == error::auth_failed || r.ec == error::invalid_argument;
      auto const now = std::chrono::steady_clock::now();
      bool const owned = keep && !keep->work->closed() && now < keep->until;
      bool const failed = r.ec && r.ec != asio::error::operation_aborted && !final_refusal;
      // How an answer votes, looked at here only where it matters (on a copy): after a call kept
      // back, or from a node whose current run is not known yet or began lately.
      bool const look = keep && keep->wait_out_operations && !r.ec &&
                        (held_back || n->run_unknown() ||
                         (key_run() != node::unknown_run && n->restarted_recently()));
      auto const later = look ? vote_of(*call->code, r) : vote::yes;
      bool const lost_key = lost(later);
      // A "no" from a node whose run is not known yet (a connection made a moment ago, whose
      // INFO has not answered) may be a restarted node's, which lost the key
      // (lost_with_a_restart): it is asked again once the node knows.
      bool const run_not_known = later == vote::no && n->run_unknown();
      bool const again = owned && (failed || run_not_known);
      // The first answer is the node's vote, unless it says that a routine operation is under
      // way (a slot in motion, an election, a load of the data; any failure of a node that
      // follows failovers, or that said so; a plain node's failed connection, for a restart's
      // length; a "no" of a run not known yet) and the caller waits that out
      // (persistence::wait_out_operations): that one is kept back, and is the vote if no other
      // answer comes. A failure that may have run outranks a "no" kept back.
      if (r.ec == asio::error::try_again)
         operation_until = now + restart_patience(timeout);
      bool const passing =
         n->follows_failovers() || now < operation_until || (keep && now < keep->restart_until);
      bool const routine = run_not_known || (passing && r.ec != error::tls_failed);
      bool const waits = again && keep->wait_out_operations && routine;
      if (waits && !voted) {
         if (r.ec || !held_back) {
            may_have_run = may_have_run || (r.ec && r.sent);
            held_back = std::move(r);
         }
      } else if (held_back && may_have_run && later != vote::yes && !lost_key) {
         // A call that timed out may have released the key, its answer lost: a later one that
         // finds the key gone, or another owner's, cannot tell that from a lease that ran out
         // (unless the node has restarted since, and lost it anyway). Not known, then: the
         // failure is the vote.
         vote(std::move(*std::exchange(held_back, std::nullopt)));
      } else {
         vote(std::move(r), lost_key);
      }
      if (!again)
         return end();
      auto const plan = release_retry(timeout, attempt++);
      auto timer = std::make_shared<asio::steady_timer>(io, plan.pause);
      keep->work->track(timer);
      // Cancelled by close(), or by hurry(): a node's new route, tried at once.
      timer->async_wait([self = shared_from_this(), timer, plan](error_code) {
         if (self->keep->work->closed())
            return self->end();
         self->send(plan.timeout);
      });
   }

   // Whether a release's answer that votes `v` comes from a node that lost the key in a restart
   // (lost_with_a_restart), as far as this call knows where the key was set.
   bool lost(vote v) const { return lost_with_a_restart(*call->code, v, *n, key_run()); }

   // The node's run when the lease's acquire set the key there (persistence::key_runs).
   unsigned key_run() const noexcept
   {
      return keep && index < keep->key_runs.size() ? keep->key_runs[index] : node::unknown_run;
   }

   // The node's vote, once. `lost_key`: see fanout_op::on_reply.
   void vote(node_reply&& r, bool lost_key = false)
   {
      if (!std::exchange(voted, true))
         op->on_reply(*call->code, index, std::move(r), *n, lost_key);
   }

   // No more calls: a vote kept back counts now.
   void end()
   {
      if (auto r = std::exchange(held_back, std::nullopt))
         vote(std::move(*r));
      if (keep)
         keep->work->done();
   }
};

}  // namespace

void start_fanout(asio::any_io_executor const& io, std::vector<std::shared_ptr<node>> const& nodes,
                  std::shared_ptr<script_call const> call, std::chrono::milliseconds timeout,
                  fanout_handler handler, std::optional<persistence> keep, late_vote_handler late)
{
   auto op =
      std::make_shared<fanout_op>(nodes.size(), call->quorum, std::move(handler), std::move(late));
   auto slot = asio::get_associated_cancellation_slot(op->handler);
   if (slot.is_connected()) {
      slot.assign([weak = std::weak_ptr<fanout_op>(op), io](asio::cancellation_type_t) {
         auto op = weak.lock();
         if (!op || !op->handler)
            return;
         // Never complete from inside the canceller's call: post.
         asio::post(io, [op] {
            if (op->handler)
               op->complete(asio::error::operation_aborted, outcome::pending);
         });
      });
   }
   script const& code = *call->code;
   // Only an acquire must not fall back once decided (it would land behind the release sent
   // meanwhile); a release or extend is idempotent and must reach every node.
   // Each capture is trivially copyable and fits std::function's local buffer: no allocation for
   // it, nor for its copies (one per node, and one per call a node makes).
   // The op outlives every call of it: each node's call holds the op until its reply is handled.
   std::function<bool()> still_wanted = [] { return true; };
   if (code.role == script_role::acquire)
      still_wanted = [o = op.get()] { return static_cast<bool>(o->handler); };
   bool const only_there = keep && keep->only_there;
   for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (only_there && !keep->covers(i)) {
         op->unasked(i);
         continue;
      }
      // Owned only where the key may be: elsewhere a failed release needs no second try.
      auto const owned = keep && keep->covers(i);
      if (owned)
         keep->work->add();
      // The last node takes `keep` itself: a copy costs its node list (a vector<bool>).
      std::optional<persistence> mine;
      if (owned)
         mine = i + 1 == nodes.size() ? std::move(keep) : keep;
      auto c = std::make_shared<node_call>(op, nodes[i], i, call, timeout, still_wanted,
                                           std::move(mine), io);
      c->send(timeout);
   }
   // Decided by the nodes not asked alone (never for a lease, which a quorum may hold): not
   // inside this call either.
   if (op->votes.state() != outcome::pending)
      asio::post(io, [op] {
         if (op->handler)
            op->complete({}, op->votes.state());
      });
}

}  // namespace locksmith::detail
