// libFuzzer target: replies of the acquire, release and extend scripts (detail::parse_acquire,
// detail::parse_ownership, is_noscript, server_error), from RESP3 nodes or an error reply decoded
// from the fuzz input (resp3_input.hpp). Checks: no crash, and the parsers' own contracts.
#include "sansio/scripts.hpp"
#include "sansio/unfenced_reply.hpp"

#include "resp3_input.hpp"

#include <boost/redis/src.hpp>  // response.ipp and friends, compiled once here

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace locksmith::detail;

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
   auto const resp = locksmith::fuzz::response_from(data, size);
   // An error reply is never a vote, and only an error reply can be NOSCRIPT.
   acquire_reply a;
   ownership o;
   bool const acquire_ok = !parse_acquire(resp, a);
   bool const ownership_ok = !parse_ownership(resp, o);
   if (resp.has_error() && (acquire_ok || ownership_ok))
      std::abort();
   if (is_noscript(resp) && !resp.has_error())
      std::abort();
   if (acquire_ok && ownership_ok)
      std::abort();  // no reply has both shapes
   // The unfenced acquire's plain replies (SET's OK or nil, PTTL) are of a shape of their own.
   bool const unfenced_ok = !parse_unfenced_acquire(resp, a);
   if (unfenced_ok && (resp.has_error() || acquire_ok || ownership_ok))
      std::abort();
   (void)server_error(resp);
   return 0;
}
