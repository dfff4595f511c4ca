// The Beast gateway example (examples/http_gateway.cpp) as its users run it: two gateway
// processes on one redis-server, many buyers at once, retries with the same idempotency key,
// /metrics scraped and parsed, a gateway frozen with SIGSTOP past its lease whose late write
// its fence refuses, and a gateway on 4 threads under 8 threads of buyers (built with
// -fsanitize=thread, the thread sanitizer watches the gateway, whose report fails the test). Built
// only with the examples (LOCKSMITH_BUILD_TOOLS).
#include "support/integration.hpp"
#include "support/prometheus.hpp"

#include <boost/asio/posix/stream_descriptor.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <set>
#include <thread>
#include <utility>

namespace test_http_gateway {

namespace {

using tcp = asio::ip::tcp;
using locksmith::test::parse_prometheus;

// One gateway process, its stdout read line by line on the test's io_context. stop(), or the
// destructor, stops it (SIGCONT, SIGTERM, then SIGKILL) and reaps it.
class gateway_process {
public:
   gateway_process(asio::io_context& ioc, redis_server const& srv, std::vector<std::string> opts)
       : out_{ioc}
   {
      std::vector<std::string> args{LOCKSMITH_HTTP_GATEWAY_PATH, srv.url(), "0"};
      args.insert(args.end(), opts.begin(), opts.end());
      std::vector<char*> argv;
      for (auto& a : args)
         argv.push_back(a.data());
      argv.push_back(nullptr);
      int fds[2];
      BOOST_TEST_REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
      auto const parent = ::getpid();
      pid_ = ::fork();
      if (pid_ == 0) {
         if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent)
            ::_exit(126);
         ::dup2(fds[1], STDOUT_FILENO);
         ::execv(argv[0], argv.data());
         ::_exit(127);
      }
      ::close(fds[1]);
      out_.assign(fds[0]);
   }

   ~gateway_process() { stop(); }

