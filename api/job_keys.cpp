// The keys the control plane hands a job, kept apart from the Workers service that hands them
// over (worker_service.cpp): each job's own checkpoint key, sealed in the job's folder under the
// checkpoints KEK, and the data keys of exactly one dataset's shards.
#include "server_shared.h"

#include "sealtrain/crypto/sealed.h"
#include "sealtrain/dataset/manifest.h"
#include "sealtrain/trainer/checkpoint.h"
#include "sealtrain/trainer/trainer_keys.h"

#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

namespace sealtrain::api::server_internal {
namespace {

constexpr std::uint32_t kJobKeyVersion = 1;
constexpr std::size_t kJobKeySize = 32;

std::string jobKeyId(std::int64_t job)
{
    return fmt::format("job-{}", job);
}

}  // namespace

std::filesystem::path jobFolder(const core::DataDirectory& platform, std::int64_t job)
{
    return platform.path() / "jobs" / std::to_string(job);
}

Result<crypto::Kek> jobKey(core::DataDirectory& platform, std::int64_t job)
{
    const auto folder = jobFolder(platform, job);
    const auto path = folder / "job.key.sealed";
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        auto active = platform.keyring().activeKek(trainer::kCheckpointsKekId);
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
    const auto keks = platform.usableKeks(trainer::kCheckpointsKekId);
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
    kek.id = jobKeyId(job);
    kek.version = kJobKeyVersion;
    kek.key = std::move(key).value();
    return kek;
}

Result<std::vector<trainer::DataKey>> datasetDataKeys(const core::DataDirectory& platform,
                                                      const std::string& datasetId)
{
    const auto folder = core::datasetFolder(platform.datasetsRoot(), datasetId);
    auto manifest = dataset::loadManifest(folder, datasetId);
    if (!manifest)
        return manifest.error();
    const crypto::KekResolver resolver = platform.datasetsResolver();
    std::vector<trainer::DataKey> dataKeys;
    for (const dataset::Split split : {dataset::Split::Train, dataset::Split::Validation}) {
        for (const dataset::ShardEntry& entry : manifest->split(split).shards) {
            auto source = FileSource::open(folder / entry.file);
            if (!source)
                return source.error();
            auto sealed = crypto::inspectSealedObject(**source);
            if (!sealed)
                return sealed.error();
            auto key = crypto::unwrapDataKey(**source, resolver);
            if (!key)
                return key.error();
            dataKeys.push_back({sealed->objectId, std::move(key).value()});
        }
    }
    return dataKeys;
}

}  // namespace sealtrain::api::server_internal
