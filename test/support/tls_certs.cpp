#include "support/tls_certs.hpp"

#include "support/temp_dir.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace locksmith::test {
namespace {

void sh(const std::string& command)
{
   // Quiet unless it fails: openssl prints its progress on stderr.
   if (std::system((command + " >/dev/null 2>&1").c_str()) != 0)
      throw std::runtime_error("command failed: " + command);
}

struct cert_dir : temp_dir {
   cert_dir()
       : temp_dir("locksmith-tls")
   {}
};

// P-256 keys: quick to make, and every TLS version redis-server speaks accepts them.
const std::string new_key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";

void make_ca(const cert_dir& d, const std::string& name)
{
   sh("openssl req -x509 " + new_key + " -days 2 -subj /CN=" + name + " -keyout " +
      d.file(name + ".key") + " -out " + d.file(name + ".crt") +
      " -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign");
}

// A leaf certificate signed by the CA `ca`, with the given extensions.
void make_leaf(const cert_dir& d, const std::string& ca, const std::string& name,
               const std::string& extensions)
{
   std::ofstream{d.file(name + ".ext")} << "basicConstraints=CA:FALSE\n" << extensions << "\n";
   sh("openssl req " + new_key + " -subj /CN=" + name + " -keyout " + d.file(name + ".key") +
      " -out " + d.file(name + ".csr"));
   sh("openssl x509 -req -days 2 -in " + d.file(name + ".csr") + " -CA " + d.file(ca + ".crt") +
      " -CAkey " + d.file(ca + ".key") + " -CAcreateserial -out " + d.file(name + ".crt") +
      " -extfile " + d.file(name + ".ext"));
}

}  // namespace

const tls_certs& test_certs()
{
   static const cert_dir dir;
   static const tls_certs certs = [] {
      make_ca(dir, "test-ca");
      make_ca(dir, "other-ca");
      make_leaf(dir, "test-ca", "localhost",
                "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth");
      make_leaf(dir, "test-ca", "wrong.example",
                "subjectAltName=DNS:wrong.example\nextendedKeyUsage=serverAuth");
      make_leaf(dir, "test-ca", "client", "extendedKeyUsage=clientAuth");
      return tls_certs{dir.file("test-ca.crt"),       dir.file("other-ca.crt"),
                       dir.file("localhost.crt"),     dir.file("localhost.key"),
                       dir.file("wrong.example.crt"), dir.file("wrong.example.key"),
                       dir.file("client.crt"),        dir.file("client.key")};
   }();
   return certs;
}

std::vector<std::string> tls_server_args(std::uint16_t tls_port, const std::string& cert,
                                         const std::string& key, bool require_client_cert)
{
   return {"--tls-port",         std::to_string(tls_port),
           "--tls-cert-file",    cert,
           "--tls-key-file",     key,
           "--tls-ca-cert-file", test_certs().ca,
           "--tls-auth-clients", require_client_cert ? "yes" : "no"};
}

tls_redis_server::tls_redis_server(const std::string& cert, const std::string& key,
                                   bool require_client_cert)
    : tls_port(free_loopback_port())
    , srv(tls_server_args(tls_port, cert, key, require_client_cert))
{}

std::string tls_redis_server::url(const std::string& host) const
{
   return "rediss://" + host + ":" + std::to_string(tls_port);
}

}  // namespace locksmith::test
