// Where a call came from, as its transport saw it: the server sets it around each call's work
// (ControlPlane::setCallOrigin), and every audit entry that work writes records it, so that no
// entry is without its real peer and certificate (issue #27): a refused sign-in, a call with a
// worker's certificate or with none, as much as a signed-in user's.
#pragma once

#include <string>
#include <string_view>

namespace sealtrain::core {

// The peer of a call made in the control plane's own process or over its Unix socket.
inline constexpr std::string_view kLocalPeer = "local";

struct CallOrigin {
    std::string peer;               // as the transport names it, e.g. "ipv4:203.0.113.7:50412"
    std::string certificateSerial;  // hex; empty when the caller presented no certificate
};

// The peer a sign-in lockout counts against, from a transport's peer ("ipv4:ADDR:PORT",
// "ipv6:[ADDR]:PORT", "unix:PATH"): "ipv4:ADDR" without the port, "ipv6:PREFIX/64" (a host
// usually holds a whole /64, so one /64 is one peer), kLocalPeer for a Unix socket or an
// in-process caller (empty), and "unknown" for anything else.
[[nodiscard]] std::string lockoutPeer(std::string_view transportPeer);

}  // namespace sealtrain::core
