// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "delay_proxy.hpp"

#include "sansio/url.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <deque>
#include <stdexcept>
#include <thread>

namespace locksmith::bench {
namespace {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using clock_type = std::chrono::steady_clock;
using error_code = boost::system::error_code;

constexpr auto tuple = asio::as_tuple(asio::use_awaitable);

struct chunk {
   clock_type::time_point due;
   std::vector<char> bytes;  // empty: the side it came from closed
};

// One direction of a connection: what was read from one side and not yet written to the other.
struct lane {
   explicit lane(asio::any_io_executor const& ex)
       : wake{ex}
   {}
   std::deque<chunk> queue;
   asio::steady_timer wake;  // the writer sleeps on it until the front is due, or a chunk comes
};

struct session {
   session(tcp::socket d, tcp::socket u, std::atomic<std::int64_t> const& delay)
       : down{std::move(d)}
       , up{std::move(u)}
       , to_up{down.get_executor()}
       , to_down{down.get_executor()}
       , delay_us{delay}
   {}

   void close()
   {
      if (closed)
         return;
      closed = true;
      error_code ignored;
      down.close(ignored);
      up.close(ignored);
      to_up.wake.cancel();
      to_down.wake.cancel();
   }

   tcp::socket down, up;  // the client's side, the node's side
   lane to_up, to_down;
   std::atomic<std::int64_t> const& delay_us;
   bool closed = false;
};

asio::awaitable<void> read_side(std::shared_ptr<session> s, tcp::socket& from, lane& out)
{
   std::array<char, 16384> buf;
   for (;;) {
      auto [ec, n] = co_await from.async_read_some(asio::buffer(buf), tuple);
      if (s->closed)
         co_return;
      auto const due = clock_type::now() + std::chrono::microseconds{s->delay_us.load()};
      if (out.queue.empty())
         out.wake.cancel();  // the writer sleeps until a chunk comes
      out.queue.push_back(chunk{due, std::vector<char>(buf.data(), buf.data() + (ec ? 0 : n))});
      if (ec)
         co_return;
   }
}

asio::awaitable<void> write_side(std::shared_ptr<session> s, lane& in, tcp::socket& to)
{
   while (!s->closed) {
      if (in.queue.empty() || in.queue.front().due > clock_type::now()) {
         in.wake.expires_at(in.queue.empty() ? clock_type::time_point::max()
                                             : in.queue.front().due);
         co_await in.wake.async_wait(tuple);  // expired, or woken by a chunk
         continue;
      }
      if (in.queue.front().bytes.empty())
         break;  // the other side closed: close this one too, after what came before
      auto [ec, n] = co_await asio::async_write(to, asio::buffer(in.queue.front().bytes), tuple);
      if (ec)
         break;
      in.queue.pop_front();
   }
   s->close();
}

// The harness forks and execs redis-servers while the proxies run: every socket here is
// close-on-exec from its creation, or a restarted node would hold a client connection open.
asio::awaitable<void> serve(tcp::socket down, tcp::endpoint upstream,
                            std::atomic<std::int64_t> const& delay_us)
{
   auto const ex = down.get_executor();
   tcp::socket up{ex, tcp::v4(), ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
   auto [ec] = co_await up.async_connect(upstream, tuple);
   if (ec)
      co_return;  // the node refused (it is being restarted): the client sees its connection close
   error_code ignored;
   down.set_option(tcp::no_delay{true}, ignored);
   up.set_option(tcp::no_delay{true}, ignored);
   auto s = std::make_shared<session>(std::move(down), std::move(up), delay_us);
   asio::co_spawn(ex, read_side(s, s->down, s->to_up), asio::detached);
   asio::co_spawn(ex, read_side(s, s->up, s->to_down), asio::detached);
   asio::co_spawn(ex, write_side(s, s->to_up, s->up), asio::detached);
   asio::co_spawn(ex, write_side(s, s->to_down, s->down), asio::detached);
}

asio::awaitable<void> accept_loop(tcp::acceptor& acc, tcp::endpoint upstream,
                                  std::atomic<std::int64_t> const& delay_us)
{
   auto const ex = acc.get_executor();
   for (;;) {
      auto [ec] = co_await acc.async_wait(tcp::acceptor::wait_read, tuple);
      if (ec || !acc.is_open())
         co_return;
      int const fd = ::accept4(acc.native_handle(), nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0)
         continue;
      asio::co_spawn(ex, serve(tcp::socket{ex, tcp::v4(), fd}, upstream, delay_us), asio::detached);
   }
}

// Bound and listening, with the port it got.
int listen_on_loopback(int& port)
{
   int const fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
   sockaddr_in addr{};
   addr.sin_family = AF_INET;
   addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
   socklen_t len = sizeof addr;
   bool const ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                   ::listen(fd, SOMAXCONN) == 0 &&
                   ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
   if (!ok) {
      if (fd >= 0)
         ::close(fd);
      throw std::runtime_error("cannot listen on a loopback port for the delay proxy");
   }
   port = ntohs(addr.sin_port);
   return fd;
}

}  // namespace

struct delay_proxies::impl {
   struct proxy {
      int listen_fd = -1;  // until start() gives it to an acceptor
      tcp::endpoint upstream;
      std::atomic<std::int64_t> delay_us{0};
   };
   std::vector<std::unique_ptr<proxy>> proxies;
   std::unique_ptr<asio::io_context> ioc;  // made by start(), after the forks
   std::vector<tcp::acceptor> acceptors;   // declared after ioc: they go first
   std::thread thread;
};

delay_proxies::delay_proxies(std::vector<std::string> const& upstream_urls)
    : impl_{std::make_unique<impl>()}
{
   for (auto const& url : upstream_urls) {
      auto const u = detail::parse_url(url);
      if (!u || u->tls)
         throw std::runtime_error("the delay proxy takes redis://host:port URLs, not " + url);
      auto& p = *impl_->proxies.emplace_back(std::make_unique<impl::proxy>());
      p.upstream = {asio::ip::make_address(u->host),
                    static_cast<unsigned short>(std::stoi(u->port))};
      int port = 0;
      p.listen_fd = listen_on_loopback(port);
      urls_.push_back("redis://127.0.0.1:" + std::to_string(port));
   }
}

delay_proxies::~delay_proxies()
{
   stop();
}

void delay_proxies::start()
{
   impl_->ioc = std::make_unique<asio::io_context>(1);
   impl_->acceptors.reserve(impl_->proxies.size());
   for (auto& p : impl_->proxies) {
      auto& acc =
         impl_->acceptors.emplace_back(*impl_->ioc, tcp::v4(), std::exchange(p->listen_fd, -1));
      asio::co_spawn(*impl_->ioc, accept_loop(acc, p->upstream, p->delay_us), asio::detached);
   }
   impl_->thread = std::thread{[&ioc = *impl_->ioc] { ioc.run(); }};
}

void delay_proxies::set_delay(std::size_t i, std::chrono::microseconds d) noexcept
{
   impl_->proxies[i]->delay_us = d.count();
}

void delay_proxies::stop() noexcept
{
   if (impl_->ioc)
      impl_->ioc->stop();
   if (impl_->thread.joinable())
      impl_->thread.join();
   // Destroying the io_context destroys every session, which closes both of its sockets.
   impl_->acceptors.clear();
   impl_->ioc.reset();
   for (auto& p : impl_->proxies)
      if (p->listen_fd >= 0)
         ::close(std::exchange(p->listen_fd, -1));
}

}  // namespace locksmith::bench
