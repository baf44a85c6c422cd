// Keepalive pings between clients and the control plane (docs/api.md, "Transport"): how often a
// client pings a connection, and how often the control plane lets it. Internal to api/.
#pragma once

#include <chrono>

namespace sealtrain::api::keepalive {

// A client pings every connection this often and closes it when a ping is not answered within
// kTimeout: a connection that silently stops forwarding fails its calls within about 15 s.
inline constexpr std::chrono::milliseconds kTime{10'000};
inline constexpr std::chrono::milliseconds kTimeout{5'000};
// The control plane takes pings this close together (more are "ping strikes", and a client
// that makes three is sent away): half a client's interval, so that a late timer is no strike.
inline constexpr std::chrono::milliseconds kServerMinInterval{kTime / 2};

}  // namespace sealtrain::api::keepalive
