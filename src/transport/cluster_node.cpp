// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "transport/cluster_node.hpp"

#include "sansio/set_scripts.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <utility>

namespace locksmith::detail {
namespace asio = boost::asio;
namespace redis = boost::redis;
using clock = std::chrono::steady_clock;

namespace {

// A reply that says the master may no longer own the slot, or no longer exist: a transport
// error or timeout (not a WAIT that fell short, which the master itself answered), a call
// refused while the master is silent, or CLUSTERDOWN.
bool master_may_be_gone(node_reply const& r)
{
   if (r.ec)
      return r.ec != make_error_code(error::not_enough_replicas);
   return r.server_message.starts_with("CLUSTERDOWN");
}

}  // namespace

cluster_node::cluster_node(asio::any_io_executor ex, node_url url, config const& cfg)
    : ex_{std::move(ex)}
    , url_{std::move(url)}
    , cfg_{cfg}
    , name_{redacted(url_)}
    , refresh_timer_{ex_}
    , owner_(slot_count)
    , releases_{kept_releases, releases_kept_for}
    , log_{cfg}
{
   for (auto const& e : url_.seeds)
      seeds_.push_back(master_for(e));
}

std::shared_ptr<redis_node> cluster_node::master_for(endpoint const& e)
{
   auto& n = masters_[e.host + ":" + e.port];
   if (!n) {
      // The cluster's credentials are those of each of its nodes.
      node_url u = url_;
      u.seeds.clear();
      u.host = e.host;
      u.port = e.port;
      n = std::make_shared<redis_node>(ex_, std::move(u), cfg_);
      n->load_sharded_scripts();
      if (started_)
         start_master(e.host + ":" + e.port, n);
   }
   return n;
}

void cluster_node::start(push_handler on_push)
{
   started_ = true;
   on_push_ = std::move(on_push);
   for (auto const& [addr, n] : masters_)
      start_master(addr, n);
   refresh();
}

void cluster_node::start_master(std::string const& addr, std::shared_ptr<redis_node> const& n)
{
   // Weakly: the master holds its handler, and the cluster holds the master.
   n->start([weak = weak_from_this(), addr](push_event const& e) {
      if (auto self = weak.lock())
         self->on_master_push(addr, e);
   });
   check_sharded_pubsub(n);
}

void cluster_node::check_sharded_pubsub(std::shared_ptr<redis_node> const& n)
{
   // On the master's command connection, ahead of any script sent to it: the answer is read
   // first. COMMAND GETKEYS of a command that the server lacks fails with "ERR Invalid command
   // specified"; where it has SPUBLISH, the answer is a flat array. (Not COMMAND INFO: its reply
   // nests deeper than Boost.Redis 1.92's parser allows, which then drops the connection.) Any
   // other answer (an ACL without +command|getkeys, a master down) leaves the master unjudged.
   auto req = std::make_shared<redis::request>();
   req->push("COMMAND", "GETKEYS", "SPUBLISH", "locksmith", "probe");
   n->command(std::move(req), slots_timeout,
              [weak = weak_from_this(), n](error_code ec, redis::generic_response&& resp) {
                 auto self = weak.lock();
                 if (!self || ec || !resp.has_error() || !self->unsupported_.empty() ||
                     !resp.error().diagnostic.starts_with("ERR Invalid command"))
                    return;
                 self->unsupported_ = n->name() +
                                      " has no SPUBLISH: a Redis Cluster needs Redis 7.0 or later "
                                      "(sharded pub/sub carries its releases)";
                 self->log_(log_level::error, [&] { return self->unsupported_; });
              });
}

void cluster_node::refuse(routed_call& c, node_reply&& r)
{
   c.finished = true;
   r.ec = error::invalid_argument;
   r.server_message = unsupported_;
   r.latency = clock::now() - c.start;
   // Never from inside the caller's own call.
   asio::post(ex_, [done = std::move(c.done), r = std::move(r)]() mutable { done(std::move(r)); });
}

void cluster_node::on_master_push(std::string const& addr, push_event const& e)
{
   using kind = push_event::kind;
   if (stopped_ || !on_push_)
      return;
   if (e.what == kind::message)
      return on_push_(e);
   if (e.what == kind::connected)
      return run(shards_.on_connected(addr), false);
   if (e.what == kind::refused)
      return on_refused(addr, e.payload);
   auto st = shards_.on_push(addr, e);
   // The master gave a slot away: reload the map, whose change moves the channel on (and a stale
   // answer sends it back there, where a MOVED names the new master).
   if (st.stale_map)
      refresh();
   run(std::move(st), false);
}

void cluster_node::on_refused(std::string const& addr, std::string const& error)
{
   auto const redir = parse_redirect(error);
   if (!redir || redir->ask) {
      log_(log_level::debug, [&] { return addr + " (pub/sub): " + error; });
      return;
   }
   auto to = redir->to;
   if (to.host.empty())
      to.host = url_.seeds.front().host;
   owner_[redir->slot] = master_for(to);
   refresh();
   follow_slots();
}

void cluster_node::run(shard_subscriptions::steps st, bool defer_tell)
{
   for (auto const& c : st.send)
      if (auto it = masters_.find(c.master); it != masters_.end())
         it->second->shard_subscribe(c.channel, c.subscribe);
   if (st.tell.empty() || !on_push_)
      return;
   if (!defer_tell) {
      for (auto const& e : st.tell)
         on_push_(e);
      return;
   }
   // Not inside the listener's own call to subscribe or unsubscribe.
   asio::post(ex_, [self = shared_from_this(), tell = std::move(st.tell)] {
      for (auto const& e : tell)
         if (!self->stopped_)
            self->on_push_(e);
   });
}

void cluster_node::stop()
{
   stopped_ = true;
   refresh_timer_.cancel();
   for (auto const& [addr, n] : masters_)
      n->stop();
}

void cluster_node::reconnect()
{
   for (auto const& [addr, n] : masters_)
      n->reconnect();
}

bool cluster_node::quarantined() const noexcept
{
   return std::any_of(masters_.begin(), masters_.end(),
                      [](auto const& m) { return m.second->quarantined(); });
}

judge_failure cluster_node::unjudged() const
{
   for (auto const& [addr, n] : masters_)
      if (auto u = n->unjudged(); !u.why.empty())
         return u;
   return {};
}

void cluster_node::subscribe(std::string const& channel)
{
   // A release channel carries its lock's hash tag: its slot is the lock's.
   run(shards_.subscribe(channel, address_of(owner_of(hash_slot(channel)))), true);
}

void cluster_node::unsubscribe(std::string const& channel)
{
   run(shards_.unsubscribe(channel), true);
}

void cluster_node::do_eval(std::shared_ptr<script_call const> call,
                           std::chrono::milliseconds timeout, std::function<bool()> still_wanted,
                           std::function<void(node_reply&&)> done, bool even_if_silent)
{
   auto const now = clock::now();
   // A release publishes with SPUBLISH on a cluster: the script's sharded twin, same arguments.
   if (auto const& twin = sharded_twin(*call->code); &twin != call->code)
      call = call->with_code(twin);
   // Every key of a lock carries its hash tag: the first key's slot is that of them all.
   auto const slot = call->first_key().empty() ? std::uint16_t{0} : hash_slot(call->first_key());
   auto c = std::make_shared<routed_call>(routed_call{std::move(call), now, now + timeout,
                                                      std::move(still_wanted), std::move(done),
                                                      even_if_silent, slot, 0, nullptr, false});
   if (even_if_silent) {
      // Followed to a new master, should a failover take the slot meanwhile (reroute).
      if (owned_.size() >= 64)
         std::erase_if(owned_, [](auto const& w) { return w.expired(); });
      owned_.push_back(c);
   }
   if (!unsupported_.empty()) {
      node_reply never_sent;
      never_sent.sent = false;
      return refuse(*c, std::move(never_sent));
   }
   route(c, owner_of(slot), false);
}

void cluster_node::route(std::shared_ptr<routed_call> c, std::shared_ptr<redis_node> to,
                         bool asking)
{
   auto const left =
      std::max(std::chrono::ceil<std::chrono::milliseconds>(c->deadline - clock::now()),
               std::chrono::milliseconds{1});
   c->at = to;
   auto on = [self = shared_from_this(), c, to](node_reply&& r) {
      self->on_reply(c, to, std::move(r));
   };
   if (asking)
      to->eval_asking(c->call, left, c->still_wanted, std::move(on));
   else if (c->even_if_silent)
      to->eval_even_if_silent(c->call, left, c->still_wanted, std::move(on));
   else
      to->eval(c->call, left, c->still_wanted, std::move(on));
}

void cluster_node::on_reply(std::shared_ptr<routed_call> c, std::shared_ptr<redis_node> from,
                            node_reply&& r)
{
   // A copy sent before the call was rerouted to a new master: that one answers for it.
   if (c->finished || c->at != from)
      return;
   // Sent before a master's check answered: refused all the same (the key, if the script set
   // one, expires by its TTL; no release could publish it).
   if (!unsupported_.empty() && !stopped_)
      return refuse(*c, std::move(r));
   // What the server said, unless the call failed on the way or the node is stopping.
   auto const said = r.ec || stopped_ ? std::string_view{} : std::string_view{r.server_message};
   auto const redir = parse_redirect(said);
   // A multi-key call whose keys a migration under way has split between two nodes; or a script
   // that met a key the migration may have moved, and stopped there. That one ran up to there:
   // sent again as after TRYAGAIN (our scripts may run again over what they wrote), and if the
   // slot outlasts the call, a call that may have written (an acquire's key is then owed a
   // release, as a timed-out call's is).
   bool const cut_short = stopped_in_a_moving_slot(said);
   c->ran = c->ran || cut_short;
   bool const again = cut_short || said.starts_with("TRYAGAIN");
   if (!(redir || again)) {
      // A WAIT that the master's demotion cut short (a failover under way): the script ran.
      bool const demoted = unblocked_by_a_demotion(said);
      if (!stopped_ && (master_may_be_gone(r) || demoted))
         refresh_soon();
      // A cluster that lost a master and has not promoted its replica yet, or a master demoted
      // under a WAIT: passing, as a timeout is, so the engine tries again within the caller's
      // wait instead of giving up on a server error (a call that may have written, so an
      // acquire's key is owed a release). The message stays, for the report.
      if (!r.ec && (r.server_message.starts_with("CLUSTERDOWN") || demoted))
         r.ec = asio::error::try_again;
      r.sent = r.sent || c->ran;  // a LOADING new master's, after a copy that may have run
      return finish(std::move(c), std::move(r));
   }
   auto const plan = plan_redirect(again, c->redirections, c->deadline - clock::now());
   if (plan.give_up || !c->still_wanted())
      return slot_in_motion(std::move(c), std::move(r));
   ++c->redirections;
   if (!again)
      log_(log_level::debug, [&] { return from->name() + ": " + r.server_message; });
   auto to = again ? owner_of(c->slot) : follow(*redir);
   bool const asking = redir && redir->ask;
   if (plan.pause.count() == 0)
      return route(std::move(c), std::move(to), asking);
   auto t = std::make_shared<asio::steady_timer>(ex_, plan.pause);
   t->async_wait([self = shared_from_this(), c = std::move(c), to = std::move(to), asking,
                  t](error_code) mutable {
      // After TRYAGAIN, to the slot's owner as the map says then.
      auto const& next = asking ? to : self->owner_of(c->slot);
      self->route(std::move(c), next, asking);
   });
}

std::shared_ptr<redis_node> cluster_node::follow(redirect const& redir)
{
   auto to = redir.to;
   if (to.host.empty())  // a node that does not know its own address: reached as the seeds are
      to.host = url_.seeds.front().host;
   auto target = master_for(to);
   if (!redir.ask) {
      // The slot has a new master for good: the map is stale, and more slots may have moved.
      owner_[redir.slot] = target;
      refresh();
   }
   return target;
}

void cluster_node::slot_in_motion(std::shared_ptr<routed_call> c, node_reply&& r)
{
   // The call's time ran out while its slot was in motion: a passing failure that the engine
   // tries again within the caller's wait, a renewal within the lease's validity and a release
   // until the key expires. Where a redirection or TRYAGAIN is all that each node answered, the
   // script ran nowhere, so the call fails as one that was never sent, and no release is owed
   // for it; one that a send ran part way (`ran`) may have written, and counts as sent.
   r.ec = asio::error::try_again;
   r.sent = c->ran;
   r.server_message = "slot " + std::to_string(c->slot) + " in motion: " + r.server_message;
   finish(std::move(c), std::move(r));
}

void cluster_node::finish(std::shared_ptr<routed_call> c, node_reply&& r)
{
   c->finished = true;
   // A release that the master answered: its DEL may be lost with that master (reroute).
   if (c->call->code == &sharded_twin(release_script()) && !r.ec && !r.resp.has_error())
      releases_.add(c->call, clock::now());
   r.latency = clock::now() - c->start;
   c->done(std::move(r));
}

}  // namespace locksmith::detail
