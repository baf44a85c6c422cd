// The lockout peer of a transport's peer string (store/call_origin.h).
#include "sealtrain/core/store/call_origin.h"

#include <arpa/inet.h>

#include <array>
#include <cstring>
#include <string>

namespace sealtrain::core {

std::string lockoutPeer(std::string_view transportPeer)
{
    if (transportPeer.empty() || transportPeer.starts_with("unix:")
        || transportPeer.starts_with("unix-abstract:"))
        return std::string(kLocalPeer);
    if (transportPeer.starts_with("ipv4:")) {
        const std::string_view rest = transportPeer.substr(5);
        const std::string address(rest.substr(0, rest.rfind(':')));
        in_addr parsed{};
        if (::inet_pton(AF_INET, address.c_str(), &parsed) != 1)
            return "unknown";
        return "ipv4:" + address;
    }
    if (transportPeer.starts_with("ipv6:[")) {
        const std::string_view rest = transportPeer.substr(6);
        const auto close = rest.find(']');
        if (close == std::string_view::npos)
            return "unknown";
        // A zone ("%eth0") does not change the address's prefix.
        std::string address(rest.substr(0, close));
        address = address.substr(0, address.find('%'));
        std::array<unsigned char, 16> bytes{};
        if (::inet_pton(AF_INET6, address.c_str(), bytes.data()) != 1)
            return "unknown";
        std::memset(bytes.data() + 8, 0, 8);
        std::array<char, INET6_ADDRSTRLEN> text{};
        if (::inet_ntop(AF_INET6, bytes.data(), text.data(), text.size()) == nullptr)
            return "unknown";
        return "ipv6:" + std::string(text.data()) + "/64";
    }
    return "unknown";
}

}  // namespace sealtrain::core
