// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "status.hpp"

#include "cli_args.hpp"
#include "exec_options.hpp"

#include <locksmith/client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>
#include <exception>
#include <iostream>
#include <sstream>

namespace locksmith::cli {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr char const* status_help = R"(
Prints what the Redis node(s) know of the lock K, whatever primitive holds it (a lock, a fair
lock, a semaphore, a read-write lock, a reentrant lock): on each node the kind, the holders'
tokens, their owners (the label given with exec --owner, by default host:pid) and the time
they have left, the last fencing token, a fair lock's queued waiters and a
read-write lock's waiting writer; then whether a quorum of nodes shows a holder. It reads, and
writes nothing. --redis as for exec (several URLs: a RedLock's nodes). --json prints one JSON
object instead, with the same fields.

Exit status:
  0    K is held: a quorum of nodes shows the same holder (for a semaphore or readers, at
       least one holder on a quorum of nodes)
  1    K is free
  64   usage error or bad input: bad option, missing or empty --key, malformed --redis URL
  69   Redis unavailable: too few nodes answered (down, refused, timed out, or still
       loading their data after a restart), or the TLS handshake failed; each node's
       reason is printed
  70   a node sent an unexpected reply; the server's message is printed
  77   Redis refused the user or password, or an ACL denied a command the inspection runs
)";

std::string json_string(std::string_view s)
{
   std::string out = "\"";
   for (unsigned char c : s) {
      if (c == '"' || c == '\\') {
         out += '\\';
         out += static_cast<char>(c);
      } else if (c < 0x20) {
         char buf[8];
         std::snprintf(buf, sizeof buf, "\\u%04x", c);
         out += buf;
      } else {
         out += static_cast<char>(c);
      }
   }
   return out + "\"";
}

std::string json_tokens(std::vector<holder_info> const& hs)
{
   std::string out = "[";
   for (auto const& h : hs)
      out += (out.size() > 1 ? "," : "") + std::string{"{\"token\":"} + json_string(h.token) +
             ",\"ttl_ms\":" + std::to_string(h.ttl.count()) +
             ",\"owner\":" + (h.owner.empty() ? "null" : json_string(h.owner)) + "}";
   return out + "]";
}

std::string json_node(node_inspection const& n)
{
   std::string out = "{\"node\":" + json_string(n.node);
   if (n.ec)
      return out + ",\"error\":" + json_string(n.ec.message()) +
             ",\"server_message\":" + json_string(n.server_message) + "}";
   return out + ",\"error\":null,\"kind\":" + json_string(to_string(n.kind)) +
          ",\"held\":" + (n.held() ? "true" : "false") + ",\"holders\":" + json_tokens(n.holders) +
          ",\"writer\":" + (n.writer ? "true" : "false") +
          ",\"writer_waiting\":" + (n.writer_waiting ? "true" : "false") +
          ",\"holds\":" + json_tokens(n.holds) + ",\"waiters\":" + json_tokens(n.waiters) +
          ",\"fence\":" + std::to_string(n.fence) + "}";
}

// "29.5s", "820ms", "no TTL"
std::string left(std::chrono::milliseconds d)
{
   if (d.count() < 0)
      return "no TTL";
   if (d < 10s)
      return std::to_string(d.count()) + "ms";
   return std::to_string(d.count() / 1000) + "." + std::to_string(d.count() % 1000 / 100) + "s";
}

// " by host:42", or nothing for a holder without a label (lock_options::owner)
std::string by(holder_info const& h)
{
   return h.owner.empty() ? std::string{} : " by " + h.owner;
}

void text_tokens(std::ostream& out, char const* what, std::vector<holder_info> const& hs)
{
   for (auto const& h : hs)
      out << "    " << what << " " << h.token << by(h) << " (" << left(h.ttl) << " left)\n";
}

void text_node(std::ostream& out, node_inspection const& n)
{
   out << "  " << n.node << ": ";
   if (n.ec) {
      out << "no answer: " << n.ec.message();
      if (!n.server_message.empty())
         out << " (" << n.server_message << ")";
      out << "\n";
      return;
   }
   out << to_string(n.kind) << ", " << (n.held() ? "held" : "free");
   if (n.kind == lock_kind::semaphore)
      out << ", " << n.holders.size() << " permit(s) in use";
   if (n.writer_waiting)
      out << ", a writer waits";
   out << ", fence " << n.fence << "\n";
   text_tokens(out, n.kind == lock_kind::read_write && !n.writer ? "reader" : "holder", n.holders);
   text_tokens(out, "hold", n.holds);
   text_tokens(out, "waiter", n.waiters);
}

int exit_code_of(error_code ec)
{
   if (ec == error::invalid_argument)
      return ex_usage;
   if (ec == error::auth_failed)
      return ex_noperm;
   if (ec == error::unexpected_reply)
      return ex_software;
   return ex_unavailable;
}

asio::awaitable<int> inspect_and_print(status_args const& a, config cfg)
{
   client c{co_await asio::this_coro::executor, std::move(cfg)};
   if (c.config_error()) {
      std::cerr << "locksmith: malformed --redis URL: expected " << url_forms << "\n";
      co_return ex_usage;
   }
   auto [ec, in] = co_await c.async_inspect(a.key, asio::as_tuple(asio::use_awaitable));
   if (ec == error::invalid_argument) {
      std::cerr << "locksmith: cannot inspect '" << a.key << "': " << ec.message() << "\n";
      co_return ex_usage;
   }
   std::cout << (a.json ? to_json(in) + "\n" : to_text(in));
   std::cout.flush();
   if (ec)
      std::cerr << "locksmith: cannot inspect '" << a.key << "': " << ec.message() << "\n";
   c.cancel();
   co_return ec ? exit_code_of(ec) : in.held() ? 0 : 1;
}

}  // namespace

