// What the key release needs of the data directory (keys/key_vault.h).
#include "sealtrain/core/keys/key_vault.h"

#include "sealtrain/core/store/data_layout.h"
#include "sealtrain/crypto/keyring.h"
#include "sealtrain/crypto/sealed.h"
#include "sealtrain/formats/checkpoint.h"

#include <fmt/format.h>

#include <string>
#include <system_error>
#include <utility>

namespace sealtrain::core {

std::filesystem::path KeyVault::datasetsRoot() const
{
    return root / std::string(datadir::kDatasets);
}

crypto::KekResolver datasetsResolver(const crypto::Keyring& keyring)
{
    return [&keyring](const std::string& id, std::uint32_t version) -> Result<const crypto::Kek*> {
        if (id != datadir::kDatasetsKekId)
            return Error(ErrorCode::Integrity,
                         "A shard is sealed under the '" + id
                             + "' key rather than the datasets key; restore the dataset from a "
                               "trusted copy.");
        return keyring.findKek(id, version);
    };
}

std::vector<const crypto::Kek*> usableKeks(const crypto::Keyring& keyring, std::string_view id)
{
    std::vector<const crypto::Kek*> keks;
    for (const auto& info : keyring.list()) {
        if (info.id != id || info.state == crypto::KekState::Retired)
            continue;
        if (auto kek = keyring.findKek(info.id, info.version); kek)
            keks.push_back(*kek);
    }
    return keks;
}

namespace {

constexpr std::uint32_t kJobKeyVersion = 1;
constexpr std::size_t kJobKeySize = 32;
constexpr std::string_view kJobKeyFile = "job.key.sealed";

}  // namespace

std::filesystem::path jobFolder(const KeyVault& vault, std::int64_t job)
{
    return vault.root / "jobs" / std::to_string(job);
}

// The job's own checkpoint KEK ("job-<id>"): made at its first release, kept sealed under the
// platform's `checkpoints` KEK (jobs/<id>/job.key.sealed). A worker gets this key, never the
// platform's, so it can read back its job's checkpoints and no other.
Result<crypto::Kek> jobKey(const KeyVault& vault, std::int64_t job)
{
    const auto folder = jobFolder(vault, job);
    const auto path = folder / kJobKeyFile;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        auto active = vault.keyring.activeKek(trainer::kCheckpointsKekId);
        if (!active)
            return active.error();
        std::filesystem::create_directories(folder, ec);
        std::filesystem::permissions(folder, std::filesystem::perms::owner_all, ec);
        auto writer = crypto::SealedWriter::create(path, **active,
                                                   {"application/vnd.sealtrain.job-key", "{}"});
        if (!writer)
            return writer.error();
        auto secret = crypto::SecretBytes::random(kJobKeySize);
        if (!secret)
            return secret.error();
        SEALTRAIN_TRY(writer->write(secret->bytes()));
        SEALTRAIN_TRY(writer->finish());
    }
    const auto keks = usableKeks(vault.keyring, trainer::kCheckpointsKekId);
    const crypto::KekResolver resolver =
        [&keks](const std::string& id, std::uint32_t version) -> Result<const crypto::Kek*> {
        for (const crypto::Kek* kek : keks)
            if (kek->id == id && kek->version == version)
                return kek;
        return Error(ErrorCode::NotFound,
                     "The job's key is sealed under a checkpoints KEK this keyring no longer "
                     "has; restore the keyring from a backup.");
    };
    auto reader = crypto::SealedReader::open(path, resolver);
    if (!reader)
        return reader.error().withContext("Cannot open the job's key");
    if (reader->chunkCount() != 1 || reader->plaintextSize() != kJobKeySize)
        return Error(ErrorCode::Integrity, "The job's key file is not a 32-byte sealed key; "
                                           "restore the data directory from a backup.");
    auto key = crypto::SecretBytes::allocate(kJobKeySize);
    if (!key)
        return key.error();
    SEALTRAIN_TRY(reader->readChunk(0, key->mutableBytes()));
    crypto::Kek kek;
    kek.id = fmt::format("job-{}", job);
    kek.version = kJobKeyVersion;
    kek.key = std::move(key).value();
    return kek;
}

}  // namespace sealtrain::core
