// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// Network delay without root or tc netem: a TCP proxy in front of each lock node, which forwards
// bytes both ways and, while a delay is set for that node, holds each chunk for that long.
#ifndef LOCKSMITH_CHAOS_DELAY_PROXY_HPP
#define LOCKSMITH_CHAOS_DELAY_PROXY_HPP

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace locksmith::bench {

/// One proxy per upstream, all served by one thread of their own.
///
/// Each chunk read from either side is written to the other at its arrival time plus the delay
/// set at that moment, in the order it arrived. When one side closes (or fails), the other is
/// closed once what arrived before has been written: a node that is killed, or that kills a
/// client, closes the client's connection too, and a client that goes closes its node connection.
/// A connection to a node that refuses it (being restarted) is closed at once.
class delay_proxies {
public:
   /// Listening sockets on free loopback ports, one in front of each upstream
   /// (`redis://127.0.0.1:PORT`). Plain sockets and no thread: safe to fork() after this.
   /// Throws std::runtime_error when a socket cannot be set up.
   explicit delay_proxies(std::vector<std::string> const& upstream_urls);

   /// stop()
   ~delay_proxies();
   delay_proxies(delay_proxies const&) = delete;
   delay_proxies& operator=(delay_proxies const&) = delete;

   /// `redis://127.0.0.1:PORT` of each proxy, in the order of the upstreams.
   std::vector<std::string> const& urls() const noexcept { return urls_; }

   /// Starts accepting, on the proxies' thread. Call it after the last fork().
   void start();

   /// Every chunk that reaches proxy `i` from now on, either way, is held for `d` (zero: not at
   /// all). May be called from any thread.
   void set_delay(std::size_t i, std::chrono::microseconds d) noexcept;

   /// Closes every connection, both sides, and the listening sockets, and joins the thread.
   void stop() noexcept;

private:
   struct impl;
   std::unique_ptr<impl> impl_;
   std::vector<std::string> urls_;
};

}  // namespace locksmith::bench

#endif
