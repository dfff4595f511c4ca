#include "support/blocking_client.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>

namespace locksmith::test {
namespace {

using clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

std::string encode(std::span<std::string_view const> args)
{
   std::string request = "*" + std::to_string(args.size()) + "\r\n";
   for (auto arg : args) {
      request += "$" + std::to_string(arg.size()) + "\r\n";
      request += arg;
      request += "\r\n";
   }
   return request;
}

}  // namespace

std::string reply_text(reply const& r)
{
   switch (r.type) {
   case reply::kind::status:
   case reply::kind::error:
   case reply::kind::bulk:
      return r.str;
   case reply::kind::integer:
      return std::to_string(r.integer);
   case reply::kind::nil:
      return "(nil)";
   case reply::kind::array:
      break;
   }
   throw std::runtime_error("reply_text: the reply is an array; look at its elements");
}

blocking_client::blocking_client(std::string const& host, std::string const& port,
                                 std::chrono::milliseconds timeout)
    : deadline_{clock::now() + timeout}
    , endpoint_{host + ":" + port}
    , what_{"connect to " + endpoint_}
{
   try {
      connect(host, port);
   } catch (...) {
      if (fd_ >= 0)
         ::close(fd_);  // no destructor runs for a half-constructed object
      throw;
   }
}

blocking_client::~blocking_client()
{
   if (fd_ >= 0)
      ::close(fd_);
}

reply blocking_client::command(std::span<std::string_view const> args)
{
   if (args.empty())
      throw std::invalid_argument("blocking_client::command: no arguments");
   what_ = std::string(args[0]) + " on " + endpoint_;
   write_all(encode(args));
   return read_reply();
}

reply blocking_client::receive()
{
   what_ = "receive on " + endpoint_;
   return read_reply();
}

reply blocking_client::command(std::vector<std::string> const& args)
{
   std::vector<std::string_view> const views(args.begin(), args.end());
   return command(std::span{views});
}

// Tries each address of the name in turn ("localhost" may be ::1 first, where redis does not
// listen).
void blocking_client::connect(std::string const& host, std::string const& port)
{
   addrinfo hints{};
   hints.ai_socktype = SOCK_STREAM;
   hints.ai_flags = AI_NUMERICSERV;
   addrinfo* found = nullptr;
   if (int const rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0)
      throw std::runtime_error(what_ + ": " + ::gai_strerror(rc));
   int err = 0;
   for (auto* a = found; a && fd_ < 0; a = a->ai_next) {
      fd_ = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
      if (fd_ < 0) {
         err = errno;
         continue;
      }
      // Reset on close instead of leaving a TIME_WAIT socket behind for each of thousands of
      // assertions.
      linger no_linger{1, 0};
      ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &no_linger, sizeof no_linger);
      err = ::connect(fd_, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
      if (err == EINPROGRESS) {
         try {
            wait_for(POLLOUT, "connect");
         } catch (...) {
            ::freeaddrinfo(found);
            throw;
         }
         socklen_t len = sizeof err;
         ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
      }
      if (err != 0) {
         ::close(fd_);
         fd_ = -1;
      }
   }
   ::freeaddrinfo(found);
   if (fd_ < 0) {
      errno = err;
      fail("connect");
   }
}

void blocking_client::write_all(std::string_view data)
{
   while (!data.empty()) {
      // MSG_NOSIGNAL: a server that died must fail the command, not kill the caller with SIGPIPE.
      ssize_t const n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n >= 0)
         data.remove_prefix(static_cast<std::size_t>(n));
      else if (errno == EAGAIN || errno == EWOULDBLOCK)
         wait_for(POLLOUT, "send");
      else if (errno != EINTR)
         fail("send");
   }
}

reply blocking_client::read_reply()
{
   std::string const line = read_line();
   if (line.empty())
      malformed("empty line");
   std::string_view const body = std::string_view(line).substr(1);
   reply r;
   switch (line[0]) {
   case '+':
      r.type = reply::kind::status, r.str = body;
      break;
   case '-':
      r.type = reply::kind::error, r.str = body;
      break;
   case ':':
      r.type = reply::kind::integer, r.integer = read_integer(body);
      break;
   case '$': {
      long long const n = read_integer(body);
      r.type = n < 0 ? reply::kind::nil : reply::kind::bulk;
      if (n >= 0)
         r.str = read_bulk(static_cast<std::size_t>(n));
      break;
   }
   case '*': {
      long long const n = read_integer(body);
      r.type = n < 0 ? reply::kind::nil : reply::kind::array;
      for (long long i = 0; i < n; ++i)
         r.elements.push_back(read_reply());
      break;
   }
   default:
      malformed("unknown type byte '" + line.substr(0, 1) + "'");
   }
   return r;
}

// One line of the reply, without its CRLF.
std::string blocking_client::read_line()
{
   for (;;) {
      auto const end = buffer_.find("\r\n", pos_);
      if (end != std::string::npos) {
         std::string line = buffer_.substr(pos_, end - pos_);
         pos_ = end + 2;
         return line;
      }
      fill();
   }
}

// Exactly n bytes followed by CRLF, as in a bulk string.
std::string blocking_client::read_bulk(std::size_t n)
{
   while (buffer_.size() - pos_ < n + 2)
      fill();
   if (buffer_.compare(pos_ + n, 2, "\r\n") != 0)
      malformed("bulk string without CRLF");
   std::string bulk = buffer_.substr(pos_, n);
   pos_ += n + 2;
   return bulk;
}

long long blocking_client::read_integer(std::string_view text) const
{
   long long value = 0;
   auto const [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
   if (ec != std::errc{} || end != text.data() + text.size() || text.empty())
      malformed("bad integer '" + std::string(text) + "'");
   return value;
}

void blocking_client::fill()
{
   buffer_.erase(0, pos_);
   pos_ = 0;
   char chunk[16384];
   for (;;) {
      ssize_t const n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n > 0) {
         buffer_.append(chunk, static_cast<std::size_t>(n));
         return;
      }
      if (n == 0)
         throw std::runtime_error(what_ + ": connection closed by the server");
      if (errno == EAGAIN || errno == EWOULDBLOCK)
         wait_for(POLLIN, "recv");
      else if (errno != EINTR)
         fail("recv");
   }
}

void blocking_client::wait_for(short events, char const* step)
{
   for (;;) {
      auto const left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - clock::now());
      if (left <= 0ms)
         throw std::runtime_error(what_ + ": timed out in " + step);
      pollfd p{fd_, events, 0};
      int const n = ::poll(&p, 1, static_cast<int>(left.count()));
      if (n > 0)
         return;  // ready, or an error that the next syscall reports
      if (n < 0 && errno != EINTR)
         fail("poll");
   }
}

void blocking_client::fail(char const* step) const
{
   throw std::runtime_error(what_ + ": " + step + ": " + std::strerror(errno));
}

void blocking_client::malformed(std::string const& why) const
{
   throw std::runtime_error(what_ + ": malformed reply: " + why);
}

}  // namespace locksmith::test
