// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
//
// http_gateway: an HTTP/1.1 server that sells the stock of items without overselling, however
// many gateways run and however many buyers hurry. `POST /buy/<item>` reads the stock, decides
// and writes it back while holding the lock `stock/<item>`. Its `Idempotency-Key` header names
// the purchase: the answer is stored under it (idem:<item>:<key>, for an hour), so that a retry
// gets the same answer and buys nothing more. The write is fenced: Redis takes it only with a
// fencing token above the last one stored (fence:<item>), so a gateway frozen past its lease
// cannot write over a later holder's sale. `GET /stock/<item>` reads the stock; `GET /metrics`
// serves the lock client's metrics in Prometheus' text format. Every item starts with --stock
// units, seeded when first asked for (start over: redis-cli del stock:<item> fence:<item>).
// Coroutines throughout, on one thread, or on N with --threads N: then, as in Beast's servers,
// each HTTP connection runs on a strand of its own, and all of them share one lock client, which
// they call with no hop by hand (unlike the Boost.Redis connection, see exec). The client, the
// data connection and the accept loop run on a strand of their own (ctx.ex).
// test/integration/test_http_gateway.cpp runs two of them, and one on 4 threads under 8 threads
// of buyers; --ttl-ms and --hold-ms are there for it.
//
// Run:    ./build/examples/http_gateway redis://127.0.0.1:6379 8080 --stock 50 [--threads 4]
//         curl -s -X POST -H 'Idempotency-Key: order-1' localhost:8080/buy/widget
//         curl -s localhost:8080/stock/widget; curl -s localhost:8080/metrics
// Watch:  redis-cli monitor     (the lock's EVALSHA, then GETs, and the fenced write's EVAL)
// Ctrl-C stops accepting, lets the requests in flight finish, and closes idle connections.
#include "example.hpp"

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

// Writes the stock and the answer, and stores the fence, only if the fence is above the last
// one stored. (Fences are below 2^53, so Lua's numbers hold them exactly.)
constexpr char const* fenced_write = R"(
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[1]) <= last then return 0 end
redis.call('SET', KEYS[2], ARGV[1])
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SET', KEYS[3], ARGV[3], 'EX', 3600)
return 1)";

// An HTTP connection, touched on its own strand only.
struct connection {
   boost::beast::tcp_stream stream;
   bool idle = false;     // waiting for its next request
   bool closing = false;  // Ctrl-C: answer the request in flight, if any, then close
};

struct gateway {
   asio::any_io_executor ex;  // ctx.ex: the accept loop's, the lock client's and db's strand
   asio::io_context& ioc;
   long seed;
   std::chrono::milliseconds ttl;
   std::chrono::milliseconds hold;  // --hold-ms, for tests: a pause before each write
   locksmith::client& locks;
   redis::connection& db;
   tcp::acceptor acceptor;
   std::set<std::shared_ptr<connection>> open{};                           // touched on ex only
   asio::steady_timer drained{ex, asio::steady_timer::time_point::max()};  // when open is empty

   // Boost.Redis's connection, unlike the lock client, must be called on its own executor: the
   // call hops there and back (a coroutine frame and two posts, small beside the round trip).
   template <class Response>
   asio::awaitable<void> exec(redis::request const& req, Response& res)
   {
      auto call = db.async_exec(req, res, asio::cancel_after(2s, asio::use_awaitable));
      co_await asio::co_spawn(ex, std::move(call), asio::use_awaitable);
   }

   // Seeds the item if it is new; reads its stock, and the answer stored under `key` if any.
   asio::awaitable<std::pair<long, std::optional<std::string>>> read(std::string const& item,
                                                                     std::string const& key)
   {
      redis::request req;
      req.push("SET", "stock:" + item, seed, "NX");
      req.push("GET", "stock:" + item);
      req.push("GET", "idem:" + item + ':' + key);
      redis::response<std::optional<std::string>, long, std::optional<std::string>> got;
      // Requests wait for the connection: exec bounds the wait, in case Redis is down.
      co_await exec(req, got);
      co_return std::pair{std::get<1>(got).value(), std::get<2>(got).value()};
   }

