// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "transport/redis_config.hpp"

namespace locksmith::detail {

boost::redis::config make_redis_config(node_url const& url, config const& cfg,
                                       std::string const& client_name)
{
   boost::redis::config rc;
   rc.addr = {url.host, url.port};
   rc.use_ssl = url.tls;
   // With Sentinels, Boost.Redis asks them for the master's address on every (re)connection,
   // and sends ROLE after the setup below to check that it reached a master.
   for (auto const& s : url.sentinels)
      rc.sentinel.addresses.push_back({s.host, s.port});
   rc.sentinel.master_name = url.master_name;
   rc.sentinel.request_timeout = std::chrono::seconds{2};
   rc.use_setup = true;
   rc.setup.clear();
   if (url.user.empty() && url.password.empty())
      rc.setup.hello_setname(client_name);
   else
      rc.setup.hello_setname(url.user.empty() ? "default" : url.user, url.password, client_name);
   if (url.database != 0)
      rc.setup.push("SELECT", url.database);
   rc.connect_timeout = std::chrono::seconds{2};
   rc.resolve_timeout = std::chrono::seconds{2};
   rc.ssl_handshake_timeout = std::chrono::seconds{2};
   rc.reconnect_wait_interval = cfg.reconnect_wait;
   rc.health_check_interval = cfg.health_check_interval;
   // Each read first grows the read buffer by this much, and zero-fills the growth: 4096 bytes
   // (the default) cost a lock cycle about as many instructions as all of its own work on two
   // replies of a few dozen bytes. A larger reply (a watchdog batch's) takes a few more reads.
   rc.read_buffer_append_size = 512;
   return rc;
}

}  // namespace locksmith::detail
