// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "transport/tls.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/verify_context.hpp>

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <string>

namespace locksmith::detail {
namespace asio = boost::asio;

namespace {

// What the info callback needs, kept in the SSL_CTX's own ex_data slot (asio uses app_data for
// its verify callback), and freed with the SSL_CTX.
struct handshake_probe {
   std::string sni;  // empty: send none
   std::shared_ptr<link_health> health;
};

void free_probe(void*, void* ptr, CRYPTO_EX_DATA*, int, long, void*)
{
   delete static_cast<handshake_probe*>(ptr);
}

int probe_index()
{
   static int const index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, &free_probe);
   return index;
}

// OpenSSL 3.0 names TLS 1.3's own alerts "unknown"; the one a server sends when it wants our
// certificate is worth naming.
std::string alert_text(int ret)
{
   constexpr int certificate_required = 116;  // RFC 8446, 6.2
   if ((ret & 0xff) == certificate_required)
      return "certificate required";
   return SSL_alert_desc_string_long(ret);
}

// Boost.Redis makes a new SSL stream for each connection attempt, out of our reach, so SNI is
// set here, from the context, when each handshake starts (before its ClientHello is written).
// Fatal alerts are kept as the attempt's reason: a server that refuses our certificate says so
// only with an alert.
void on_info(SSL const* ssl, int where, int ret)
{
   auto* probe =
      static_cast<handshake_probe*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), probe_index()));
   if (!probe)
      return;
   if ((where & SSL_CB_HANDSHAKE_START) && !probe->sni.empty() &&
       !SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name))
      SSL_set_tlsext_host_name(const_cast<SSL*>(ssl), probe->sni.c_str());
   bool const fatal = (where & SSL_CB_ALERT) && (ret >> 8) == SSL3_AL_FATAL;
   if (fatal && (where & SSL_CB_READ))
      probe->health->on_tls_problem("the server sent the alert '" + alert_text(ret) + "'");
   else if (fatal)
      probe->health->on_tls_problem("we sent the alert '" + alert_text(ret) + "'");
}

std::string subject_of(X509* cert)
{
   if (!cert)
      return {};
   char buf[256];
   X509_NAME_oneline(X509_get_subject_name(cert), buf, sizeof buf);
   return buf;
}

void verify_server(asio::ssl::context& ctx, node_url const& url, tls_options const& tls,
                   handshake_probe& probe)
{
   error_code not_ip;
   asio::ip::make_address(url.host, not_ip);
   if (not_ip)
      probe.sni = url.host;
   if (tls.insecure_skip_verify) {
      ctx.set_verify_mode(asio::ssl::verify_none);
      return;
   }
   X509_VERIFY_PARAM* param = SSL_CTX_get0_param(ctx.native_handle());
   if (not_ip) {
      X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      X509_VERIFY_PARAM_set1_host(param, url.host.c_str(), 0);
   } else {
      X509_VERIFY_PARAM_set1_ip_asc(param, url.host.c_str());
   }
   ctx.set_verify_mode(asio::ssl::verify_peer);
   // Keeps OpenSSL's verdict, and the first reason of a failed verification for the report.
   ctx.set_verify_callback(
      [health = probe.health](bool preverified, asio::ssl::verify_context& vc) {
         if (!preverified) {
            X509_STORE_CTX* c = vc.native_handle();
            health->on_tls_problem(std::string{"certificate verify failed: "} +
                                   X509_verify_cert_error_string(X509_STORE_CTX_get_error(c)) +
                                   " (depth " + std::to_string(X509_STORE_CTX_get_error_depth(c)) +
                                   ", subject " + subject_of(X509_STORE_CTX_get_current_cert(c)) +
                                   ")");
         }
         return preverified;
      });
}

// Loads a file, or tells `health` why it could not (every handshake would fail).
template <class Load>
bool load(std::string const& what, std::string const& file, link_health& health, Load&& do_load)
{
   error_code ec;
   do_load(ec);
   if (ec)
      health.on_tls_config_problem("cannot load the " + what + " '" + file + "': " + ec.message());
   return !ec;
}

}  // namespace

asio::ssl::context make_tls_context(node_url const& url, tls_options const& tls,
                                    std::shared_ptr<link_health> const& health)
{
   asio::ssl::context ctx{asio::ssl::context::tls_client};
   if (!url.tls)
      return ctx;  // unused: Boost.Redis needs one anyway
   SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
   auto probe = std::make_unique<handshake_probe>(handshake_probe{{}, health});
   verify_server(ctx, url, tls, *probe);
   if (tls.ca_file.empty()) {
      load("system's trust store", "default paths", *health,
           [&](error_code& ec) { ctx.set_default_verify_paths(ec); });
   } else {
      load("CA file", tls.ca_file, *health,
           [&](error_code& ec) { ctx.load_verify_file(tls.ca_file, ec); });
   }
   if (!tls.cert_file.empty()) {
      load("client certificate", tls.cert_file, *health,
           [&](error_code& ec) { ctx.use_certificate_chain_file(tls.cert_file, ec); });
      load("client key", tls.key_file, *health, [&](error_code& ec) {
         ctx.use_private_key_file(tls.key_file, asio::ssl::context::pem, ec);
      });
   }
   if (SSL_CTX_set_ex_data(ctx.native_handle(), probe_index(), probe.get()) == 1)
      probe.release();  // owned by the SSL_CTX now, freed by free_probe
   SSL_CTX_set_info_callback(ctx.native_handle(), &on_info);
   return ctx;
}

}  // namespace locksmith::detail
