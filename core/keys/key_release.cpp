// The key release (keys/key_release.h): scoped trainer keys, sealed to a worker or on a pipe, and
// the checks on every checkpoint a trainer hands back. The byte formats are trainer/'s
// (trainer_keys.h, checkpoint.h, in sealtrain_formats, which has none of the model's
// code).
#include "sealtrain/core/keys/key_release.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/core/datasets/datasets.h"
#include "sealtrain/core/jobs/scheduling/budgets.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"
#include "sealtrain/core/workers/workers.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/keyring.h"
#include "sealtrain/crypto/sealed.h"
#include "sealtrain/crypto/sealed_box.h"
#include "sealtrain/dataset/manifest.h"
#include "sealtrain/dataset/reader.h"
#include "sealtrain/formats/checkpoint.h"
#include "sealtrain/formats/job_spec.h"
#include "sealtrain/formats/trainer_keys.h"

#include <fmt/format.h>

#include <chrono>
#include <span>
#include <system_error>
#include <utility>

namespace sealtrain::core {
namespace {

// The data keys of exactly the shards of dataset `datasetId`, unwrapped with the `datasets` KEK
// (which never leaves): what a trainer is given in its place.
Result<std::vector<trainer::DataKey>> datasetDataKeys(const KeyVault& vault,
                                                      const std::string& datasetId)
{
    const auto folder = datasetFolder(vault.datasetsRoot(), datasetId);
    auto manifest = dataset::loadManifest(folder, datasetId);
    if (!manifest)
        return manifest.error();
    const crypto::KekResolver resolver = datasetsResolver(vault.keyring);
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

Result<std::vector<const crypto::Kek*>> checkpointKeks(const KeyVault& vault)
{
    auto keks = usableKeks(vault.keyring, trainer::kCheckpointsKekId);
    if (keks.empty())
        return Error(ErrorCode::NotFound,
                     "The keyring has no usable 'checkpoints' KEK; its administrator adds one "
                     "with 'sealtrainctl keyring rotate checkpoints'.");
    return keks;
}

// The data key of a starting model's sealed file, unwrapped with the KEK that sealed it (the
// `checkpoints` KEK for an import, its job's key for a job's version), which stays here. Reads
// no database row.
Result<trainer::DataKey> startingDataKey(const KeyVault& vault, const StartingModel& start)
{
    auto source = FileSource::open(start.sealed);
    if (!source)
        return source.error();
    auto info = crypto::inspectSealedObject(**source);
    if (!info)
        return info.error();
    std::optional<crypto::Kek> jobKek;
    if (start.job != 0) {
        auto kek = jobKey(vault, start.job);
        if (!kek)
            return kek.error();
        jobKek = std::move(kek).value();
    }
    const crypto::Keyring& keyring = vault.keyring;
    const crypto::KekResolver resolver =
        jobKek
            ? crypto::keyFileResolver(*jobKek)
            : crypto::KekResolver([&keyring](const std::string& id,
                                             std::uint32_t number) -> Result<const crypto::Kek*> {
                  if (id != trainer::kCheckpointsKekId)
                      return Error(ErrorCode::Integrity,
                                   "An imported model is sealed under another key than the "
                                   "checkpoints key; restore it from a backup.");
                  return keyring.findKek(id, number);
              });
    auto key = crypto::unwrapDataKey(**source, resolver);
    if (!key)
        return key.error();
    return trainer::DataKey{info->objectId, std::move(key).value()};
}

}  // namespace

KeyRelease::KeyRelease(KeyVault vault)
    : vault_(std::move(vault))
{
}

std::vector<std::string> KeyRelease::startArguments(const StartingModel& start,
                                                    const std::filesystem::path& path)
{
    return {"--init-from", path.string(), "--init-sha256", start.sha256, "--init-name", start.name};
}

Result<crypto::SecretBytes> KeyRelease::forOwnRun(const std::string& datasetId,
                                                  const std::optional<StartingModel>& start) const
{
    auto dataKeys = datasetDataKeys(vault_, datasetId);
    if (!dataKeys)
        return dataKeys.error();
    if (start) {
        auto key = startingDataKey(vault_, *start);
        if (!key)
            return key.error();
        dataKeys->push_back(std::move(key).value());
    }
    auto keks = checkpointKeks(vault_);
    if (!keks)
        return keks.error();
    return trainer::formatTrainerKeys(*keks, &vault_.checkpointsKey, {}, *dataKeys);
}

Result<DatasetCheck> KeyRelease::verifyDataset(const std::string& datasetId) const
{
    const auto resolver = datasetsResolver(vault_.keyring);
    const auto& trusted = vault_.manifestsKey.publicKey();
    auto report = dataset::verifyDataset(datasetFolder(vault_.datasetsRoot(), datasetId), datasetId,
                                         &resolver, &trusted);
    if (!report)
        return report.error();
    return DatasetCheck{report->shardsChecked, report->tokensChecked, trusted.keyId()};
}

Result<WorkerRelease> KeyRelease::forWorker(const WorkerInfo& worker, const Dispatch& dispatch,
                                            const formats::JobSpec& spec,
                                            const std::optional<std::string>& resumeSignerPem,
                                            const std::optional<StartingModel>& start) const
{
    auto dataKeys = datasetDataKeys(vault_, dispatch.datasetId);
    if (!dataKeys)
        return dataKeys.error();
    // A fine-tuning job's starting model (checked when it was taken): its one data key travels
    // with the dataset's, and the trainer checks the plaintext's SHA-256.
    if (start) {
        auto key = startingDataKey(vault_, *start);
        if (!key)
            return key.error();
        dataKeys->push_back(std::move(key).value());
    }
    auto kek = jobKey(vault_, dispatch.job.id);
    if (!kek)
        return kek.error();
    std::vector<crypto::PublicKey> trusted;
    if (resumeSignerPem) {
        auto signer = crypto::PublicKey::fromPem(*resumeSignerPem);
        if (!signer)
            return signer.error();
        trusted.push_back(*signer);
    }
    const crypto::Kek* keks[] = {&*kek};
    auto text = trainer::formatTrainerKeys(keks, nullptr, trusted, *dataKeys);
    if (!text)
        return text.error();
    auto sealed = crypto::sealToPublicKey(worker.boxKey, text->bytes());
    if (!sealed)
        return sealed.error();
    WorkerRelease release;
    release.sealedKeys = std::move(sealed).value();
    release.checkpointKek = kek->id;
    release.trainerArguments = formats::trainerArguments(spec);
    for (std::string argument :
         {std::string("--job-id"), std::to_string(dispatch.job.id), std::string("--run-id"),
          dispatch.runId, std::string("--dataset-id"), dispatch.datasetId,
          std::string("--checkpoint-kek"), kek->id})
        release.trainerArguments.push_back(std::move(argument));
    release.nodes = spec.resources.nodes;
    release.gpusPerNode = spec.resources.gpusPerNode;
    release.chargedGpus = chargedGpus(spec);
    release.ranksPerNode = spec.resources.gpusPerNode > 0 ? spec.resources.gpusPerNode
                                                          : spec.resources.cpuRanksPerNode;
    release.resume = resumeSignerPem.has_value();
    if (start) {
        release.startsFromModel = true;
        for (std::string argument :
             {std::string("--init-sha256"), start->sha256, std::string("--init-name"), start->name})
            release.trainerArguments.push_back(std::move(argument));
    }
    return release;
}

Result<crypto::SecretBytes> KeyRelease::forSampler(const VerifiedCheckpoint& checkpoint) const
{
    if (checkpoint.job == 0) {
        auto keks = checkpointKeks(vault_);
        if (!keks)
            return keks.error();
        const crypto::PublicKey signer = vault_.checkpointsKey.publicKey();
        return trainer::formatTrainerKeys(*keks, nullptr, std::span(&signer, 1));
    }
    auto signer = crypto::PublicKey::fromPem(checkpoint.signerPem);
    if (!signer)
        return signer.error();
    auto kek = jobKey(vault_, checkpoint.job);
    if (!kek)
        return kek.error();
    const crypto::Kek* keks[] = {&*kek};
    return trainer::formatTrainerKeys(keks, nullptr, std::span(&*signer, 1));
}

}  // namespace sealtrain::core
