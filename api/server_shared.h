// What the gRPC server's services share (server.cpp, worker_service.cpp): the table of
// session-bound client certificates, the revocation set and CRL, the group commit, and how a
// call finds its caller. Internal to api/.
#pragma once

#include "handshake_refusals.h"
#include "sealtrain/api/server.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/wipe.h"
#include "sealtrain/core/data_directory/data_directory.h"
#include "sealtrain/core/jobs/jobs.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"
#include "sealtrain/core/store/commit_group.h"
#include "sealtrain/core/store/list_page.h"
#include "sealtrain/crypto/certificate_authority.h"
#include "sealtrain/crypto/secret_bytes.h"
#include "status.h"

#include "sealtrain/v1/control.pb.h"

#include <grpcpp/grpcpp.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sealtrain::api::server_internal {

using grpc::ServerContext;
using grpc::Status;

// A signed-in session as this server knows it, by its client certificate's serial.
struct Binding {
    std::string token;  // core's session token; never sent to the client
    std::string user;
    std::string sessionId;
    std::int64_t expires = 0;  // Unix seconds, the certificate's notAfter
};

// What the handlers share. Every call touches the control plane either in a group commit
// (inGroup) or holding `lock`, which the committer holds while it runs a group.
struct Shared {
    core::DataDirectory& platform;
    ServerOptions options;
    std::mutex lock;
    std::map<std::string, Binding> bindings;  // by certificate serial
    std::mutex revokedLock;                   // the verifier runs on gRPC's threads
    std::set<std::string> revoked;            // certificate serials, never accepted again
    std::vector<crypto::RevokedCertificate> revocations;
    std::uint64_t crlNumber = 0;
    std::unique_ptr<core::CommitGroup> group;  // the committer (core/store/commit_group.h)
    // The serial of each client certificate seen, so that finding a call's caller does not parse
    // its certificate again (on the committer's thread); at most kSerialCacheSize, then cleared.
    std::mutex serialsLock;
    std::unordered_map<std::string, std::string> serialByCertificate;
    static constexpr std::size_t kSerialCacheSize = 4096;
    // Sign-ins checking a password now: at most options.maxPasswordChecks (passwordCheck()).
    std::mutex passwordChecksLock;
    std::condition_variable passwordChecksFreed;
    unsigned passwordChecks = 0;
    // Dataset uploads being received now: at most options.maxUploads (uploadSlot()).
    std::mutex uploadsLock;
    unsigned uploads = 0;
    // Job watches streaming now: at most options.maxWatches, and options.maxWatchesPerUser of
    // one user's (watchSlot()); a user is in the map only while they hold one.
    unsigned watches = 0;
    std::map<std::string, unsigned, std::less<>> watchesByUser;
    // Export downloads being sent now: at most options.maxDownloads (downloadSlot()).
    unsigned downloads = 0;
    // Held while a backup is taken and sent: one archive on disk at a time (backup_service.cpp).
    std::mutex backupLock;
    // Held while a backup's archive is written, and by every keyring change (taken before
    // `lock`): the objects it reads stay under the keyring it copied.
    std::mutex backupWrite;
    // What the TLS handshake did, as the compliance report states it from this process (issue
    // #49): whether client certificates are checked against the CA and the revocation list
    // (set where the server's credentials are made), and how many were checked and refused.
    bool clientCertificatesVerified = false;
    std::atomic<std::uint64_t> certificatesVerified{0};
    std::atomic<std::uint64_t> certificatesRefused{0};
    // The handshakes refused, counted by the serial of the certificate presented
    // (handshake_refusals.h).
    HandshakeRefusals refusedHandshakes;
    std::map<std::string, std::string> revokedOwners;  // serial → user, under revokedLock

    // The serial of `pem` (a certificate the handshake verified), or empty when it has none.
    [[nodiscard]] std::string serialOf(const std::string& pem)
    {
        {
            const std::lock_guard guard(serialsLock);
            if (const auto found = serialByCertificate.find(pem);
                found != serialByCertificate.end())
                return found->second;
        }
        auto serial = crypto::revocationFor(pem, crypto::CertificateClock::now());
        if (!serial)
            return {};
        const std::lock_guard guard(serialsLock);
        if (serialByCertificate.size() >= kSerialCacheSize)
            serialByCertificate.clear();
        serialByCertificate.emplace(pem, serial->serialHex);
        return serial->serialHex;
    }

