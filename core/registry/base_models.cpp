// Imported base models' files (registry/base_models.h; docs/formats/registry.md, "Imported base
// models").
#include "registry/base_models.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/core/datasets/datasets.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/random.h"
#include "sealtrain/crypto/sealed.h"
#include "sealtrain/dataset/manifest.h"
#include "sealtrain/dataset/tokenizer.h"
#include "sealtrain/formats/base_model.h"
#include "sealtrain/formats/checkpoint.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>

namespace sealtrain::core {
namespace {

constexpr const char* kSealedFile = "model.sealed";
constexpr std::uint64_t kMaxImportFile = std::uint64_t{64} << 30U;
// The files kept in the clear beside the sealed parameters, as the registration names them.
constexpr std::array<const char*, 3> kPlainFiles{"config.json", "vocab.json", "merges.txt"};

std::span<const std::uint8_t> bytesOf(std::string_view text)
{
    return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

std::string sha256Hex(std::string_view text)
{
    return toHex(crypto::sha256(bytesOf(text)));
}

Result<std::string> fileSha256(const std::filesystem::path& path)
{
    auto text = readWholeFile(path, kMaxImportFile);
    if (!text)
        return text.error();
    return sha256Hex(*text);
}

// The newest usable `checkpoints` KEK, which seals base models as it seals the platform's own
// checkpoints.
Result<const crypto::Kek*> sealingKek(const BaseModelStore& store)
{
    const auto& keks = store.checkpointKeks;
    if (keks.empty())
        return Error(ErrorCode::NotFound,
                     "The keyring has no usable 'checkpoints' KEK; its administrator adds one "
                     "with 'sealtrainctl keyring rotate checkpoints'.");
    return *std::max_element(
        keks.begin(), keks.end(),
        [](const crypto::Kek* a, const crypto::Kek* b) { return a->version < b->version; });
}

Error notTheRecorded(const ModelVersion& version, const std::string& file)
{
    return Error(ErrorCode::Integrity,
                 fmt::format("The file '{}' of {} is not the one its registration names; restore "
                             "the data directory's models/ folder from a backup.",
                             file, version.label()));
}

std::string tokenizerJson(const dataset::TokenizerInfo& info)
{
    return nlohmann::json{
        {"id", info.id}, {"vocab_size", info.vocabSize}, {"files", info.fileSha256}}
        .dump();
}

}  // namespace

Result<std::string> datasetTokenizer(const BaseModelStore& store, const std::string& datasetId)
{
    auto manifest = dataset::loadManifest(datasetFolder(store.datasetsRoot, datasetId), datasetId);
    if (!manifest)
        return manifest.error();
    return tokenizerJson(manifest->tokenizer);
}

std::filesystem::path baseModelFolder(const BaseModelStore& store, const std::string& name,
                                      std::int64_t version)
{
    return store.dataDir / "models" / name / std::to_string(version);
}

Result<StoredImport> storeImport(const BaseModelStore& store, const ImportModel& upload,
                                 const std::string& name, std::int64_t version,
                                 const ImportAccept& accept)
{
    StoredImport stored;
    auto config = readWholeFile(upload.config, std::uint64_t{1} << 20U);
    if (!config)
        return config.error().withContext("The folder's config.json can not be read");
    auto weights = readWholeFile(upload.weights, kMaxImportFile);
    if (!weights)
        return weights.error().withContext("The folder's model.safetensors can not be read");
    auto prepared = trainer::prepareBaseModel(*config, bytesOf(*weights));
    if (!prepared)
        return prepared.error();
    auto tokenizer = dataset::Gpt2BpeTokenizer::load(upload.vocabulary, upload.merges);
    if (!tokenizer)
        return tokenizer.error();
    const dataset::TokenizerInfo& info = (*tokenizer)->info();
    if (info.vocabSize != prepared->config.vocabSize)
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The tokenizer's vocab.json has {} tokens but config.json's "
                                 "vocab_size is {}; import the tokenizer files saved with the "
                                 "model.",
                                 info.vocabSize, prepared->config.vocabSize));
    stored.sources = {{"config.json", sha256Hex(*config)},
                      {"model.safetensors", sha256Hex(*weights)}};
    for (const auto& [file, path] :
         {std::pair{"vocab.json", upload.vocabulary}, std::pair{"merges.txt", upload.merges}}) {
        auto digest = fileSha256(path);
        if (!digest)
            return digest.error();
        stored.sources.emplace_back(file, *digest);
    }
    weights->clear();
    weights->shrink_to_fit();

    stored.tokenizer = tokenizerJson(info);
    const trainer::GptConfig& shape = prepared->config;
    stored.shape =
        nlohmann::json{
            {"layers", shape.layers},        {"heads", shape.heads},
            {"width", shape.width},          {"context", shape.contextLength},
            {"vocab_size", shape.vocabSize}, {"config_sha256", sha256Hex(prepared->configJson)}}
            .dump();
    stored.digest = "sha256:" + toHex(crypto::sha256(prepared->safetensors));
    SEALTRAIN_TRY(accept(stored));

