// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
//
// http_gateway: an HTTP/1.1 server that sells the stock of items without overselling, however
// many gateways run and however many buyers hurry. `POST /buy/<item>` reads the stock, decides
// and writes it back while holding the lock `stock/<item>`. Its `Idempotency-Key` header names
// the purchase: the answer is stored under it (idem:<item>:<key>, for an hour), so that a retry
// gets the same answer and buys nothing more. `GET /stock/<item>` reads the stock. Every item
// starts with --stock units, seeded when first asked for (start over: redis-cli del stock:<item>).
// One io_context, one thread, coroutines throughout.
//
// Run:    ./build/examples/http_gateway redis://127.0.0.1:6379 8080 --stock 50
//         curl -s -X POST -H 'Idempotency-Key: order-1' localhost:8080/buy/widget
//         curl -s localhost:8080/stock/widget
// Watch:  redis-cli monitor     (the lock's EVALSHA, then GET/SET of stock:<item> and idem:...)
// Ctrl-C stops accepting, lets the requests in flight finish, and closes idle connections.
#include <locksmith/locksmith.hpp>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <boost/json/src.hpp>  // Boost.JSON, compiled into this one file
#include <boost/redis/connection.hpp>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <set>

namespace asio = boost::asio;
namespace http = boost::beast::http;
namespace json = boost::json;
namespace redis = boost::redis;
using asio::ip::tcp;
using namespace std::chrono_literals;
using response = http::response<http::string_body>;

response reply(http::status status, json::value const& body)
{
   response res{status, 11, json::serialize(body)};
   res.set(http::field::content_type, "application/json");
   return res;
}