    // A handler's body, run in the next group commit and answered only once the group's
    // transaction committed (a failed COMMIT fails every call of the group). Every handler that
    // touches the control plane has this shape:
    //     return shared_.inGroup([&]() -> Status { ... });
    // A handler that signs an audit head (an export) or holds the database for long takes
    // `const std::lock_guard guard(shared_.lock);` instead: it runs alone, between groups.
    // Every entry the body writes records where the call came from: its peer and the serial of
    // the certificate it presented (core/identity/call_origin.h).
    template <typename Body>
    [[nodiscard]] Status inGroup(const ServerContext& context, const Body& body)
    {
        core::CallOrigin origin = originOf(context);
        Status status;
        auto committed = group->run([&] {
            const OriginScope scope(*this, std::move(origin));
            status = body();
        });
        if (!committed)
            return Internal::toStatus(committed.error());
        return status;
    }

    // inGroup for core's calls that act in several steps (core::InGroup): each step runs in a
    // group with `context`'s origin. `context` must outlive the returned function.
    [[nodiscard]] core::InGroup grouped(const ServerContext& context)
    {
        return [this, &context](const std::function<Result<void>()>& step) -> Result<void> {
            Result<void> result = success();
            core::CallOrigin origin = originOf(context);
            auto committed = group->run([&] {
                const OriginScope scope(*this, std::move(origin));
                result = step();
            });
            if (!committed)
                return committed.error();
            return result;
        };
    }

    // The control plane's own work, for no caller (the reaper of silent workers): its entries
    // name no peer.
    template <typename Body>
    [[nodiscard]] Status inOwnGroup(const Body& body)
    {
        Status status;
        auto committed = group->run([&] { status = body(); });
        if (!committed)
            return Internal::toStatus(committed.error());
        return status;
    }

    // Where `context`'s call came from.
    [[nodiscard]] core::CallOrigin originOf(const ServerContext& context);

    // Sets the control plane's call origin for its lifetime; only in a group or under `lock`.
    class OriginScope {
    public:
        OriginScope(Shared& shared, core::CallOrigin origin)
            : shared_(shared)
        {
            shared_.platform.controlPlane().setCallOrigin(std::move(origin));
        }
        OriginScope(const OriginScope&) = delete;
        OriginScope& operator=(const OriginScope&) = delete;
        ~OriginScope() { shared_.platform.controlPlane().setCallOrigin(std::nullopt); }

    private:
        Shared& shared_;
    };

    // Whether the call's client certificate is bound to a signed-in session, checked before a
    // handler reads any field of the request (issue #27): an anonymous caller's request is never
    // parsed. Takes `lock` for the lookup, so it waits for a running group; never call it
    // inside one.
    [[nodiscard]] bool isSignedIn(const ServerContext& context);
    // The user whose session the caller's certificate is bound to; empty when none.
    [[nodiscard]] std::string signedInUser(const ServerContext& context);
    // core's session token of that session, empty when none (takes `lock`, like isSignedIn),
    // for a core call that acts in several groups: core checks the session at each.
    [[nodiscard]] std::string sessionOf(const ServerContext& context);
    // The session the caller's certificate is bound to, none when it is bound to none (takes
    // `lock`).
    [[nodiscard]] std::optional<Binding> bindingOf(const ServerContext& context);

    // A slot for one password check, held while the returned object lives; nullopt when none
    // came free within options.passwordCheckWait.
    class PasswordCheckSlot {
    public:
        explicit PasswordCheckSlot(Shared& shared)
            : shared_(&shared)
        {
        }
        PasswordCheckSlot(PasswordCheckSlot&& other) noexcept
            : shared_(std::exchange(other.shared_, nullptr))
        {
        }
        PasswordCheckSlot(const PasswordCheckSlot&) = delete;
        PasswordCheckSlot& operator=(const PasswordCheckSlot&) = delete;
        PasswordCheckSlot& operator=(PasswordCheckSlot&&) = delete;
        ~PasswordCheckSlot()
        {
            if (shared_ == nullptr)
                return;
            {
                const std::lock_guard guard(shared_->passwordChecksLock);
                --shared_->passwordChecks;
            }
            shared_->passwordChecksFreed.notify_one();
        }

    private:
        Shared* shared_;
    };