CLI::App* add_status_command(CLI::App& app, status_args& a)
{
   auto* cmd = app.add_subcommand("status", "Show who holds the lock K, how long is left, who "
                                            "waits");
   cmd->footer(status_help);
   cmd->add_option("--redis", a.nodes,
                   "A Redis node; repeat for RedLock (default redis://127.0.0.1:6379)")
      ->type_name("URL")
      ->allow_extra_args(false);
   cmd->add_option("--key", a.key, "Name of the lock (the Redis key is locksmith:{K})")
      ->type_name("K")
      ->required();
   cmd->add_flag("--json", a.json, "Print one JSON object");
   cmd->add_option("--node-timeout", a.node_timeout, "How long one Redis node may take to answer")
      ->type_name("DURATION")
      ->capture_default_str();
   add_tls_options(*cmd, a.tls_ca, a.tls_cert, a.tls_key);
   return cmd;
}

std::string to_json(inspection const& in)
{
   std::string out =
      "{\"name\":" + json_string(in.name) + ",\"kind\":" + json_string(to_string(in.kind)) +
      ",\"held\":" + (in.held() ? "true" : "false") + ",\"holders\":" + json_tokens(in.holders) +
      ",\"quorum\":" + std::to_string(in.quorum) + ",\"answered\":" + std::to_string(in.answered) +
      ",\"fence\":" + std::to_string(in.fence) + ",\"nodes\":[";
   for (std::size_t i = 0; i < in.nodes.size(); ++i)
      out += (i ? "," : "") + json_node(in.nodes[i]);
   return out + "]}";
}

std::string to_text(inspection const& in)
{
   std::ostringstream out;
   // Without a quorum's answers, "free" would be a guess.
   out << in.name << ": " << to_string(in.kind) << ", "
       << (in.answered < in.quorum ? "unknown"
           : in.held()             ? "held"
                                   : "free")
       << " (quorum " << in.quorum << " of " << in.nodes.size() << " node(s), " << in.answered
       << " answered), fence " << in.fence << "\n";
   for (auto const& h : in.holders)
      out << "  holder " << h.token << by(h) << " (" << left(h.ttl) << " left on a quorum)\n";
   for (auto const& n : in.nodes)
      text_node(out, n);
   return out.str();
}

int run_status(status_args a)
{
   if (a.nodes.empty())
      a.nodes.push_back("redis://127.0.0.1:6379");
   auto const timeout = parse_duration(a.node_timeout);
   if (a.key.empty() || !timeout || *timeout <= 0ms || a.tls_cert.empty() != a.tls_key.empty()) {
      std::cerr << "locksmith: "
                << (a.key.empty() ? "--key must not be empty"
                    : !timeout || *timeout <= 0ms
                       ? "--node-timeout must be a positive duration (e.g. 1s)"
                       : "--tls-cert and --tls-key go together")
                << "\n";
      return ex_usage;
   }
   config cfg{.nodes = a.nodes, .node_timeout = *timeout};
   cfg.tls = {.ca_file = a.tls_ca, .cert_file = a.tls_cert, .key_file = a.tls_key};
   asio::io_context ioc;
   int code = ex_software;
   asio::co_spawn(ioc, inspect_and_print(a, std::move(cfg)), [&](std::exception_ptr e, int c) {
      code = c;
      if (e) {
         try {
            std::rethrow_exception(e);
         } catch (std::exception const& x) {
            std::cerr << "locksmith: " << x.what() << "\n";
         }
         code = ex_software;
      }
      ioc.stop();
   });
   ioc.run();
   return code;
}

}  // namespace locksmith::cli
