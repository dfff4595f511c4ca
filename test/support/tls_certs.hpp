// Certificates for TLS tests, made with the `openssl` command line once per test binary, and
// redis-server arguments that serve TLS with them.
#pragma once

#include "support/redis_server.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace locksmith::test {

// PEM files in a temporary directory, removed when the test binary exits.
struct tls_certs {
   std::string ca;           // the CA that signed the server and client certificates
   std::string other_ca;     // a CA that signed nothing here: trusting it alone must fail
   std::string server_cert;  // for DNS:localhost and IP:127.0.0.1, signed by `ca`
   std::string server_key;
   std::string wrong_host_cert;  // for DNS:wrong.example only, signed by `ca`
   std::string wrong_host_key;
   std::string client_cert;  // a client certificate (clientAuth), signed by `ca`
   std::string client_key;
};

// Made on first use; throws std::runtime_error if openssl fails.
const tls_certs& test_certs();

// `redis-server` arguments for a TLS listener on `tls_port`, with the given certificate and key,
// trusting `ca` for client certificates, which it requires when `require_client_cert`.
std::vector<std::string> tls_server_args(std::uint16_t tls_port, const std::string& cert,
                                         const std::string& key, bool require_client_cert = false);

// A redis-server with a TLS listener beside its plain port (which the blocking helper talks to).
struct tls_redis_server {
   tls_redis_server(const std::string& cert, const std::string& key,
                    bool require_client_cert = false);

   // "rediss://<host>:<tls_port>"; the certificates are for localhost and 127.0.0.1.
   std::string url(const std::string& host = "localhost") const;

   std::uint16_t tls_port;
   redis_server srv;
};

}  // namespace locksmith::test