    [[nodiscard]] std::optional<PasswordCheckSlot> passwordCheck()
    {
        std::unique_lock guard(passwordChecksLock);
        if (!passwordChecksFreed.wait_for(guard, options.passwordCheckWait, [&] {
                return passwordChecks < std::max(1U, options.maxPasswordChecks);
            }))
            return std::nullopt;
        ++passwordChecks;
        return PasswordCheckSlot(*this);
    }

    // A slot for one dataset upload, export download or job watch while the returned guard
    // lives; nullptr when options.maxUploads, maxDownloads or maxWatches are taken (the caller is
    // told to try again, never queued).
    [[nodiscard]] std::shared_ptr<void> slot(unsigned& taken, unsigned limit)
    {
        const std::lock_guard guard(uploadsLock);
        if (taken >= std::max(1U, limit))
            return nullptr;
        ++taken;
        return {&taken, [this](unsigned* counter) {
                    const std::lock_guard released(uploadsLock);
                    --*counter;
                }};
    }
    [[nodiscard]] std::shared_ptr<void> uploadSlot() { return slot(uploads, options.maxUploads); }
    [[nodiscard]] std::shared_ptr<void> downloadSlot()
    {
        return slot(downloads, options.maxDownloads);
    }
    // A slot for one job watch of `user` while the returned guard lives; nullptr when the user
    // holds options.maxWatchesPerUser already (`userLimit` set) or the platform
    // options.maxWatches (issue #54: one user can not take every slot).
    [[nodiscard]] std::shared_ptr<void> watchSlot(const std::string& user, bool& userLimit)
    {
        const std::lock_guard guard(uploadsLock);
        const auto held = watchesByUser.find(user);
        const unsigned mine = held == watchesByUser.end() ? 0 : held->second;
        userLimit = mine >= std::max(1U, options.maxWatchesPerUser);
        if (userLimit || watches >= std::max(1U, options.maxWatches))
            return nullptr;
        ++watches;
        ++watchesByUser[user];
        return {&watches, [this, user](unsigned* counter) {
                    const std::lock_guard released(uploadsLock);
                    --*counter;
                    const auto entry = watchesByUser.find(user);
                    if (entry != watchesByUser.end() && --entry->second == 0)
                        watchesByUser.erase(entry);
                }};
    }

    // The verifier refused a handshake presenting the certificate `serial` (empty: unreadable).
    void countRefusedHandshake(const std::string& serial)
    {
        std::string owner;
        {
            const std::lock_guard guard(revokedLock);
            if (const auto found = revokedOwners.find(serial); found != revokedOwners.end())
                owner = found->second;
        }
        refusedHandshakes.count(serial, std::move(owner), unixNow());
    }

    // The counts whose window (`windowSeconds` from their first refusal) has passed, or every
    // count when `all`, taken out to be written.
    [[nodiscard]] std::map<std::string, HandshakeRefusals::Counted>
    takeRefusedHandshakes(bool all, std::int64_t windowSeconds)
    {
        return refusedHandshakes.take(all, windowSeconds, unixNow());
    }

    [[nodiscard]] static std::int64_t unixNow()
    {
        return std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
            .count();
    }

    [[nodiscard]] bool isRevoked(const std::string& serial)
    {
        const std::lock_guard guard(revokedLock);
        return revoked.count(serial) > 0;
    }

    // Adds `serials` to the revoked set and publishes a new CRL in the run folder.
    [[nodiscard]] Result<void> revoke(const std::vector<std::string>& serials)
    {
        const auto now = crypto::CertificateClock::now();
        {
            const std::lock_guard guard(revokedLock);
            revoked.insert(serials.begin(), serials.end());
            // Whose it was, for the entry of a handshake refused later (countRefusedHandshake).
            for (const std::string& serial : serials)
                if (const auto bound = bindings.find(serial); bound != bindings.end())
                    revokedOwners[serial] = bound->second.user;
        }
        for (const std::string& serial : serials)
            revocations.push_back({serial, now});
        return publishCrl();
    }

