// The client library's KeyringClient (keyring_client.h): each with a deadline long enough for a
// database re-key or a re-wrap of every dataset, which the control plane does while it serves.
#include "client_state.h"

#include "sealtrain/api/client.h"

#include <chrono>
#include <string>
#include <vector>

namespace sealtrain::api {
namespace {

namespace v1 = client_internal::v1;

constexpr std::chrono::seconds kKeyringCallTimeout = std::chrono::minutes(30);

}  // namespace

Result<std::vector<KekSummary>> KeyringClient::listKeks()
{
    return state_->allKeyedPages<KekSummary>(
        *state_->keyring, &v1::Keyring::Stub::ListKeks,
        [](const v1::ListKeksReply& reply, std::vector<KekSummary>& keks) {
            for (const v1::Kek& kek : reply.keks())
                keks.push_back(
                    {kek.id(), kek.version(), kek.state(), kek.created(), kek.retired()});
        },
        kKeyringCallTimeout);
}

Result<std::uint32_t> KeyringClient::rotateKek(const std::string& id)
{
    v1::KekRequest request;
    request.set_id(id);
    auto reply =
        state_->call(*state_->keyring, &v1::Keyring::Stub::RotateKek, request, kKeyringCallTimeout);
    if (!reply)
        return reply.error();
    return reply->version();
}

Result<RewrapOutcome> KeyringClient::rewrapObjects(const std::string& id)
{
    v1::KekRequest request;
    request.set_id(id);
    auto reply = state_->call(*state_->keyring, &v1::Keyring::Stub::RewrapObjects, request,
                              kKeyringCallTimeout);
    if (!reply)
        return reply.error();
    return RewrapOutcome{reply->rewrapped(), {reply->lines().begin(), reply->lines().end()}};
}

Result<void> KeyringClient::retireKek(const std::string& id, std::uint32_t version)
{
    v1::RetireKekRequest request;
    request.set_id(id);
    request.set_version(version);
    auto reply =
        state_->call(*state_->keyring, &v1::Keyring::Stub::RetireKek, request, kKeyringCallTimeout);
    if (!reply)
        return reply.error();
    return success();
}

Result<void> KeyringClient::changePassphrase(const crypto::SecretBytes& current,
                                             const crypto::SecretBytes& next)
{
    v1::ChangePassphraseRequest request;
    request.set_current_passphrase(current.bytes().data(), current.size());
    request.set_new_passphrase(next.bytes().data(), next.size());
    auto reply = state_->call(*state_->keyring, &v1::Keyring::Stub::ChangePassphrase, request,
                              kKeyringCallTimeout);
    // The request held both passphrases: wiped before it is freed.
    for (std::string* field :
         {request.mutable_current_passphrase(), request.mutable_new_passphrase()})
        std::fill(field->begin(), field->end(), '\0');
    if (!reply)
        return reply.error();
    return success();
}

}  // namespace sealtrain::api
