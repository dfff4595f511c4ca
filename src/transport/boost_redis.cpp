// Boost.Redis is header-only; its implementation is compiled once, here (about 11 s).
#include <boost/redis/src.hpp>
