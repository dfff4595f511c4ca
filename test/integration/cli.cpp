#include "cli.hpp"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <thread>
#include <utility>

namespace locksmith::test::cli {

using namespace std::chrono_literals;

cli_process::cli_process(std::vector<std::string> args)
    : spawned_process(LOCKSMITH_CLI_PATH, std::move(args))
{}

cli_process::cli_process(std::vector<std::string> args, temp_dir const& dir)
    : cli_process(std::move(args))
{
   BOOST_TEST_REQUIRE(poll_until([&] { return exists(dir.file("ready")); }), err());
}

std::vector<std::string> exec_args(redis_server const& srv, std::string const& key,
                                   std::vector<std::string> options,
                                   std::vector<std::string> const& command)
{
   std::vector<std::string> args{"exec", "--redis", srv.url(), "--key", key};
   args.insert(args.end(), options.begin(), options.end());
   args.push_back("--");
   args.insert(args.end(), command.begin(), command.end());
   return args;
}

std::optional<clock_type::time_point> appears_at(std::string const& path,
                                                 std::chrono::milliseconds limit)
{
   auto give_up = clock_type::now() + limit;
   while (!exists(path)) {
      if (clock_type::now() >= give_up)
         return std::nullopt;
      std::this_thread::sleep_for(1ms);
   }
   return clock_type::now();
}

long long ms_between(clock_type::time_point from, clock_type::time_point to)
{
   return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

std::string lock_key(std::string const& name)
{
   return "locksmith:{" + name + "}";
}

bool key_exists(redis_server const& srv, std::string const& name)
{
   return srv.text({"EXISTS", lock_key(name)}) == "1";
}

long long listeners(redis_server const& srv, std::string const& name)
{
   auto r = srv.command({"PUBSUB", "NUMSUB", lock_key(name) + ":released"});
   return r.elements.size() == 2 ? r.elements[1].integer : -1;
}

// `sh -c SCRIPT sh ARGS...`: the script sees ARGS as $1, $2...
std::vector<std::string> shell(std::string script, std::vector<std::string> const& args)
{
   std::vector<std::string> command{"sh", "-c", std::move(script), "sh"};
   command.insert(command.end(), args.begin(), args.end());
   return command;
}

std::vector<std::string> hold_until(temp_dir const& dir)
{
   return shell("touch \"$1\"; while [ ! -e \"$2\" ]; do sleep 0.01; done",
                {dir.file("ready"), dir.file("go")});
}

std::vector<std::string> trap_term(temp_dir const& dir, std::string const& seconds)
{
   return shell("trap ': > \"$2\"; kill $! 2>/dev/null; exit 3' TERM; echo $$ > \"$3\"; "
                "touch \"$1\"; sleep \"$4\" & wait $!",
                {dir.file("ready"), dir.file("termed"), dir.file("pid"), seconds});
}

std::vector<std::string> ignore_term(temp_dir const& dir)
{
   return shell("trap '' TERM; echo $$ > \"$2\"; touch \"$1\"; exec sleep 30",
                {dir.file("ready"), dir.file("pid")});
}

bool still_runs(std::string const& file)
{
   pid_t pid = std::stoi(read_file(file));
   return pid > 0 && (::kill(pid, 0) == 0 || errno != ESRCH);
}

void create_file(std::string const& path)
{
   std::ofstream{path} << "x";
}

bool exists(std::string const& path)
{
   return std::filesystem::exists(path);
}

long long count_lines(std::string const& text)
{
   return std::count(text.begin(), text.end(), '\n');
}

}  // namespace locksmith::test::cli
