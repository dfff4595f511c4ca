// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The restart quarantine of a redis_node: learning its server's age and marks on each new
// connection (judge_run, fleet_contacts in sansio/quarantine.hpp), and whether its votes count.
#include "transport/redis_node.hpp"

#include "sansio/quarantine.hpp"

#include <boost/asio/post.hpp>

#include <algorithm>

namespace locksmith::detail {
namespace asio = boost::asio;
namespace redis = boost::redis;

namespace {

// How soon a node that answered INFO with LOADING is asked its uptime again.
constexpr std::chrono::milliseconds uptime_retry{100};

// How soon a node whose INFO failed (an ACL, a proxy without INFO) is asked again: an operator
// who fixes the ACL sees its votes count again without restarting the client.
constexpr std::chrono::milliseconds unjudged_retry{1000};

using contact_response = redis::response<redis::resp3::node, redis::resp3::node>;

// The replies to INFO server and GET of the mark, as owned texts (error() returns a copy).
struct contact_texts {
   explicit contact_texts(contact_response const& resp)
   {
      auto const& [i, m] = resp;
      if (i.has_error())
         info_error = i.error().diagnostic;
      else
         info_text = i->value;
      if (m.has_error())
         mark_error = m.error().diagnostic;
      else if (m->data_type != redis::resp3::type::null)
         mark = m->value;
   }

   contact_replies replies() const
   {
      return {.info = info_text, .info_error = info_error, .mark = mark, .mark_error = mark_error};
   }