   // Runs under the lock: the only reader-writer of stock:<item> and idem:<item>:* among all the
   // gateways (so answers are kept per item, as the lock is). A lost lease cancels it; a write
   // that goes out all the same (the gateway was frozen) is refused by its fence: `refused`.
   asio::awaitable<std::string> sell_one(std::string const& item, std::string const& key,
                                         std::uint64_t fence, bool& refused)
   {
      auto [left, done] = co_await read(item, key);
      if (done)
         co_return *done;  // a retry: the same answer, nothing bought
      bool const ok = left > 0;
      left -= ok;
      auto answer = json::serialize(json::object{{"item", item}, {"ok", ok}, {"left", left}});
      if (hold.count() > 0)
         co_await pause_for_test(item, fence);
      // The stock, the answer and the fence change together, or not at all.
      redis::request write;
      write.push("EVAL", fenced_write, 3, "stock:" + item, "fence:" + item,
                 "idem:" + item + ':' + key, fence, left, answer);
      redis::response<int> written;
      co_await exec(write, written);
      refused = std::get<0>(written).value() == 0;
      co_return answer;
   }

   // --hold-ms: a pause that the lease cannot see, as a frozen process's (so neither the lease's
   // loss nor anything else cancels this body from here on). Says "holding" on stdout, then waits
   // for hold-ms or for SIGCONT, whichever comes first: a test freezes the gateway with SIGSTOP
   // past the TTL, and its SIGCONT sends the write out late.
   asio::awaitable<void> pause_for_test(std::string const& item, std::uint64_t fence)
   {
      auto const never = [](asio::cancellation_type) { return asio::cancellation_type::none; };
      co_await asio::this_coro::reset_cancellation_state(never);
      co_await asio::this_coro::throw_if_cancelled(false);
      auto const here = co_await asio::this_coro::executor;            // the connection's strand
      auto paused = std::make_shared<asio::steady_timer>(here, hold);  // outlives the handler
      asio::signal_set resumed{here, SIGCONT};
      resumed.async_wait([paused](boost::system::error_code ec, int) {
         if (!ec)
            paused->cancel();
      });
      std::cout << "holding " << item << " fence " << fence << std::endl;
      co_await paused->async_wait(asio::as_tuple);
   }

   asio::awaitable<response> handle(http::request<http::string_body> const& req)
   {
      std::string_view const target = req.target();
      std::string const item{target.substr(target.find('/', 1) + 1)}, key{req["Idempotency-Key"]};
      if (req.method() == http::verb::get && target.starts_with("/stock/") && plain(item)) {
         std::string const no_key;
         auto [left, _] = co_await read(item, no_key);
         co_return reply(http::status::ok, {{"item", item}, {"left", left}});
      }
      if (req.method() == http::verb::get && target == "/metrics") {
         response res{http::status::ok, 11, locksmith::to_prometheus(locks.metrics())};
         res.set(http::field::content_type, "text/plain; version=0.0.4");
         co_return res;
      }
      bool const buy = req.method() == http::verb::post && target.starts_with("/buy/");
      if (!buy || !plain(item) || !plain(key))
         co_return reply(http::status::bad_request,
                         {{"error", "GET /stock/<item> or POST /buy/<item> with Idempotency-Key"}});
      bool refused = false;
      auto const name = "stock/" + item;  // (GCC 12: no temporary string in a co_await)
      auto [ec, answer] = co_await locksmith::async_with_lock(
         locks, name, {.ttl = ttl, .wait = 5s},
         [&](locksmith::lease& l) { return sell_one(item, key, l.fencing_token(), refused); },
         asio::as_tuple);
      // wait_timeout, quorum_unreachable, a Redis error, or lease_lost (the sale may then have
      // happened, unless its write was refused: the client retries with the same key, and
      // learns the outcome).
      if (ec || refused)
         co_return reply(http::status::service_unavailable,
                         {{"error", ec ? ec.message() : "lease lost"}, {"write_refused", refused}});
      auto const sold = json::parse(answer);
      co_return reply(sold.at("ok").as_bool() ? http::status::ok : http::status::conflict, sold);
   }