    // After core ended every session of `user` (session revocation, disabling, a reset that took
    // effect): the client certificates bound to them are revoked too, so that they are refused
    // at the handshake and listed in the CRL, not only refused call by call. Returns how many.
    // Revokes every certificate bound to a session of `user` but the one with serial `keep`.
    [[nodiscard]] Result<std::size_t> revokeCertificatesOf(const std::string& user,
                                                           const std::string& keep = {})
    {
        std::vector<std::string> serials;
        for (auto binding = bindings.begin(); binding != bindings.end();) {
            if (binding->second.user == user && binding->first != keep) {
                serials.push_back(binding->first);
                {
                    const std::lock_guard guard(revokedLock);
                    revokedOwners[binding->first] = user;
                }
                binding = bindings.erase(binding);
            } else {
                ++binding;
            }
        }
        if (serials.empty())
            return std::size_t{0};
        SEALTRAIN_TRY(revoke(serials));
        return serials.size();
    }

    [[nodiscard]] Result<void> publishCrl()
    {
        auto crl = platform.certificateAuthority().issueCrl(revocations, ++crlNumber,
                                                            std::chrono::hours(24 * 7));
        if (!crl)
            return crl.error();
        return writeFileAtomically(
            options.runDir / "crl.pem",
            {reinterpret_cast<const std::uint8_t*>(crl->data()), crl->size()},
            AtomicFileSink::Overwrite::Allow, 0644U);
    }
};

// Runs `work` on a thread of its own at nice 10, and waits for it. A password check (Argon2id,
// about 0.1 s of CPU and 64 MiB) then yields the processor to the calls of signed-in users, whose
// latency a flood of anonymous sign-ins would otherwise set (issue #27; bench_hardening).
template <typename Work>
void atLowPriority(const Work& work)
{
    std::thread worker([&] {
        (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 10);
        work();
    });
    worker.join();
}

// The peer's client certificate (PEM), or empty when it presented none.
inline std::string peerCertificate(const ServerContext& context)
{
    const auto auth = context.auth_context();
    if (!auth)
        return {};
    const auto values = auth->FindPropertyValues("x509_pem_cert");
    if (values.empty())
        return {};
    return {values.front().data(), values.front().size()};
}

// The caller's session token: the binding of its client certificate, or "" (which every core
// call refuses, and audits, as an unknown session) when it has none.
struct Caller {
    std::string token;
    std::string serial;
};

inline Caller callerOf(Shared& shared, const ServerContext& context)
{
    const std::string pem = peerCertificate(context);
    if (pem.empty())
        return {};
    const std::string serial = shared.serialOf(pem);
    if (serial.empty())
        return {};
    const auto found = shared.bindings.find(serial);
    if (found == shared.bindings.end())
        return {"", serial};
    return {found->second.token, serial};
}

// A list request's page as core takes it (limit 0: the default page).
inline core::ListPage listPage(std::int64_t before, std::uint32_t limit)
{
    return {before, limit == 0 ? core::kDefaultListPage : limit};
}

// A request's page of a small list (store/list_page.h, KeyedPage); 0 asks for the default size.
template <typename Request>
core::KeyedPage keyedPage(const Request& request)
{
    return {request.after(), request.limit() == 0 ? core::kDefaultListPage : request.limit()};
}

inline core::CallOrigin Shared::originOf(const ServerContext& context)
{
    const std::string pem = peerCertificate(context);
    return {context.peer(), pem.empty() ? std::string() : serialOf(pem)};
}

inline std::optional<Binding> Shared::bindingOf(const ServerContext& context)
{
    const std::string pem = peerCertificate(context);
    const std::string serial = pem.empty() ? std::string() : serialOf(pem);
    if (serial.empty())
        return std::nullopt;
    const std::lock_guard guard(lock);
    const auto binding = bindings.find(serial);
    return binding == bindings.end() ? std::nullopt : std::optional(binding->second);
}

inline std::string Shared::signedInUser(const ServerContext& context)
{
    auto binding = bindingOf(context);
    return binding ? binding->user : std::string();
}

inline std::string Shared::sessionOf(const ServerContext& context)
{
    auto binding = bindingOf(context);
    return binding ? binding->token : std::string();
}

inline bool Shared::isSignedIn(const ServerContext& context)
{
    const std::string pem = peerCertificate(context);
    if (pem.empty())
        return false;
    const std::string serial = serialOf(pem);
    if (serial.empty())
        return false;
    const std::lock_guard guard(lock);
    return bindings.count(serial) > 0;
}

