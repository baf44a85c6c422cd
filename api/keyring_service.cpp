// The Keyring service (control.proto, "Keyring"): the data directory's key hierarchy, changed by
// the control plane while it serves (core/keys/keyring_changes.h decides and audits). Each call
// runs alone, between group commits: a rotation of `database` re-keys the database, a re-wrap reads
// the whole data directory.
#include "server_shared.h"
#include "status.h"

#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/keys/keyring_changes.h"
#include "sealtrain/core/store/database.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <memory>
#include <mutex>
#include <string>

namespace sealtrain::api::server_internal {
namespace {

namespace v1 = sealtrain::v1;
using grpc::ServerContext;
using grpc::Status;

constexpr std::string_view kDatabaseKek = "database";

class KeyringService final : public v1::Keyring::Service {
public:
    explicit KeyringService(Shared& shared)
        : shared_(shared)
    {
    }

    Status ListKeks(ServerContext* context, const v1::ListKeksRequest* request,
                    v1::ListKeksReply* reply) override
    {
        return alone(*context, [&](const std::string& session) -> Status {
            auto keks = changes().list(session, shared_.platform.keyring(), keyedPage(*request));
            if (!keks)
                return Internal::toStatus(keks.error());
            for (const crypto::KekInfo& info : *keks) {
                v1::Kek* kek = reply->add_keks();
                kek->set_id(info.id);
                kek->set_version(info.version);
                kek->set_state(crypto::kekStateName(info.state));
                kek->set_created(info.created);
                kek->set_retired(info.retired);
            }
            reply->set_next_after(keks->nextAfter);
            return Status::OK;
        });
    }

    Status RotateKek(ServerContext* context, const v1::KekRequest* request,
                     v1::RotateKekReply* reply) override
    {
        return alone(*context, [&](const std::string& session) -> Status {
            auto& platform = shared_.platform;
            auto rotated = changes().rotate(session, platform.keyring(), request->id());
            if (!rotated)
                return Internal::toStatus(rotated.error());
            reply->set_version(rotated->version);
            if (request->id() == kDatabaseKek) {
                if (Status rekeyed = rekeyDatabase(); !rekeyed.ok())
                    return rekeyed;
                reply->set_database_rekeyed(true);
            }
            return Status::OK;
        });
    }

    Status RewrapObjects(ServerContext* context, const v1::KekRequest* request,
                         v1::RewrapObjectsReply* reply) override
    {
        return alone(*context, [&](const std::string& session) -> Status {
            auto done = changes().rewrapAll(session, shared_.platform.keyring(), request->id(),
                                            {shared_.platform.path()});
            if (!done)
                return Internal::toStatus(done.error());
            reply->set_rewrapped(done->rewrapped);
            for (const std::string& line : done->lines)
                reply->add_lines(line);
            return Status::OK;
        });
    }

    Status RetireKek(ServerContext* context, const v1::RetireKekRequest* request,
                     v1::RetireKekReply*) override
    {
        return alone(*context, [&](const std::string& session) -> Status {
            // The database is no sealed file the retirement's search would find: a rotation
            // whose re-key failed would leave it under the version about to be erased.
            if (request->id() == kDatabaseKek) {
                if (Status rekeyed = rekeyDatabase(); !rekeyed.ok())
                    return rekeyed;
            }
            const core::KekRetirement retirement{
                request->id(), request->version(), {shared_.platform.path()}};
            return statusOf(changes().retire(session, shared_.platform.keyring(), retirement));
        });
    }

    Status ChangePassphrase(ServerContext* context, const v1::ChangePassphraseRequest* request,
                            v1::ChangePassphraseReply*) override
    {
        return alone(*context, [&](const std::string& session) -> Status {
            auto current = takeSecret(request->current_passphrase());
            auto next = takeSecret(request->new_passphrase());
            if (!current)
                return Internal::toStatus(current.error());
            if (!next)
                return Internal::toStatus(next.error());
            return statusOf(
                changes().changePassphrase(session, shared_.platform.keyring(), *current, *next));
        });
    }

private:
    // The database re-keyed to the active `database` version. When this stops half-way, the
    // next open finds the older version that still opens it and re-keys it there
    // (core::Database::openWithKeyring).
    [[nodiscard]] Status rekeyDatabase()
    {
        auto key = core::deriveDatabaseKey(shared_.platform.keyring());
        if (!key)
            return Internal::toStatus(key.error());
        return statusOf(shared_.platform.database().rekey(*key));
    }

    [[nodiscard]] core::KeyringChanges& changes()
    {
        return shared_.platform.controlPlane().keyringChanges();
    }

    // `body` with the caller's session, alone (holding the lock the committer holds for a
    // group) and with the call's origin on every entry it writes. The caller is found from its
    // certificate before any field of the request is read; core refuses (and audits) a caller
    // without a session or without keyring.manage.
    template <typename Body>
    Status alone(const ServerContext& context, const Body& body)
    {
        (void)shared_.serialOf(peerCertificate(context));  // parsed before the lock, when new
        // After a backup's archive is written (backup_service.cpp): it must not see re-wrapped
        // objects under a keyring it did not copy.
        const std::lock_guard notDuringBackup(shared_.backupWrite);
        const std::lock_guard guard(shared_.lock);
        const Shared::OriginScope origin(shared_, shared_.originOf(context));
        return body(callerOf(shared_, context).token);
    }

    Shared& shared_;
};

}  // namespace

std::unique_ptr<grpc::Service> makeKeyringService(Shared& shared)
{
    return std::make_unique<KeyringService>(shared);
}

}  // namespace sealtrain::api::server_internal