   asio::awaitable<void> session(std::shared_ptr<connection> c)
   {
      boost::beast::flat_buffer buffer;
      for (bool keep_alive = true; keep_alive && !c->closing;) {
         http::request<http::string_body> req;
         c->stream.expires_after(30s);
         c->idle = true;
         auto [ec, n] = co_await http::async_read(c->stream, buffer, req, asio::as_tuple);
         c->idle = false;
         if (ec)
            break;
         response res;
         try {
            res = co_await handle(req);
         } catch (std::exception const& e) {  // Redis down, or too slow
            auto const why = std::string{"Redis: "} + e.what();
            res = reply(http::status::service_unavailable, {{"error", why}});
         }
         keep_alive = req.keep_alive() && !c->closing;
         res.keep_alive(keep_alive);
         res.prepare_payload();
         co_await http::async_write(c->stream, res);
      }
      c->stream.socket().shutdown(tcp::socket::shutdown_send);
   }

   // Until Ctrl-C, which cancels the accept.
   asio::awaitable<void> listen()
   {
      for (;;) {
         auto [ec, socket] = co_await acceptor.async_accept(asio::make_strand(ioc), asio::as_tuple);
         if (ec)
            break;
         auto c = std::make_shared<connection>(boost::beast::tcp_stream{std::move(socket)});
         open.insert(c);
         auto done = [this, c](std::exception_ptr) {  // on c's strand: `open` is on ex
            asio::post(ex, [this, c] {
               if (open.erase(c) && open.empty())
                  drained.cancel();
            });
         };
         asio::co_spawn(c->stream.get_executor(), session(c), done);
      }
      // Stop accepting, close the idle connections, and let the requests in flight finish; main()
      // then closes the connections to Redis (the releases the client owns go out first).
      co_await asio::this_coro::reset_cancellation_state();
      acceptor.close();
      for (auto const& c : open)
         asio::post(c->stream.get_executor(), [c] {
            c->closing = true;
            if (c->idle)
               c->stream.cancel();
         });
      if (!open.empty())
         co_await drained.async_wait(asio::as_tuple);
   }
};

// Arguments after the URL: [port] [--stock N] [--threads N] [--ttl-ms N] [--hold-ms N].
asio::awaitable<int> co_main(example::context& ctx)
{
   std::vector<std::string> args;
   long seed = 100, threads = 1, ttl_ms = 5000, hold_ms = 0;
   for (std::size_t i = 0; i < ctx.args.size(); ++i) {
      std::string_view const arg = ctx.args[i];
      bool const valued = i + 1 < ctx.args.size() && arg.starts_with("--");
      if (valued && arg == "--stock")
         seed = std::atol(ctx.args[++i].c_str());
      else if (valued && arg == "--threads")
         threads = std::clamp(std::atol(ctx.args[++i].c_str()), 1L, 64L);
      else if (valued && arg == "--ttl-ms")
         ttl_ms = std::atol(ctx.args[++i].c_str());
      else if (valued && arg == "--hold-ms")
         hold_ms = std::atol(ctx.args[++i].c_str());
      else
         args.push_back(ctx.args[i]);
   }
   auto const port = static_cast<unsigned short>(args.size() > 0 ? std::stoi(args[0]) : 8080);
   auto const ex = ctx.ex;
   gateway gw{.ex = ex,
              .ioc = ctx.ioc(),
              .seed = seed,
              .ttl = std::chrono::milliseconds{ttl_ms},
              .hold = std::chrono::milliseconds{hold_ms},
              .locks = ctx.locks,
              .db = ctx.data(),
              .acceptor = {ex, {asio::ip::make_address("127.0.0.1"), port}}};
   // Port 0 takes a free one: the line says which (the tests read it).
   std::cout << "listening on http://127.0.0.1:" << gw.acceptor.local_endpoint().port()
             << ", items start with " << seed << ", " << threads << " threads" << std::endl;
   ctx.run_on_threads(static_cast<int>(threads));
   co_await gw.listen();
   std::cout << "stopped\n";
   co_return 0;
}