   // Its exit status once stopped (a thread sanitizer's report makes it 66), or -1 if it had to
   // be killed after 10 s, or was stopped already.
   int stop()
   {
      if (pid_ <= 0)
         return -1;
      ::kill(pid_, SIGCONT);
      ::kill(pid_, SIGTERM);
      int status = 0;
      for (int i = 0; i < 1000 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i)
         ::usleep(10'000);
      if (::kill(pid_, SIGKILL) == 0) {
         ::waitpid(pid_, nullptr, 0);
         status = -1;
      }
      pid_ = -1;
      return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
   }

   pid_t pid() const { return pid_; }
   std::uint16_t port() const { return port_; }

   // The next line that starts with `prefix`, or throws at EOF.
   asio::awaitable<std::string> line(std::string_view prefix)
   {
      for (;;) {
         auto const n = co_await asio::async_read_until(out_, asio::dynamic_buffer(buf_), '\n',
                                                        asio::use_awaitable);
         auto l = buf_.substr(0, n - 1);
         buf_.erase(0, n);
         if (l.starts_with(prefix))
            co_return l;
      }
   }

   // Waits for "listening on http://127.0.0.1:<port>, ...".
   asio::awaitable<void> started()
   {
      auto const l = co_await line("listening on http://127.0.0.1:");
      port_ = static_cast<std::uint16_t>(std::stoi(l.substr(l.rfind(':') + 1)));
   }

   // SIGSTOP, and waits until the process is stopped.
   void freeze()
   {
      ::kill(pid_, SIGSTOP);
      int status = 0;
      BOOST_TEST_REQUIRE(::waitpid(pid_, &status, WUNTRACED) == pid_);
      BOOST_TEST_REQUIRE(WIFSTOPPED(status));
   }

   void thaw() { ::kill(pid_, SIGCONT); }

private:
   asio::posix::stream_descriptor out_;
   std::string buf_;
   pid_t pid_ = -1;
   std::uint16_t port_ = 0;
};

struct http_answer {
   int status = 0;
   std::string body;
};

// One HTTP/1.1 request on a connection of its own (Connection: close), read to its end.
// (Views: a caller's temporary string must not stand in a co_await expression, GCC 12.)
asio::awaitable<http_answer> http(std::uint16_t port, std::string_view method,
                                  std::string_view target, std::string_view key = {})
{
   tcp::socket s{co_await asio::this_coro::executor};
   co_await s.async_connect({asio::ip::make_address("127.0.0.1"), port}, asio::use_awaitable);
   auto req = std::string{method} + ' ' + std::string{target} + " HTTP/1.1\r\n";
   req += "Host: 127.0.0.1\r\nConnection: close\r\nContent-Length: 0\r\n";
   req += (key.empty() ? "" : "Idempotency-Key: " + std::string{key} + "\r\n") + "\r\n";
   co_await asio::async_write(s, asio::buffer(req), asio::use_awaitable);
   std::string raw;
   auto [ec, n] =
      co_await asio::async_read(s, asio::dynamic_buffer(raw), asio::as_tuple(asio::use_awaitable));
   if (ec != asio::error::eof || raw.size() < 12)
      throw std::runtime_error("bad HTTP answer: " + ec.message() + ": " + raw);
   auto const body = raw.find("\r\n\r\n");
   co_return http_answer{std::stoi(raw.substr(9, 3)), raw.substr(body + 4)};
}

// A purchase as a careful client makes it: retried with the same key while the gateway answers
// 503 (the lock not taken in time, or the sale's outcome unknown).
asio::awaitable<http_answer> buy(std::uint16_t port, std::string_view item, std::string_view key)
{
   auto const target = "/buy/" + std::string{item};
   asio::steady_timer pause{co_await asio::this_coro::executor};
   for (;;) {
      auto a = co_await http(port, "POST", target, key);
      if (a.status != 503)
         co_return a;
      pause.expires_after(10ms);
      co_await pause.async_wait(asio::use_awaitable);
   }
}

// One of many buyers at once: keeps the answer under its key.
asio::awaitable<void> buy_into(std::map<std::string, std::set<std::string>>& answers,
                               std::uint16_t port, std::string item, std::string key)
{
   auto const a = co_await buy(port, item, key);
   BOOST_TEST(a.status == 200, a.body);
   answers[key].insert(a.body);
}

// An item name of letters, digits and dashes, unique per test.
std::string unique_item()
{
   auto k = unique_key();
   return "item-" + k.substr(k.rfind('/') + 1);
}

double acquisitions(std::string const& metrics_text)
{
   return parse_prometheus(metrics_text).value("locksmith_acquisitions_total").value();
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(http_gateway, server_fixture, *needs_redis_server())

// 200 buyers at once, over 20 idempotency keys and two gateways: 20 units sold, one answer per
// key. A retry later sells nothing more. Each gateway's /metrics parses, and counts its locks.
BOOST_AUTO_TEST_CASE(two_gateways_sell_exactly_one_unit_per_key)
{
   gateway_process g1{ioc, srv, {"--stock", "1000"}}, g2{ioc, srv, {"--stock", "1000"}};
   auto const item = unique_item();
   std::map<std::string, std::set<std::string>> answers;  // by key
   std::string before1, before2, after1, after2;
   run(ioc, 60s, [&]() -> asio::awaitable<void> {
      co_await g1.started();
      co_await g2.started();
      auto const first1 = co_await http(g1.port(), "GET", "/metrics");
      before1 = first1.body;
      auto const first2 = co_await http(g2.port(), "GET", "/metrics");
      before2 = first2.body;
      task_group buyers{ioc};
      for (int i = 0; i < 200; ++i)
         buyers.spawn(buy_into(answers, i % 2 ? g2.port() : g1.port(), item,
                               "order-" + std::to_string(i % 20)));
      BOOST_TEST(co_await eventually([&] { return buyers.running() == 0; }, 50s));
      BOOST_TEST(srv.text({"GET", "stock:" + item}) == "980");
      // A retry, long after: the same answer, and nothing more sold.
      auto const again = co_await buy(g2.port(), item, "order-7");
      BOOST_TEST(answers["order-7"].count(again.body) == 1u, again.body);
      BOOST_TEST(srv.text({"GET", "stock:" + item}) == "980");
      auto const last1 = co_await http(g1.port(), "GET", "/metrics");
      after1 = last1.body;
      auto const last2 = co_await http(g2.port(), "GET", "/metrics");
      after2 = last2.body;
   }());
   BOOST_TEST(answers.size() == 20u);
   std::set<std::string> lefts;
   for (auto const& [key, bodies] : answers) {
      BOOST_TEST(bodies.size() == 1u, key << " got different answers");
      lefts.insert(*bodies.begin());
   }
   BOOST_TEST(lefts.size() == 20u);  // each key bought its own unit
   for (auto const& [before, after] : {std::pair{before1, after1}, std::pair{before2, after2}}) {
      BOOST_TEST(acquisitions(after) > acquisitions(before), after);
      BOOST_TEST(parse_prometheus(after).types.at("locksmith_lock_wait_seconds") == "histogram");
   }
}

// A gateway frozen (SIGSTOP) between its read and its write, past its lease: another gateway
// sells meanwhile, and the late write, sent once the frozen one resumes, is refused by its
// fence. The stock stays right, and the refused purchase can be retried.
BOOST_AUTO_TEST_CASE(a_frozen_gateways_late_write_is_refused_by_its_fence)
{
   gateway_process frozen{ioc, srv, {"--stock", "5", "--ttl-ms", "1000", "--hold-ms", "60000"}};
   gateway_process other{ioc, srv, {"--stock", "5", "--ttl-ms", "1000"}};
   auto const item = unique_item();
   run(ioc, 30s, [&]() -> asio::awaitable<void> {
      co_await frozen.started();
      co_await other.started();
      std::optional<http_answer> late;
      bool answered = false;
      auto const late_target = "/buy/" + item;
      asio::co_spawn(ioc, http(frozen.port(), "POST", late_target, "late"),
                     [&](std::exception_ptr, http_answer a) {
                        late = std::move(a);
                        answered = true;
                     });
      auto const prefix = "holding " + item;
      auto const holding = co_await frozen.line(prefix);
      frozen.freeze();  // it holds the lock, has read the stock, and has not written
      // The other gateway waits for the frozen one's key to expire, then sells.
      auto const sold = co_await buy(other.port(), item, "on-time");
      BOOST_TEST(sold.status == 200, sold.body);
      BOOST_TEST(sold.body.find(R"("left":4)") != std::string::npos, sold.body);
      auto const fence = srv.text({"GET", "fence:" + item});
      BOOST_TEST(std::stoull(holding.substr(holding.rfind(' ') + 1)) < std::stoull(fence));
      frozen.thaw();  // its write goes out now, with the old fence
      BOOST_TEST_REQUIRE(co_await eventually([&] { return answered; }, 10s));
      auto const refused = late.value_or(http_answer{});
      BOOST_TEST(refused.status == 503, refused.body);
      BOOST_TEST(refused.body.find(R"("write_refused":true)") != std::string::npos, refused.body);
      BOOST_TEST(srv.text({"GET", "stock:" + item}) == "4");
      BOOST_TEST(srv.text({"GET", "fence:" + item}) == fence);
      BOOST_TEST(srv.text({"EXISTS", "idem:" + item + ":late"}) == "0");
      // The buyer retries the refused purchase elsewhere: now it sells.
      auto const retried = co_await buy(other.port(), item, "late");
      BOOST_TEST(retried.body.find(R"("left":3)") != std::string::npos, retried.body);
      auto const scraped = co_await http(frozen.port(), "GET", "/metrics");
      auto const m = parse_prometheus(scraped.body);
      // Its watchdog, woken past the validity, declared the lease lost.
      BOOST_TEST(m.value("locksmith_leases_lost_total").value_or(-1) == 1.0);
   }());
}

// A gateway on 4 threads (a strand per connection, one lock client) and 8 threads of buyers,
// each with its own io_context. Each buyer buys its own item (a lock name of its own) under 10
// keys, and a shared item under 10 keys that all the buyers use, in different orders, and reads
// the stock and /metrics now and then. Every purchase and read answers 200, each key gets one
// answer, and each item sells one unit per key, each unit its own "left" (a sale that read the
// stock beside another, outside the lock, would repeat one). Stopped, the gateway exits 0: a clean
// shutdown, and no report from a thread sanitizer.
BOOST_AUTO_TEST_CASE(a_gateway_on_4_threads_serves_8_threads_of_buyers)
{
   gateway_process gw{ioc, srv, {"--stock", "1000", "--threads", "4"}};
   run(ioc, 30s, gw.started());
   auto const shared = unique_item();
   constexpr int buyers = 8, rounds = 20;
   struct purchase {
      std::string item, key;
      http_answer answer;
   };
   std::vector<std::vector<purchase>> bought(buyers);  // each thread writes its own
   std::vector<std::string> failed(buyers);
   std::vector<std::vector<http_answer>> reads(buyers);  // GET /stock/<item> and /metrics
   std::vector<std::thread> threads;
   for (int t = 0; t < buyers; ++t)
      threads.emplace_back([&, t] {
         asio::io_context own;
         auto const mine = shared + "-own" + std::to_string(t);
         auto purchases = [&]() -> asio::awaitable<void> {
            for (int i = 0; i < rounds; ++i) {
               auto const key = "order-" + std::to_string((i / 2 + t) % 10);
               auto const& item = i % 2 ? shared : mine;
               auto answer = co_await buy(gw.port(), item, key);
               bought[t].push_back({item, key, std::move(answer)});
               if (i % 5 == 4) {  // reads beside the sales: /stock and the client's metrics
                  auto const target = i % 10 == 9 ? "/metrics" : "/stock/" + item;
                  reads[t].push_back(co_await http(gw.port(), "GET", target));
               }
            }
         };
         try {
            run(own, 120s, purchases());
         } catch (std::exception const& e) {
            failed[t] = e.what();
         }
      });
   for (auto& t : threads)
      t.join();

   std::map<std::string, std::map<std::string, std::set<std::string>>> answers;  // item, key
   for (int t = 0; t < buyers; ++t) {
      BOOST_TEST(failed[t].empty(), "buyer " << t << ": " << failed[t]);
      BOOST_TEST(bought[t].size() == std::size_t{rounds});
      for (auto const& r : reads[t])
         BOOST_TEST(r.status == 200, r.body);
      for (auto const& p : bought[t]) {
         BOOST_TEST(p.answer.status == 200, p.answer.body);
         answers[p.item][p.key].insert(p.answer.body);
      }
   }
   BOOST_TEST(answers.size() == std::size_t{buyers + 1});
   for (auto const& [item, by_key] : answers) {
      std::set<std::string> lefts;
      for (auto const& [key, bodies] : by_key) {
         BOOST_TEST(bodies.size() == 1u, item << ' ' << key << " got different answers");
         lefts.insert(*bodies.begin());
      }
      BOOST_TEST(lefts.size() == 10u, item);  // each key bought its own unit
      BOOST_TEST(srv.text({"GET", "stock:" + item}) == "990", item);
   }
   BOOST_TEST(gw.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_http_gateway