    // Written into a hidden sibling and renamed into place, replacing what an import that
    // failed after this step left.
    auto kek = sealingKek(store);
    if (!kek)
        return kek.error();
    const auto target = baseModelFolder(store, name, version);
    const auto incoming = target.parent_path() / (".incoming-" + toHex(crypto::randomBytes(6)));
    std::error_code ec;
    std::filesystem::create_directories(incoming, ec);
    if (ec)
        return Error(ErrorCode::Io, fmt::format("Cannot create '{}' ({}); check the data "
                                                "directory's disk and permissions.",
                                                incoming.string(), ec.message()));
    const auto cleanup = [&] { std::filesystem::remove_all(incoming, ec); };
    auto written = [&]() -> Result<void> {
        auto writer = crypto::SealedWriter::create(
            incoming / kSealedFile, **kek,
            {trainer::kBaseModelContentType,
             nlohmann::json{{"model", name}, {"version", version}}.dump()});
        if (!writer)
            return writer.error();
        SEALTRAIN_TRY(writer->write(prepared->safetensors));
        SEALTRAIN_TRY(writer->finish());
        SEALTRAIN_TRY(writeFileAtomically(incoming / "config.json", bytesOf(prepared->configJson),
                                          AtomicFileSink::Overwrite::Refuse, 0644));
        for (const auto& [file, path] :
             {std::pair{"vocab.json", upload.vocabulary}, std::pair{"merges.txt", upload.merges}}) {
            auto text = readWholeFile(path, kMaxImportFile);
            if (!text)
                return text.error();
            SEALTRAIN_TRY(writeFileAtomically(incoming / file, bytesOf(*text),
                                              AtomicFileSink::Overwrite::Refuse, 0644));
        }
        auto sealed = fileSha256(incoming / kSealedFile);
        if (!sealed)
            return sealed.error();
        stored.sealedSha256 = *sealed;
        std::filesystem::remove_all(target, ec);
        std::filesystem::rename(incoming, target, ec);
        if (ec)
            return Error(ErrorCode::Io, fmt::format("Cannot move the imported model into '{}' "
                                                    "({}); check the data directory's disk.",
                                                    target.string(), ec.message()));
        return syncFolder(target.parent_path());
    }();
    if (!written) {
        cleanup();
        return written.error();
    }
    return stored;
}

Result<KeptTokenizer> keptTokenizer(const BaseModelStore& store,
                                    const std::map<std::string, std::string>& fileSha256)
{
    const auto wanted = [&](const char* file) {
        const auto found = fileSha256.find(file);
        return found == fileSha256.end() ? std::string() : found->second;
    };
    std::error_code ec;
    const auto root = store.dataDir / "models";
    // models/<name>/<version>/: a handful of imports, each two small files read.
    for (const auto& model : std::filesystem::directory_iterator(root, ec)) {
        for (const auto& version : std::filesystem::directory_iterator(model.path(), ec)) {
            auto vocabulary = readWholeFile(version.path() / "vocab.json", kMaxImportFile);
            auto merges = readWholeFile(version.path() / "merges.txt", kMaxImportFile);
            if (vocabulary && merges && sha256Hex(*vocabulary) == wanted("vocab.json")
                && sha256Hex(*merges) == wanted("merges.txt"))
                return KeptTokenizer{std::move(vocabulary).value(), std::move(merges).value()};
        }
    }
    return Error(ErrorCode::Unsupported,
                 "The model's BPE tokenizer files are not kept by this control plane; import the "
                 "base model it was fine-tuned from (sealtrainctl model import), whose files "
                 "are, and export again.");
}

Result<void> checkImport(const BaseModelStore& store, const ModelVersion& version)
{
    const auto folder = baseModelFolder(store, version.name, version.version);
    auto sealed = fileSha256(folder / kSealedFile);
    if (!sealed)
        return sealed.error();
    if (*sealed != version.sealedSha256)
        return notTheRecorded(version, kSealedFile);
    const auto tokenizer = nlohmann::json::parse(version.tokenizer, nullptr, false);
    const auto shape = nlohmann::json::parse(version.shape, nullptr, false);
    if (!tokenizer.is_object() || !tokenizer.contains("files") || !shape.is_object()
        || !shape.contains("config_sha256"))
        return notTheRecorded(version, "the registration's tokenizer or shape");
    for (const char* file : kPlainFiles) {
        auto digest = fileSha256(folder / file);
        if (!digest)
            return digest.error();
        const nlohmann::json& recorded = std::string(file) == "config.json"
                                             ? shape.at("config_sha256")
                                             : tokenizer.at("files").value(file, nlohmann::json());
        if (!recorded.is_string() || recorded.get<std::string>() != *digest)
            return notTheRecorded(version, file);
    }
    return success();
}

}  // namespace sealtrain::core
