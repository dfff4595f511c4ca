// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_CONFIG_HPP
#define LOCKSMITH_CONFIG_HPP

#include <locksmith/logger.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace locksmith {

/// TLS settings, used by every `rediss://` node of a @ref config.
///
/// By default the server's certificate chain is verified against the system's trust store, its
/// name is checked against the URL's host (a DNS name, or an IP address that the certificate
/// must list as such), and the host name is sent as SNI. A handshake that fails is not retried
/// quietly until the wait runs out: an operation that cannot reach its quorum because of it
/// completes with error::tls_failed, and the report gives the node and the reason.
struct tls_options {
   /// PEM file of the certificate authorities to trust. Empty (the default): the system's store
   /// (OpenSSL's default paths; /etc/ssl/certs on Debian).
   std::string ca_file;

   /// PEM file of the client's certificate chain, for servers that require one (mutual TLS,
   /// `tls-auth-clients yes`). Empty (the default): none is sent. Needs key_file.
   std::string cert_file;

   /// PEM file of the client certificate's private key, unencrypted. Needs cert_file.
   std::string key_file;

   /// Turns off every check of the server's certificate: anyone on the path can then pose as the
   /// server, read the lock tokens and the password, and grant or steal locks. For test setups
   /// only. Default false.
   bool insecure_skip_verify = false;
};

/// Configuration of a @ref client. A plain aggregate: write designated initializers.
struct config {
   /// The Redis nodes, as URLs: `redis://[user:password@]host:port[/db]`, or `rediss://` for TLS
   /// (see `tls`). A user and password are sent in HELLO on each connection; a server that refuses
   /// them (WRONGPASS) makes operations complete with error::auth_failed. The password never
   /// appears in reports or error messages: nodes are shown as `redis://user:***@host:port`.
   /// One node gives the single-instance lock. N independent masters give RedLock, with a quorum of
   /// N/2+1; use an odd N (an even N tolerates no more failures than N-1 does). Must not be empty.
   ///
   /// A node may also be a master that Sentinels manage:
   /// `redis+sentinel://[user:password@]host[:port][,host[:port]]/master[/db]`, the Sentinels
   /// (port 26379 by default) and the name they monitor the master by. The node asks them for
   /// the master's address on every (re)connection and checks that the server it reaches is a
   /// master (ROLE), so it follows a failover once its connection to the old master ends (the
   /// Sentinels disconnect a master's clients when they demote it). The user and password are
   /// the master's; the Sentinels are asked without. TLS through Sentinels (`rediss+sentinel://`)
   /// is refused. Such a lock is as safe as the failover: a key that had not reached the
   /// promoted replica is gone, and a lease on it is reported lost at its next renewal.
   /// `wait_replicas` narrows that window.
   ///
   /// A node may also be a whole Redis Cluster (7.0 or later), named by one or more of its nodes
   /// as seeds: `redis+cluster://[user:password@]host[:port][,host[:port]]...` (port 6379 by
   /// default, no database). The client loads the slot map (CLUSTER SLOTS), keeps a connection
   /// pair per master, sends each lock to the master of its slot, and follows MOVED, ASK and
   /// TRYAGAIN within the node timeout; release messages use sharded pub/sub. The cluster counts
   /// as one node of the quorum, as safe as the slot's master and its failover (as above).
   /// `rediss+cluster://` is refused: masters are named by address, with no host name to verify.
   std::vector<std::string> nodes = {"redis://127.0.0.1:6379"};

   /// Prefix of every key and channel. The lock named K lives at `prefix{K}`. Must not contain
   /// `{` or `}`, which would move the Cluster hash tag. Default "locksmith:".
   std::string prefix = "locksmith:";

   /// How long one command to one node may take before that node counts as failed for this
   /// attempt. Default 50 ms, the upper end of the 5-50 ms the RedLock description gives for a
   /// 10 s TTL: a hung node then delays an attempt by at most this much. At most one hour. The
   /// watchdog declares a lease lost one node timeout before its validity ends, so a renewed
   /// lease needs a TTL of about three node timeouts or more: lock_options::renew states the rule.
   std::chrono::milliseconds node_timeout{50};

   /// Pause before reconnecting to a node that dropped. Default 100 ms.
   std::chrono::milliseconds reconnect_wait{100};

   /// Interval of the connection's PING health check; a node silent for twice this long is
   /// reconnected. Default 1 s.
   std::chrono::milliseconds health_check_interval = std::chrono::seconds{1};

