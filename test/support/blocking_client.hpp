// A tiny blocking Redis client, to assert on a server's state from a test or a benchmark without
// an io_context: one fresh connection, RESP2, one deadline for everything sent on it. No Boost.Test
// here: the benchmarks use it too.
#pragma once

#include <chrono>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace locksmith::test {

// A parsed RESP2 reply. `str` holds the text of status, error and bulk replies; `integer` the value
// of an integer reply; `elements` the items of an array. A nil bulk string and a nil array both
// parse as `nil`.
struct reply {
   enum class kind { status, error, integer, bulk, nil, array };
   kind type = kind::nil;
   std::string str;
   long long integer = 0;
   std::vector<reply> elements;
};

// The reply as text: status, bulk or error text, an integer in decimal, "(nil)" for nil. Arrays are
// rejected with std::runtime_error, since a flattened array would hide what the caller meant to
// check.
std::string reply_text(reply const& r);

// The default bound on one exchange: long enough for a loaded CI machine, short enough that a test
// that talks to a paused server fails quickly.
inline constexpr std::chrono::milliseconds default_command_timeout{2000};

// One connection to host:port (a name or an address), on which every operation shares one deadline,
// so that a command to a paused server fails after `timeout` in total rather than per syscall.
// Throws std::runtime_error when connecting, sending or receiving fails or runs out of time, and on
// a malformed reply; an error reply is returned (type == kind::error), not thrown.
class blocking_client {
public:
   blocking_client(std::string const& host, std::string const& port,
                   std::chrono::milliseconds timeout = default_command_timeout);
   ~blocking_client();
   blocking_client(blocking_client const&) = delete;
   blocking_client& operator=(blocking_client const&) = delete;

   // Sends one command as a RESP array and reads its reply.
   reply command(std::span<std::string_view const> args);
   reply command(std::initializer_list<std::string_view> args)
   {
      return command(std::span{args.begin(), args.size()});
   }
   reply command(std::vector<std::string> const& args);

   // Reads one more reply without sending anything: a message pushed to a subscriber.
   reply receive();

private:
   void connect(std::string const& host, std::string const& port);
   void write_all(std::string_view data);
   reply read_reply();
   std::string read_line();
   std::string read_bulk(std::size_t n);
   long long read_integer(std::string_view text) const;
   void fill();
   void wait_for(short events, char const* step);
   [[noreturn]] void fail(char const* step) const;
   [[noreturn]] void malformed(std::string const& why) const;

   std::chrono::steady_clock::time_point deadline_;
   std::string endpoint_;  // "<host>:<port>"
   std::string what_;      // "<step> on <host>:<port>", for the messages of errors
   int fd_ = -1;
   std::string buffer_;
   std::size_t pos_ = 0;
};

}  // namespace locksmith::test