   std::optional<std::string> info_text;
   std::string info_error;
   std::optional<std::string> mark;
   std::string mark_error;
};

}  // namespace

bool node_fleet::all_marked() const
{
   if (nodes.size() != contacts.size())
      return false;  // a cluster node among them, or a node not started: not known to hold one
   return std::all_of(nodes.begin(), nodes.end(), [](auto const& weak) {
      auto n = weak.lock();
      return n && n->holds_mark();
   });
}

std::vector<std::string> node_fleet::first_runs() const
{
   std::vector<std::string> out;
   for (auto const& weak : nodes)
      if (auto n = weak.lock(); n && !n->first_run_id_.empty())
         out.push_back(n->first_run_id_);
   return out;
}

bool redis_node::quarantined() const noexcept
{
   if (!unjudged_.why.empty())
      return true;
   if (std::chrono::steady_clock::now() >= trusted_from_)
      return false;
   return !counts_early();
}

bool redis_node::restarted_recently() const noexcept
{
   auto const unknown = std::chrono::steady_clock::time_point::max();
   return unjudged_.why.empty() && trusted_from_ != unknown &&
          std::chrono::steady_clock::now() < young_until_ && !counts_early();
}

unsigned redis_node::run() const noexcept
{
   return run_unknown() || run_id_.empty() ? unknown_run : runs_;
}

bool redis_node::run_unknown() const noexcept
{
   return quarantine_.count() > 0 && unjudged_.why.empty() &&
          trusted_from_ == std::chrono::steady_clock::time_point::max();
}

bool redis_node::counts_early() const noexcept
{
   if (run_id_.empty())
      return false;
   if (!fleet_)
      return marked_now_;  // a cluster's master: its own mark alone, as before
   bool const vouched = marked_now_ || fleet_->contacts.vouched(run_id_) ||
                        (fleet_->contacts.fresh() && run_id_ == first_run_id_);
   // Only once every node holds a mark: see fleet_contacts for why.
   return vouched && fleet_->all_marked();
}

void redis_node::on_command_connection()
{
   // The first connection's INFO was queued at start; a later one may be to a server that
   // restarted meanwhile: distrust it until it says how long it has been up.
   if (++connections_ == 1)
      return;
   trusted_from_ = std::chrono::steady_clock::time_point::max();
   run_id_.clear();  // unknown until it answers: no fresh-fleet pass meanwhile
   marked_now_ = holds_mark_ = told_ = false;
   // Not from inside Boost.Redis's own call to the logger.
   asio::post(cmd_->get_executor(),
              [self = shared_from_this(), n = connections_] { self->learn_uptime(n); });
}

void redis_node::learn_uptime(unsigned connection)
{
   // The server's age and its trusted-run mark in one request, queued ahead of any script of
   // this connection: both are known before the first vote that they decide. Each has a reply of
   // its own, so that an ACL that denies GET does not hide the uptime.
   auto req = std::make_shared<redis::request>();
   req->push("INFO", "server");
   req->push("GET", mark_key_);
   auto resp = std::make_shared<contact_response>();
   auto const asked = std::chrono::steady_clock::now();
   cmd_->exec(
      *req, *resp,
      [self = shared_from_this(), req, resp, connection, asked](error_code ec, std::size_t) {
         // An answer from an older connection says nothing of the server now; a
         // failed one is asked again on the next connection.
         if (ec || connection != std::max(self->connections_, 1u) || self->stopped())
            return;
         contact_texts const c{*resp};
         if (c.info_error.starts_with("LOADING")) {
            // A server that is still loading its data says nothing of its age yet
            // (and is the very case the quarantine is for): ask again, distrusted
            // meanwhile.
            return self->judge_again(connection, uptime_retry);
         }
         auto const now = std::chrono::steady_clock::now();
         self->judged(connection, judge_run(c.replies(), self->mark_key_, now, self->quarantine_),
                      c.mark, now - asked);
      });
}

void redis_node::judge_again(unsigned connection, std::chrono::milliseconds after)
{
   judge_timer_.expires_after(after);
   judge_timer_.async_wait([self = shared_from_this(), connection](error_code ec) {
      if (!ec && connection == std::max(self->connections_, 1u) && !self->stopped())
         self->learn_uptime(connection);
   });
}

void redis_node::judged(unsigned connection, run_judgement j, std::optional<std::string_view> mark,
                        std::chrono::steady_clock::duration asked_for)
{
   auto const now = std::chrono::steady_clock::now();
   bool const was_unjudged = !unjudged_.why.empty();
   if (!j.run_id.empty() && j.run_id != last_run_id_) {
      last_run_id_ = j.run_id;
      ++runs_;
   }
   run_id_ = std::move(j.run_id);
   if (connection == 1 && first_run_id_.empty())
      first_run_id_ = run_id_;
   trusted_from_ = j.trusted_from;
   // trusted_from is the latest end of the quarantine that the uptime allows (Redis counts it
   // in whole seconds, and the server may have answered at any moment of the round trip): the
   // earliest is two seconds and the round trip before.
   young_until_ = trusted_from_ == std::chrono::steady_clock::time_point::max()
                     ? std::chrono::steady_clock::time_point{}
                     : trusted_from_ - asked_for - std::chrono::seconds{2};
   marked_now_ = j.marked_now;
   holds_mark_ = mark.has_value();
   unjudged_ = std::move(j.unjudged);
   if (fleet_ && mark)
      fleet_->contacts.learn_mark(*mark);
   if (!unjudged_.why.empty()) {
      // Told once, at error, until it is judged: the node is out of the vote until the
      // operator acts.
      if (!was_unjudged)
         log_(log_level::error, [&] {
            return name_ + ": its restarts cannot be judged: " + unjudged_.why +
                   "; its votes do not count until they can (give the ACL user +info, or set "
                   "config::restart_quarantine to 0 to go without the quarantine)";
         });
      first_contact_made(connection, {});
      return judge_again(connection, unjudged_retry);
   }
   if (!j.blind.empty())
      log_(log_level::warning, [&] {
         return name_ + ": " + j.blind + ": it sits out its quarantine whatever its siblings' " +
                "marks say (give the ACL user GET and SET on " + mark_key_ + ")";
      });
   first_contact_made(connection, j.contact);
   // A mark read here may vouch for a sibling's run, and this node's may now be trusted: each
   // node of the fleet writes its mark once it trusts its run, and says once that it sits out
   // its quarantine when its fleet's first contacts tell it that it must.
   if (fleet_) {
      for (auto const& weak : fleet_->nodes)
         if (auto n = weak.lock()) {
            n->mark_if_trusted();
            n->log_quarantine();
         }
   } else {
      mark_if_trusted();
      log_quarantine();
   }
   if (now >= trusted_from_)
      return;
   // Marks its run once its uptime trusts it, for the fleet's young nodes to count early later.
   judge_timer_.expires_at(trusted_from_);
   judge_timer_.async_wait([self = shared_from_this(), connection](error_code ec) {
      if (!ec && connection == std::max(self->connections_, 1u) && !self->stopped())
         self->mark_if_trusted();
   });
}

void redis_node::first_contact_made(unsigned connection, first_contact c)
{
   if (fleet_ && connection == 1)
      fleet_->contacts.record(index_, c);
}

void redis_node::mark_if_trusted()
{
   if (run_id_.empty() || marked_now_ || marking_ || !unjudged_.why.empty())
      return;
   bool const old = std::chrono::steady_clock::now() >= trusted_from_;
   bool const fresh = fleet_ && fleet_->contacts.fresh() && run_id_ == first_run_id_;
   bool const vouched = fleet_ && fleet_->contacts.vouched(run_id_);
   if (fresh) {
      // A fresh fleet's marks name all its runs, so that a concurrent first client that meets
      // the fleet half marked finds the unmarked nodes' runs on their siblings.
      mark(make_mark(run_id_, fleet_->first_runs()));
   } else if (old || vouched) {
      mark(make_mark(run_id_));
   } else if (!holds_mark_ && fleet_ && fleet_->contacts.complete()) {
      // A node that sits out its quarantine in a fleet in use: a mark that vouches for no run
      // keeps the fleet from ever looking new while its siblings' votes count.
      mark(std::string{in_use_mark});
   }
}

void redis_node::mark(std::string value)
{
   // Ahead of any script that this node's vote may now count for (one connection, in order).
   // Until it is acknowledged, no young node of the fleet counts early (fleet_contacts).
   marking_ = true;
   auto req = std::make_shared<redis::request>();
   req->push("SET", mark_key_, value);
   auto resp = std::make_shared<redis::generic_response>();
   cmd_->exec(*req, *resp,
              [self = shared_from_this(), req, resp, value = std::move(value),
               run = run_id_](error_code ec, std::size_t) {
                 self->marking_ = false;
                 if (ec || self->stopped() || run != self->run_id_)
                    return;
                 if (!resp->has_error()) {
                    self->holds_mark_ = true;
                    self->marked_now_ = mark_names(value, run);
                    return;
                 }
                 self->log_(log_level::warning, [&] {
                    return self->name_ + ": SET " + self->mark_key_ + " failed (" +
                           resp->error().diagnostic +
                           "): young nodes sit out their quarantine, even in a new fleet";
                 });
              });
}

void redis_node::log_quarantine()
{
   // Not before the fleet's first contacts are all known: a new fleet's young nodes count early.
   auto const now = std::chrono::steady_clock::now();
   auto const unknown = std::chrono::steady_clock::time_point::max();
   if (told_ || !unjudged_.why.empty() || trusted_from_ <= now || trusted_from_ == unknown)
      return;
   if (fleet_ && (!fleet_->contacts.complete() || fleet_->contacts.vouched(run_id_) ||
                  marked_now_ || (fleet_->contacts.fresh() && run_id_ == first_run_id_)))
      return;
   told_ = true;
   log_(log_level::warning, [&] {
      auto const left = std::chrono::duration_cast<std::chrono::milliseconds>(trusted_from_ - now);
      return name_ + ": restarted recently; its votes count again in " +
             std::to_string(left.count()) + " ms (config::restart_quarantine)";
   });
}

}  // namespace locksmith::detail
