// Hand-built RESP3 replies, for the unit tests of the parsers of script and command replies.
#pragma once

#include <locksmith/error.hpp>

#include <boost/redis/resp3/node.hpp>
#include <boost/redis/resp3/type.hpp>
#include <boost/redis/response.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace locksmith::test {

// A reply made of these nodes, in the depth-first order in which Boost.Redis reads them.
inline boost::redis::generic_response resp_reply(std::vector<boost::redis::resp3::node> nodes)
{
   boost::redis::generic_response r;
   r.value() = std::move(nodes);
   return r;
}

// An integer at that depth (0: the reply itself; 1: an element of an array).
inline boost::redis::resp3::node number(std::string v, std::size_t depth = 0)
{
   return {boost::redis::resp3::type::number, 1, depth, std::move(v)};
}

}  // namespace locksmith::test

// The names that the tests of reply parsers use: `using namespace locksmith::test::resp_names;` in
// the test's own namespace, not at file scope, which a unity build shares between files.
namespace locksmith::test::resp_names {
using boost::redis::generic_response;
using boost::redis::resp3::node;
using boost::redis::resp3::type;
using locksmith::error;
using locksmith::error_code;
using locksmith::test::number;
using locksmith::test::resp_reply;
}  // namespace locksmith::test::resp_names
