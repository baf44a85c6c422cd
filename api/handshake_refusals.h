// The TLS handshakes the control plane refused, counted by the serial of the certificate
// presented until the reaper writes them (issue #54: counted, never dropped; gRPC's verifier
// does not say the peer): one entry a serial a window, `certificate.refuse`. At most kMaxSerials
// serials are counted at once; past them the rest are counted together under "other", which
// names no owner. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace sealtrain::api {

class HandshakeRefusals {
public:
    static constexpr std::size_t kMaxSerials = 256;

    struct Counted {
        std::uint64_t count = 0;
        std::int64_t first = 0;  // Unix seconds
        std::int64_t last = 0;
        std::string owner;  // the user whose session the certificate was, when known
    };

    // A handshake presenting the certificate `serial` (empty: unreadable) was refused at `now`;
    // `owner` is whose session it was ("" when not known).
    void count(std::string serial, std::string owner, std::int64_t now)
    {
        if (serial.empty())
            serial = "unreadable";
        const std::lock_guard guard(lock_);
        if (counts_.count(serial) == 0 && counts_.size() >= kMaxSerials) {
            serial = "other";
            owner.clear();  // many serials: whose they were is not one person
        }
        Counted& counted = counts_[serial];
        if (counted.count++ == 0)
            counted.first = now;
        counted.last = now;
        counted.owner = std::move(owner);
    }

    // The counts whose window (`windowSeconds` from their first refusal) has passed by `now`, or
    // every count when `all`, taken out to be written.
    [[nodiscard]] std::map<std::string, Counted> take(bool all, std::int64_t windowSeconds,
                                                      std::int64_t now)
    {
        std::map<std::string, Counted> due;
        const std::lock_guard guard(lock_);
        for (auto it = counts_.begin(); it != counts_.end();) {
            if (all || now - it->second.first >= windowSeconds) {
                due.insert(std::move(*it));
                it = counts_.erase(it);
            } else {
                ++it;
            }
        }
        return due;
    }

private:
    std::mutex lock_;
    std::map<std::string, Counted> counts_;
};

}  // namespace sealtrain::api