// A password from a request, in memory that is zeroed when freed.
inline Result<crypto::SecretBytes> secretOf(const std::string& text)
{
    return crypto::SecretBytes::fromBytes(
        {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
}

// Cancels a streaming call that receives nothing for `limit` (issue #27: stalled uploads held
// their threads, slots and memory until the client's deadline). The receiving code calls
// progress() at every message; the watch ends when the object goes. Checked every second.
class IdleWatchdog {
public:
    IdleWatchdog(grpc::ServerContext& context, std::chrono::seconds limit)
        : last_(now())
        , thread_([this, &context, limit](const std::stop_token& stop) {
            std::unique_lock held(lock_);
            while (!stop.stop_requested()) {
                (void)wake_.wait_for(held, stop, std::chrono::seconds(1), [] { return false; });
                if (!stop.stop_requested() && now() - last_.load() > limit.count()) {
                    fired_ = true;
                    context.TryCancel();
                    return;
                }
            }
        })
    {
    }
    IdleWatchdog(const IdleWatchdog&) = delete;
    IdleWatchdog& operator=(const IdleWatchdog&) = delete;
    ~IdleWatchdog() = default;  // the thread is asked to stop and joined

    void progress() { last_ = now(); }
    // Whether the call was cancelled for sending nothing.
    [[nodiscard]] bool fired() const { return fired_.load(); }

private:
    static std::int64_t now()
    {
        return std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }

    std::atomic<std::int64_t> last_;
    std::atomic<bool> fired_{false};
    std::mutex lock_;
    std::condition_variable_any wake_;
    std::jthread thread_;  // last: it stops and joins before the members it uses go
};

// Overwrites a request's secret field (a password, a reset code, an enrolment token) with zeros
// once it has been read, so that the message gRPC frees after the call no longer holds it (issue
// #27, item 2). gRPC made the message and hands it over as const; the object itself is not const,
// so writing its bytes is defined. What gRPC's own receive buffers held is out of reach (see
// docs/operations/control-daemon.md).
inline void wipeRequestField(const std::string& field)
{
    auto& bytes = const_cast<std::string&>(field);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
    wipeMemory({reinterpret_cast<std::uint8_t*>(bytes.data()), bytes.size()});
}

// A request's secret field in locked memory (secretOf), the field wiped (wipeRequestField).
inline Result<crypto::SecretBytes> takeSecret(const std::string& field)
{
    auto secret = secretOf(field);
    wipeRequestField(field);
    return secret;
}

// OK, or the error's status.
template <typename T>
Status statusOf(const Result<T>& result)
{
    return result ? Status::OK : Internal::toStatus(result.error());
}

// The job and a recorded checkpoint as the contract reports them (jobs_service.cpp).
void fillJob(const core::JobInfo& job, sealtrain::v1::Job* out);
void fillCheckpoint(const core::JobCheckpoint& checkpoint, sealtrain::v1::JobCheckpoint* out);

// The services of the contract, one file each (sessions_service.cpp, users_service.cpp, …,
// worker_service.cpp).
[[nodiscard]] std::unique_ptr<grpc::Service> makeSessionsService(Shared& shared);
[[nodiscard]] std::unique_ptr<grpc::Service> makeUsersService(Shared& shared);
[[nodiscard]] std::unique_ptr<grpc::Service> makeAccessService(Shared& shared);
[[nodiscard]] std::unique_ptr<grpc::Service> makeDatasetsService(Shared& shared);
[[nodiscard]] std::unique_ptr<grpc::Service> makeAuditService(Shared& shared);
[[nodiscard]] std::unique_ptr<grpc::Service> makeTrainingService(Shared& shared);
[[nodiscard]] std::unique_ptr<grpc::Service> makeJobsService(Shared& shared);
[[nodiscard]] std::unique_ptr<grpc::Service> makeRunsService(Shared& shared);
[[nodiscard]] std::unique_ptr<grpc::Service> makeComplianceService(Shared& shared);
[[nodiscard]] std::unique_ptr<grpc::Service> makeRegistryService(Shared& shared);
[[nodiscard]] std::unique_ptr<grpc::Service> makeWorkersService(Shared& shared);
[[nodiscard]] std::unique_ptr<grpc::Service> makeKeyringService(Shared& shared);
// Platform.Backup's body (backup_service.cpp).
[[nodiscard]] Status streamBackup(Shared& shared, const ServerContext& context,
                                  const sealtrain::v1::BackupRequest& request,
                                  grpc::ServerWriter<sealtrain::v1::BackupChunk>& writer);

}  // namespace sealtrain::api::server_internal
