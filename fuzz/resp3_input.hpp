// Turns fuzz input into what our parsers read: a generic_response, the RESP3 nodes that
// Boost.Redis hands us (type, aggregate size, depth, value), or an error reply.
//
// The nodes are decoded from the bytes directly, not through Boost.Redis's RESP3 parser: that
// parser (1.92) crashes on malformed input within seconds of fuzzing (fuzz/boost_redis_crashes/),
// which would keep the fuzzer from ever reaching our code. Decoding directly also feeds our
// parsers node sequences that no parser would produce, which they must survive as well.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <boost/redis/resp3/node.hpp>
#include <boost/redis/resp3/type.hpp>
#include <boost/redis/response.hpp>

#include <cstddef>
#include <cstdint>

namespace locksmith::fuzz {

inline boost::redis::resp3::type any_type(FuzzedDataProvider& in)
{
   using boost::redis::resp3::type;
   static constexpr type types[] = {type::array,
                                    type::push,
                                    type::set,
                                    type::map,
                                    type::attribute,
                                    type::simple_string,
                                    type::simple_error,
                                    type::number,
                                    type::doublean,
                                    type::boolean,
                                    type::big_number,
                                    type::null,
                                    type::blob_error,
                                    type::verbatim_string,
                                    type::blob_string,
                                    type::streamed_string,
                                    type::streamed_string_part,
                                    type::invalid};
   return in.PickValueInArray(types);
}

// An error reply (1 in 8), or up to 32 nodes.
inline boost::redis::generic_response response_from(std::uint8_t const* data, std::size_t size)
{
   FuzzedDataProvider in{data, size};
   boost::redis::generic_response resp;
   if (in.ConsumeIntegralInRange<int>(0, 7) == 0) {
      auto const t = any_type(in);
      resp = boost::redis::adapter::error{t, in.ConsumeRandomLengthString(64)};
      return resp;
   }
   auto& nodes = resp.value();
   while (in.remaining_bytes() > 0 && nodes.size() < 32) {
      boost::redis::resp3::node n;
      n.data_type = any_type(in);
      n.aggregate_size = in.ConsumeIntegralInRange<std::size_t>(0, 5);
      n.depth = in.ConsumeIntegralInRange<std::size_t>(0, 3);
      n.value = in.ConsumeRandomLengthString(32);
      nodes.push_back(std::move(n));
   }
   return resp;
}

}  // namespace locksmith::fuzz