   /// How long a lock name's release channel stays subscribed after its last local waiter got
   /// the lock or gave up. A name contended again within that time needs no new SUBSCRIBE, and
   /// no wait for the server's confirmation before its waiter may sleep. At most 1,024 channels
   /// linger at once per client, the oldest going first. Zero unsubscribes at once. Must not be
   /// negative. Default 1 s.
   std::chrono::milliseconds subscription_linger = std::chrono::seconds{1};

   /// The longest that client::async_close waits for operations in flight and for the releases
   /// that the client still owns (see client::async_close) before it closes the connections
   /// anyway. Must not be negative. Default 1 s.
   std::chrono::milliseconds close_timeout = std::chrono::seconds{1};

   /// Restart quarantine, the RedLock description's "delayed restarts" done in the client: a node
   /// whose server has been up for less than this does not count towards a quorum, so that a
   /// node restarted without persistence, which has forgotten the keys it held, cannot hand a
   /// held lock to a second owner. The uptime is learned (`INFO server`) when a connection to the
   /// node is made, and advanced on this process's steady clock. It protects every lease whose
   /// TTL is at most the quarantine; a lease with a longer TTL may still be taken over once the
   /// quarantine has passed, while its key lives on in fewer than a quorum of nodes. An unlock
   /// counts a key that such a node lost as released there (client::async_unlock).
   ///
   /// A node whose restarts cannot be judged (its INFO denied by an ACL, or failed, or without
   /// `uptime_in_seconds`) does not count towards a quorum until a later INFO judges it (asked
   /// every second): the logger says so once at error, the report names the node and the
   /// command, and an ACL's denial counts as error::auth_failed, so an operation whose quorum
   /// such nodes sink fails at once. Give the ACL user `+info`, or set this to 0 to go without.
   ///
   /// A fleet deployed a moment ago is young too, and is not made to wait: a client with a
   /// quarantine writes a mark, the server's `run_id` (and for a new fleet every node's), to the
   /// key `prefix + "trusted-run"` of each node whose current run it trusts. A young server
   /// whose run a mark names (on itself or on a sibling) counts early, and so does a fleet in
   /// which, at a client's first contact, every node is young and none holds a mark (of any run):
   /// no client with a quarantine has used it, and it counts for as long as each server keeps
   /// the run it had then. Either only once every node of the client holds a mark of its run
   /// (an ACL that denies GET or SET of the mark costs the early count, not safety). The rule's
   /// limit: a fleet whose every node restarted empty within one quarantine looks new, so a
   /// lease taken before that lives nowhere; its holder's next renewal finds it lost, and the
   /// new holder's fence is the higher. Clients with no quarantine neither write nor read marks.
   ///
   /// Empty (the default): 30 s with 3 nodes or more, none with fewer (one node has no quorum to
   /// protect). Must not be negative.
   std::optional<std::chrono::milliseconds> restart_quarantine = {};

   /// TLS for `rediss://` nodes: verified by default (see tls_options).
   tls_options tls = {};

   /// Receives what the client tolerated or noticed, which no operation's result shows: a node
   /// that failed while the quorum held, connections lost and made, scripts sent whole after
   /// NOSCRIPT, a silent node no longer fed, restart quarantines, renewals retried, leases lost
   /// (see log_function for the rules). Empty (the default): nothing is logged, and no line is
   /// formatted. Never called once the client is destroyed, even by its connections, which may
   /// end later: what the logger refers to need only outlive the client.
   log_function logger = {};

   /// The least level passed to `logger`; lines below it are not formatted. Default info: debug
   /// lines repeat a fault already reported, once per call while a node stays down.
   log_level min_log_level = log_level::info;

   /// Replica safety: an acquisition, or a renewal, counts on a node only once its write has
   /// reached this many of the node's replicas. `WAIT wait_replicas replica_timeout` is sent in
   /// the same request as the script (no extra round trip); when it reports fewer replicas, that
   /// node's vote fails with error::not_enough_replicas, and its key is released as after any
   /// failed attempt (a failed renewal is retried, and the lease is lost if none succeeds in
   /// time). This narrows the window in which a failover right after a grant forgets the key; it
   /// is not consensus: a replica that acknowledged may still not be the one promoted. Applies to
   /// every node, each of which needs that many replicas. Meanwhile WAIT holds up the node's
   /// other commands on this client's connection, for up to replica_timeout when replicas lag.
   /// Default 0: no WAIT.
   unsigned wait_replicas = 0;

   /// How long WAIT may wait for the replicas. Must be positive (WAIT 0 would wait forever) and
   /// below node_timeout, which bounds the whole call. Empty (the default): half the node
   /// timeout, which leaves the other half for the script and the round trip.
   std::optional<std::chrono::milliseconds> replica_timeout = {};
};

}  // namespace locksmith

#endif
