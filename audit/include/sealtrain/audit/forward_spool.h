// Forwarding at least once (docs/formats/audit-forward.md, "Delivery"): the signed log is the
// spool. A DurableForwarder reads committed entries from the store on a thread of its own,
// writes them as lines to a target (a file, the systemd journal, a syslog receiver over TLS),
// and records in a cursor file, fsynced, how far the target has taken them. After a crash or an
// outage it starts again at the cursor, so every entry arrives at least once, in sequence order,
// with the log's newest signed head after the entries it covers. Nothing here can stop a change
// or lose an entry: the log is never waited for, and a target that refuses is retried.
//
// Its own library (sealtrain_audit_forward: OpenSSL's TLS), linked by the control plane only.
#pragma once

#include "sealtrain/audit/audit_log.h"
#include "sealtrain/audit/forward.h"
#include "sealtrain/audit/store.h"
#include "sealtrain/base/result.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace sealtrain::audit {

// One line to deliver, with what a target may show beside it (journal fields, syslog MSGID).
struct ForwardLine {
    std::string text;            // without the newline
    std::string kind;            // "entry" or "head"
    std::uint64_t sequence = 0;  // an entry's sequence; a head's tree size
    std::string leafHashHex;     // an entry's leaf hash; empty for a head
    std::int64_t timeNs = 0;     // the entry's or the head's time
};

// Where lines go. deliver() returns once the target holds every line it was given (a file:
// written and fsynced; the journal: each datagram sent; syslog over TLS: every byte
// acknowledged by the receiver), or an error in one sentence; after an error the same lines
// may be given again, so a target may hold a line twice, never half of one.
class ForwardTarget {
public:
    virtual ~ForwardTarget() = default;
    [[nodiscard]] virtual std::string describe() const = 0;
    [[nodiscard]] virtual Result<void> deliver(std::span<const ForwardLine> lines) = 0;
};

struct TargetOptions {
    std::filesystem::path journalSocket = "/run/systemd/journal/socket";
    // syslog-tls: the CA certificates (PEM) the receiver's certificate must chain to; empty: the
    // system's. The receiver's name is checked against the target's host.
    std::filesystem::path caFile;
    // syslog-tls: a client certificate and its key (PEM) when the receiver asks for one.
    std::filesystem::path certificateFile;
    std::filesystem::path keyFile;
    std::chrono::milliseconds timeout{30000};  // to connect, and for the receiver to acknowledge
};

// "file:/ABSOLUTE/PATH", "journal" or "syslog-tls://HOST:PORT" (RFC 5424 messages over TLS,
// RFC 5425, octet-counted). InvalidArgument with a sentence for anything else; a file that can
// not be opened is Io. A syslog receiver is first reached at the first delivery.
[[nodiscard]] Result<std::unique_ptr<ForwardTarget>>
openForwardTarget(std::string_view target, const TargetOptions& options);

// How far a target has taken the log: every entry below `delivered`, and the signed head of
// `headSize`. Kept in a file (JSON, written atomically and fsynced) beside the database.
struct ForwardCursor {
    std::string target;
    std::string origin;
    std::uint64_t delivered = 0;
    std::string lastLeafHashHex;  // entry delivered-1's, to notice a log that is not the same
    std::uint64_t headSize = 0;
};
inline constexpr std::string_view kForwardCursorFormat = "sealtrain-audit-forward-cursor-1";
// nullopt when there is no file; Integrity when it does not parse.
[[nodiscard]] Result<std::optional<ForwardCursor>>
readForwardCursor(const std::filesystem::path& path);
[[nodiscard]] Result<void> writeForwardCursor(const std::filesystem::path& path,
                                              const ForwardCursor& cursor);

struct SpoolOptions {
    std::size_t batchEntries = 512;
    std::size_t batchBytes = std::size_t{4} << 20U;
    std::chrono::milliseconds poll{1000};  // looks for entries other processes committed
    std::chrono::milliseconds retryMin{500};
    std::chrono::milliseconds retryMax{30000};
    bool startThread = true;  // false: the caller calls pump() (tests over a MemoryStore)
};

class DurableForwarder final : public EntryForwarder {
public:
    // `source` is read on the forwarder's thread only: give it a store of its own (its own
    // database connection). The cursor file is created at the first delivery.
    [[nodiscard]] static Result<std::unique_ptr<DurableForwarder>>
    start(std::unique_ptr<ForwardTarget> target, const AuditStore& source,
          std::filesystem::path cursorFile, std::string origin, SpoolOptions options = {});
    DurableForwarder(const DurableForwarder&) = delete;
    DurableForwarder& operator=(const DurableForwarder&) = delete;
    // Stops the thread; what it did not deliver is delivered after the next start.
    ~DurableForwarder() override;

    // The log committed: wake the thread. Never blocks on the target.
    void committed(std::uint64_t entryCount) noexcept override;
    // Delivers what the source holds now, as the thread does; false when the target refused.
    bool pump();
    [[nodiscard]] ForwardHealth health() const;
    // Until `count` entries are delivered (and, with `withHead`, a signed head of `count`
    // entries) or `timeout` passes: an orderly stop's last step, and tests. Wakes the thread.
    bool waitDelivered(std::uint64_t count, std::chrono::milliseconds timeout,
                       bool withHead = false);

private:
    DurableForwarder(std::unique_ptr<ForwardTarget> target, const AuditStore& source,
                     std::filesystem::path cursorFile, std::string origin, SpoolOptions options);
    void run();
    Result<void> deliverFrom(ForwardCursor& cursor);
    Result<void> checkCursor(ForwardCursor& cursor);
    void noteFailure(const Error& error);
    void noteSuccess(const ForwardCursor& cursor);

    std::unique_ptr<ForwardTarget> target_;
    const AuditStore& source_;
    std::filesystem::path cursorFile_;
    std::string origin_;
    SpoolOptions options_;
    ForwardCursor cursor_;  // the pumping thread's

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable progressed_;
    bool stop_ = false;
    bool woken_ = false;
    ForwardHealth health_;
    std::thread thread_;
};

}  // namespace sealtrain::audit
