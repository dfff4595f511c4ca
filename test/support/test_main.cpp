// The Boost.Test implementation and main(), compiled once for both test binaries (it takes ~16 s).
#define BOOST_TEST_MODULE locksmith
#include <boost/test/included/unit_test.hpp>