// Item names and idempotency keys become parts of Redis keys: keep them plain.
bool plain(std::string_view s)
{
   auto ok = [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_' || c == '.'; };
   return !s.empty() && s.size() <= 64 && std::ranges::all_of(s, ok);
}

// The data connection, from the redis://host:port URL (no user, password or database here).
redis::config redis_config(std::string_view url)
{
   redis::config cfg;
   url.remove_prefix(url.starts_with("redis://") ? 8 : 0);
   auto const colon = url.rfind(':');
   cfg.addr.host = url.substr(0, colon);
   cfg.addr.port = colon == url.npos ? "6379" : url.substr(colon + 1);
   return cfg;
}

struct gateway {
   asio::io_context& ioc;
   long seed;
   locksmith::client locks;
   redis::connection db{ioc, redis::logger{redis::logger::level::warning}};
   tcp::acceptor acceptor;
   asio::signal_set signals{ioc, SIGINT, SIGTERM};
   std::set<boost::beast::tcp_stream*> idle{};  // connections waiting for their next request
   int sessions = 0;
   asio::steady_timer drained{ioc, asio::steady_timer::time_point::max()};  // when sessions is 0
   bool stopping = false;

   // Seeds the item if it is new; reads its stock, and the answer stored under `key` if any.
   asio::awaitable<std::pair<long, std::optional<std::string>>> read(std::string const& item,
                                                                     std::string const& key)
   {
      redis::request req;
      req.push("SET", "stock:" + item, seed, "NX");
      req.push("GET", "stock:" + item);
      req.push("GET", "idem:" + item + ':' + key);
      redis::response<std::optional<std::string>, long, std::optional<std::string>> got;
      // Requests wait for the connection: bound the wait, in case Redis is down.
      co_await db.async_exec(req, got, asio::cancel_after(2s));
      co_return std::pair{std::get<1>(got).value(), std::get<2>(got).value()};
   }

   // Runs under the lock: the only reader-writer of stock:<item> and idem:<item>:* among all the
   // gateways (so answers are kept per item, as the lock is). A lost lease cancels it; a gateway
   // frozen past its lease could still write late, which fencing_token.cpp shows how to refuse.
   asio::awaitable<std::string> sell_one(std::string const& item, std::string const& key)
   {
      auto [left, done] = co_await read(item, key);
      if (done)
         co_return *done;  // a retry: the same answer, nothing bought
      bool const ok = left > 0;
      left -= ok;
      auto answer = json::serialize(json::object{{"item", item}, {"ok", ok}, {"left", left}});
      // The stock and the answer change together, or not at all.
      redis::request write;
      write.push("MULTI");
      write.push("SET", "stock:" + item, left);
      write.push("SET", "idem:" + item + ':' + key, answer, "EX", 3600);
      write.push("EXEC");
      co_await db.async_exec(write, redis::ignore, asio::cancel_after(2s));
      co_return answer;
   }

   asio::awaitable<response> handle(http::request<http::string_body> const& req)
   {
      std::string_view const target = req.target();
      std::string const item{target.substr(target.find('/', 1) + 1)}, key{req["Idempotency-Key"]};
      if (req.method() == http::verb::get && target.starts_with("/stock/") && plain(item)) {
         auto [left, _] = co_await read(item, "");
         co_return reply(http::status::ok, {{"item", item}, {"left", left}});
      }
      bool const buy = req.method() == http::verb::post && target.starts_with("/buy/");
      if (!buy || !plain(item) || !plain(key))
         co_return reply(http::status::bad_request,
                         {{"error", "GET /stock/<item> or POST /buy/<item> with Idempotency-Key"}});
      auto [ec, answer] = co_await locksmith::async_with_lock(
         locks, "stock/" + item, {.ttl = 5s, .wait = 5s},
         [&](locksmith::lease&) { return sell_one(item, key); }, asio::as_tuple);
      // wait_timeout, quorum_unreachable, a Redis error, or lease_lost (the sale may then have
      // happened: the client retries with the same key, and learns the outcome).
      if (ec)
         co_return reply(http::status::service_unavailable, {{"error", ec.message()}});
      auto const sold = json::parse(answer);
      co_return reply(sold.at("ok").as_bool() ? http::status::ok : http::status::conflict, sold);
   }

   asio::awaitable<void> session(boost::beast::tcp_stream stream)
   {
      boost::beast::flat_buffer buffer;
      for (bool keep_alive = true; keep_alive;) {
         http::request<http::string_body> req;
         stream.expires_after(30s);
         idle.insert(&stream);
         auto [ec, n] = co_await http::async_read(stream, buffer, req, asio::as_tuple);
         idle.erase(&stream);
         if (ec)
            break;
         response res;
         try {
            res = co_await handle(req);
         } catch (std::exception const& e) {  // Redis down, or too slow
            auto const why = std::string{"Redis: "} + e.what();
            res = reply(http::status::service_unavailable, {{"error", why}});
         }
         keep_alive = req.keep_alive() && !stopping;
         res.keep_alive(keep_alive);
         res.prepare_payload();
         co_await http::async_write(stream, res);
      }
      stream.socket().shutdown(tcp::socket::shutdown_send);
   }

   asio::awaitable<void> listen()
   {
      signals.async_wait([this](boost::system::error_code, int) {
         stopping = true;
         acceptor.close();
         for (auto* s : idle)
            s->cancel();
      });
      while (!stopping) {
         auto [ec, socket] = co_await acceptor.async_accept(asio::as_tuple);
         if (ec)
            break;
         ++sessions;
         auto done = [this](std::exception_ptr) {
            if (--sessions == 0)
               drained.cancel();
         };
         asio::co_spawn(ioc, session(boost::beast::tcp_stream{std::move(socket)}), done);
      }
      // Ctrl-C: let the requests in flight finish, then close the connections to Redis.
      if (sessions > 0)
         co_await drained.async_wait(asio::as_tuple);
      co_await locks.async_close(asio::as_tuple);  // the releases it owns go out first
      db.cancel();
      signals.cancel();
      std::cout << "stopped\n";
   }
};

int main(int argc, char** argv)
{
   std::vector<std::string> args;  // [redis-url [port]] [--stock N]
   long seed = 100;
   for (int i = 1; i < argc; ++i)
      if (std::string_view{argv[i]} == "--stock" && i + 1 < argc)
         seed = std::atol(argv[++i]);
      else
         args.push_back(argv[i]);
   std::string const url = args.size() > 0 ? args[0] : "redis://127.0.0.1:6379";
   auto const port = static_cast<unsigned short>(args.size() > 1 ? std::stoi(args[1]) : 8080);

   asio::io_context ioc;
   gateway gw{.ioc = ioc,
              .seed = seed,
              .locks = {ioc.get_executor(), {.nodes = {url}}},
              .acceptor = {ioc, {asio::ip::make_address("127.0.0.1"), port}}};
   gw.db.async_run(redis_config(url), asio::detached);
   asio::co_spawn(ioc, gw.listen(), asio::detached);
   std::cout << "listening on http://127.0.0.1:" << port << ", items start with " << seed << '\n';
   ioc.run();
}
