// libFuzzer target: server pushes on a subscriber connection (detail::parse_pushes),
// from RESP3 nodes decoded from the fuzz input (resp3_input.hpp).
// Checks: no crash; `connected` names no channel, and no other event names the marker.
#include "sansio/pushes.hpp"

#include "resp3_input.hpp"

#include <boost/redis/src.hpp>  // response.ipp and friends, compiled once here

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

using namespace locksmith::detail;

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
   auto const resp = locksmith::fuzz::response_from(data, size);
   if (resp.has_error())
      return 0;
   // As a generic_flat_response holds them: views of the nodes.
   std::vector<boost::redis::resp3::node_view> views;
   for (auto const& n : resp.value())
      views.push_back({n.data_type, n.aggregate_size, n.depth, n.value});
   for (auto const& e : parse_pushes(views, "locksmith:")) {
      bool const connected = e.what == push_event::kind::connected;
      if (connected && !e.channel.empty())
         std::abort();  // a new connection names no channel
      if (!connected && e.channel == "locksmith:")
         std::abort();  // the marker's own traffic is never a lock event
   }
   return 0;
}
