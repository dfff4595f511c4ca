// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// A node's subscriber connection (transport/subscriber_link.hpp) whose pushes are kept in order,
// as the link hands them to the release listener: for the tests of what a real server's pushes
// become on their way in. Stopped when it goes, also when a test gives up half way.
#pragma once

#include <locksmith/config.hpp>

#include "sansio/pushes.hpp"
#include "sansio/url.hpp"
#include "transport/subscriber_link.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace locksmith::test {

class recorded_link {
public:
   using push_event = locksmith::detail::push_event;
   using kind = push_event::kind;

   /// Connects to `url` (a plain node's) and keeps what it receives; `cfg` gives the credentials'
   /// absence, the TLS and the prefix (whose connection marker it subscribes to first).
   recorded_link(boost::asio::any_io_executor ex, std::string const& url, config const& cfg)
   {
      auto const node = locksmith::detail::parse_url(url);
      if (!node)
         throw std::invalid_argument("recorded_link: not a node URL: " + url);
      link_ = std::make_shared<locksmith::detail::subscriber_link>(std::move(ex), *node, cfg);
      link_->start([this](push_event const& e) { got.push_back(e); });
   }
   recorded_link(recorded_link const&) = delete;
   recorded_link& operator=(recorded_link const&) = delete;
   ~recorded_link() { link_->stop(); }

   void subscribe(std::string const& channel) { link_->subscribe(channel); }

   /// The first push of kind `k` about `channel` (empty: none, as a refusal's), or got.end().
   std::vector<push_event>::const_iterator first(kind k, std::string const& channel) const
   {
      return std::find_if(got.begin(), got.end(),
                          [&](push_event const& e) { return e.what == k && e.channel == channel; });
   }
   std::size_t count(kind k, std::string const& channel) const
   {
      return static_cast<std::size_t>(
         std::count_if(got.begin(), got.end(),
                       [&](push_event const& e) { return e.what == k && e.channel == channel; }));
   }

   std::vector<push_event> got;  // in the order received

private:
   std::shared_ptr<locksmith::detail::subscriber_link> link_;
};

}  // namespace locksmith::test
