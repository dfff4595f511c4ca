// The faults that the fake nodes inject (fake_node.hpp): what goes wrong with one node call, and a
// plan shared by the nodes of a test that injects one failure at the n-th node call, counted across
// all nodes, as Beast's fail counters do. Also the parser of the RESP requests that they receive.
#pragma once

#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace locksmith::test {

/// What goes wrong with one node call.
enum class fault {
   none,
   timeout,      ///< the request is lost on the way: no effect; timed_out after the call's timeout
   refused,      ///< the connection is down: no effect; connection_refused at once
   hang,         ///< the node stalls (like SIGSTOP) on this command: it runs, and the node's later
                 ///< commands after it, only after `fault_plan::hang_for`, which the first
                 ///< command that comes meanwhile starts again; the call times out
   lost_reply,   ///< the command runs (the SET lands) but the reply is lost: connection_reset
   error_reply,  ///< the server answers an error (say OOM) without running the command
   noscript,     ///< the node's script cache was flushed just before this command
   wrong_shape,  ///< the command runs, but the reply is of another script's shape, as when a
                 ///< connection matches replies to the wrong requests
   in_motion,    ///< a Redis Cluster slot in motion, or an election (cluster_node's passing
                 ///< failure): no effect; asio::error::try_again at once
};

inline char const* to_string(fault f)
{
   constexpr char const* names[] = {"none",     "timeout",     "refused",
                                    "hang",     "lost_reply",  "error_reply",
                                    "noscript", "wrong_shape", "in_motion"};
   return names[static_cast<int>(f)];
}

/// Injects `what` at the `fail_at`-th node call (1-based, counted over every node; 0: never), and
/// at the `times - 1` calls after it (or the faults of `pattern` in turn).
struct fault_plan {
   std::size_t fail_at = 0;
   fault what = fault::none;
   std::chrono::milliseconds hang_for{100};
   std::size_t times = 1;
   std::vector<fault> pattern;  // if any: the k-th of those calls gets pattern[k % size] instead
   std::size_t calls = 0;       // node calls made so far

   fault next()
   {
      ++calls;
      if (fail_at == 0 || calls < fail_at || calls - fail_at >= times)
         return fault::none;
      return pattern.empty() ? what : pattern[(calls - fail_at) % pattern.size()];
   }
};

/// The words of a RESP array of bulk strings, as request::payload() holds one command.
inline std::vector<std::string> parse_resp_command(std::string_view s)
{
   auto line = [&s]() {
      auto const end = s.find("\r\n");
      if (end == std::string_view::npos)
         throw std::runtime_error("fake_node: truncated RESP");
      auto l = s.substr(0, end);
      s.remove_prefix(end + 2);
      return l;
   };
   auto number = [](std::string_view l) {
      return static_cast<std::size_t>(std::stoull(std::string{l.substr(1)}));
   };
   auto const header = line();
   if (header.empty() || header[0] != '*')
      throw std::runtime_error("fake_node: not a RESP array");
   std::vector<std::string> words(number(header));
   for (auto& w : words) {
      auto const h = line();
      if (h.empty() || h[0] != '$')
         throw std::runtime_error("fake_node: not a bulk string");
      auto const n = number(h);
      if (s.size() < n + 2 || s.substr(n, 2) != "\r\n")
         throw std::runtime_error("fake_node: bad bulk string");
      w = std::string{s.substr(0, n)};
      s.remove_prefix(n + 2);
   }
   if (!s.empty())
      throw std::runtime_error("fake_node: more than one command");
   return words;
}

}  // namespace locksmith::test
