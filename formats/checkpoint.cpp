// Sealed, signed training checkpoints (checkpoint.h, docs/formats/checkpoint.md).
#include "sealtrain/formats/checkpoint.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/dsse.h"
#include "sealtrain/crypto/sealed.h"
#include "sealtrain/formats/safetensors.h"
#include "sealtrain/formats/safetensors_reader.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <future>
#include <stdexcept>
#include <system_error>

namespace sealtrain::trainer {
namespace {

using nlohmann::json;

constexpr std::string_view kFilePrefix = "checkpoint-";
constexpr std::string_view kSealedSuffix = ".sealed";
constexpr std::string_view kEnvelopeSuffix = ".dsse.json";
constexpr std::string_view kMomentPrefixes[] = {"optimizer.m.", "optimizer.v."};
constexpr std::uintmax_t kMaxEnvelopeBytes = 1U << 20U;

Error integrity(const std::string& sentence)
{
    return Error(ErrorCode::Integrity, sentence);
}

// A number this build writes as an unsigned integer (a count, a step, a seed), read back. A float
// or a negative number is refused before it is converted: converting a float out of the target's
// range is undefined behaviour (the fuzzer found 2.2e112 as a total_steps).
struct NotAWholeNumber : std::invalid_argument {
    NotAWholeNumber()
        : std::invalid_argument("not an unsigned integer")
    {
    }
};

template <typename T>
T wholeNumber(const json& value)
{
    if (!value.is_number_unsigned())
        throw NotAWholeNumber();
    return value.get<T>();
}

std::string hexDigest(std::span<const std::uint8_t> bytes)
{
    return toHex(crypto::sha256(bytes));
}

std::string fileLabel(const CheckpointFiles& files)
{
    return files.sealed.filename().string();
}

bool isHexDigest(const std::string& text)
{
    return isSha256Hex(text);
}

json configObject(const TrainingConfig& config)
{
    return json{
        {"adamw",
         {{"beta1", config.adamw.beta1},
          {"beta2", config.adamw.beta2},
          {"epsilon", config.adamw.epsilon},
          {"weight_decay", config.adamw.weightDecay}}},
        {"batch", config.batch},
        {"grad_accum", config.gradAccum},
        {"max_grad_norm", config.maxGradientNorm},
        {"model",
         {{"context", config.model.contextLength},
          {"heads", config.model.heads},
          {"layers", config.model.layers},
          {"padded_vocab", config.model.paddedVocabSize},
          {"vocab", config.model.vocabSize},
          {"width", config.model.width}}},
        {"schedule",
         {{"max_lr", config.schedule.maxRate},
          {"min_lr", config.schedule.minRate},
          {"total_steps", config.schedule.totalSteps},
          {"warmup_steps", config.schedule.warmupSteps}}},
        {"seed", config.seed},
        {"world_size", config.worldSize},
    };
}

json referenceObject(const std::optional<CheckpointReference>& reference)
{
    if (!reference)
        return nullptr;
    return json{{"digest", {{"sha256", reference->sha256}}}, {"name", reference->name}};
}

// The tensors of a checkpoint, by name, with the shapes they are stored under.
std::vector<SafetensorsEntry> checkpointEntries(const GptConfig& model,
                                                const CheckpointTensors& tensors)
{
    auto entries = gptExportEntries(model, tensors.parameters);
    const std::span<const float> moments[] = {tensors.firstMoment, tensors.secondMoment};
    const std::size_t count = entries.size();
    for (std::size_t which = 0; which < 2; ++which) {
        auto momentEntries = gptExportEntries(model, moments[which]);
        for (std::size_t i = 0; i < count; ++i) {
            momentEntries[i].name = std::string(kMomentPrefixes[which]) + momentEntries[i].name;
            entries.push_back(std::move(momentEntries[i]));
        }
    }
    return entries;
}

Result<std::string> readEnvelopeText(const CheckpointFiles& files)
{
    std::error_code error;
    const auto size = std::filesystem::file_size(files.envelope, error);
    if (error) {
        return Error(ErrorCode::NotFound,
                     fmt::format("The checkpoint '{}' has no signature envelope '{}'; it is "
                                 "incomplete or was not written by Sealtrain, so do not use it.",
                                 fileLabel(files), files.envelope.filename().string()));
    }
    if (size > kMaxEnvelopeBytes)
        return integrity(fmt::format("The signature envelope '{}' is too large to be a "
                                     "checkpoint's; restore it from a trusted copy.",
                                     files.envelope.filename().string()));
    return readWholeFile(files.envelope, kMaxEnvelopeBytes);
}

Result<LoadedCheckpoint> decryptAndCheck(const CheckpointFiles& files, CheckpointLineage lineage,
                                         const crypto::KekResolver& resolver)
{
    const std::string context = "Checkpoint '" + fileLabel(files) + "'";
    auto reader = crypto::SealedReader::open(files.sealed, resolver);
    if (!reader)
        return reader.error().withContext(context);
    if (reader->metadata().contentType != kCheckpointContentType)
        return integrity(fmt::format("The sealed file '{}' is not a checkpoint (content type "
                                     "'{}'); pass a checkpoint's .sealed file.",
                                     fileLabel(files), reader->metadata().contentType));
    MemorySink plaintext;
    if (auto read = reader->readAll(plaintext); !read)
        return read.error().withContext(context);
    if (hexDigest(plaintext.bytes()) != lineage.subject.sha256)
        return integrity(fmt::format("The checkpoint '{}' decrypts to content whose SHA-256 is "
                                     "not the one its signed statement names, so it was "
                                     "replaced; do not use it.",
                                     fileLabel(files)));
    auto decoded = decodeCheckpoint(plaintext.bytes());
    if (!decoded)
        return decoded.error().withContext(context);
    const CheckpointState& state = decoded->state;
    if (state.runId != lineage.run || state.jobId != lineage.job || state.step != lineage.step
        || state.datasetId != lineage.dataset
        || hexDigest(asBytes(state.config.toJson())) != lineage.configSha256)
        return integrity(fmt::format("The checkpoint '{}' records another run, job, step, "
                                     "configuration or dataset than its signed statement; do not "
                                     "use it.",
                                     fileLabel(files)));
    return LoadedCheckpoint{std::move(lineage), std::move(decoded).value()};
}

void removeQuietly(const std::filesystem::path& path)
{
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
}

// Keeps the newest `keep` complete checkpoints and removes sealed files without an envelope
// (left by a run that stopped between the two writes) older than `newestStep`.
void prune(const std::filesystem::path& folder, std::size_t keep, std::uint64_t newestStep)
{
    auto complete = listCheckpoints(folder);
    if (complete && keep > 0 && complete->size() > keep) {
        for (std::size_t i = 0; i + keep < complete->size(); ++i) {
            // The envelope first: a checkpoint half removed is an unsigned orphan, never a
            // signed statement without its file.
            removeQuietly((*complete)[i].envelope);
            removeQuietly((*complete)[i].sealed);
        }
    }
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
        auto files = checkpointFilesFor(entry.path());
        if (files && entry.path() == files->sealed && files->step < newestStep
            && !std::filesystem::exists(files->envelope, error))
            removeQuietly(files->sealed);
    }
}

}  // namespace

bool isSha256Hex(std::string_view text)
{
    return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

bool isValidRunId(std::string_view id)
{
    return !id.empty() && id.size() <= 64 && std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
               || c == '.' || c == '_' || c == '-';
    });
}

std::string TrainingConfig::toJson() const
{
    return configObject(*this).dump();
}

Result<TrainingConfig> TrainingConfig::fromJson(std::string_view text)
{
    const auto parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
    const Error bad = integrity("The checkpoint's training configuration is not one this build "
                                "writes; resume with the Sealtrain version that wrote it.");
    if (!parsed.is_object())
        return bad;
    TrainingConfig config;
    try {
        const auto& adamw = parsed.at("adamw");
        config.adamw.beta1 = adamw.at("beta1").get<double>();
        config.adamw.beta2 = adamw.at("beta2").get<double>();
        config.adamw.epsilon = adamw.at("epsilon").get<double>();
        config.adamw.weightDecay = adamw.at("weight_decay").get<double>();
        config.batch = wholeNumber<std::size_t>(parsed.at("batch"));
        config.gradAccum = wholeNumber<std::size_t>(parsed.at("grad_accum"));
        config.maxGradientNorm = parsed.at("max_grad_norm").get<double>();
        const auto& model = parsed.at("model");
        config.model.contextLength = wholeNumber<std::size_t>(model.at("context"));
        config.model.heads = wholeNumber<std::size_t>(model.at("heads"));
        config.model.layers = wholeNumber<std::size_t>(model.at("layers"));
        config.model.paddedVocabSize = wholeNumber<std::size_t>(model.at("padded_vocab"));
        config.model.vocabSize = wholeNumber<std::size_t>(model.at("vocab"));
        config.model.width = wholeNumber<std::size_t>(model.at("width"));
        const auto& schedule = parsed.at("schedule");
        config.schedule.maxRate = schedule.at("max_lr").get<double>();
        config.schedule.minRate = schedule.at("min_lr").get<double>();
        config.schedule.totalSteps = wholeNumber<std::size_t>(schedule.at("total_steps"));
        config.schedule.warmupSteps = wholeNumber<std::size_t>(schedule.at("warmup_steps"));
        config.seed = wholeNumber<std::uint64_t>(parsed.at("seed"));
        config.worldSize = wholeNumber<std::size_t>(parsed.at("world_size"));
    } catch (const json::exception&) {
        return bad;
    } catch (const NotAWholeNumber&) {
        return bad;
    }
    // Unknown or missing fields, or another spelling of the same values, are refused.
    if (config.toJson() != text)
        return bad;
    return config;
}

std::string TrainingConfig::firstDifference(const TrainingConfig& other) const
{
    const json mine = configObject(*this).flatten();
    const json theirs = configObject(other).flatten();
    for (const auto& [pointer, value] : mine.items()) {
        if (!theirs.contains(pointer) || theirs.at(pointer) != value) {
            std::string name = pointer.substr(1);
            std::replace(name.begin(), name.end(), '/', '.');
            return name;
        }
    }
    return {};
}

Result<std::vector<std::uint8_t>> encodeCheckpoint(const CheckpointState& state,
                                                   const CheckpointTensors& tensors)
{
    SEALTRAIN_TRY(state.config.model.validate());
    const ParameterLayout layout(state.config.model);
    if (tensors.parameters.size() != layout.totalSize()
        || tensors.firstMoment.size() != layout.totalSize()
        || tensors.secondMoment.size() != layout.totalSize())
        return Error(ErrorCode::Internal,
                     "The checkpoint's tensors do not have the model's size; this is a bug.");
    if (!isValidRunId(state.runId))
        return Error(ErrorCode::InvalidArgument,
                     "The run id must be 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-'; "
                     "choose another.");
    const std::map<std::string, std::string> metadata{
        {"config", state.config.toJson()},
        {"dataset", state.datasetId},
        {"format", kCheckpointFormat},
        {"job", state.jobId},
        {"loader", json{{"epoch", state.loader.epoch}, {"index", state.loader.index}}.dump()},
        {"optimizer_step", std::to_string(state.optimizerStep)},
        {"run", state.runId},
        {"step", std::to_string(state.step)},
        {"tokenizer", state.tokenizer},
    };
    const auto entries = checkpointEntries(state.config.model, tensors);
    return encodeSafetensors(entries, metadata);
}

Result<DecodedCheckpoint> decodeCheckpoint(std::span<const std::uint8_t> plaintext)
{
    auto file = decodeSafetensors(plaintext);
    if (!file)
        return file.error();
    const auto& metadata = file->metadata;
    const auto field = [&](const char* name) -> std::optional<std::string> {
        const auto found = metadata.find(name);
        return found == metadata.end() ? std::nullopt : std::optional(found->second);
    };
    if (field("format") != std::string(kCheckpointFormat))
        return Error(ErrorCode::Unsupported,
                     "The file is not a version 1 Sealtrain checkpoint; open it with the version "
                     "that wrote it.");
    DecodedCheckpoint decoded;
    CheckpointState& state = decoded.state;
    const auto config = field("config");
    auto parsedConfig = TrainingConfig::fromJson(config.value_or(""));
    if (!parsedConfig)
        return parsedConfig.error();
    state.config = std::move(parsedConfig).value();
    if (auto valid = state.config.model.validate(); !valid)
        return integrity("The checkpoint's model shape is not valid; restore it from a trusted "
                         "copy.");
    const auto step = parseDecimal(field("step").value_or(""));
    const auto optimizerStep = parseDecimal(field("optimizer_step").value_or(""));
    const auto loader = json::parse(field("loader").value_or(""), nullptr, false);
    const auto run = field("run");
    const auto job = field("job");
    const auto dataset = field("dataset");
    const auto tokenizer = field("tokenizer");
    if (!step || !optimizerStep || !run || !job || !dataset || !tokenizer || !loader.is_object()
        || !loader.contains("epoch") || !loader.contains("index")
        || !loader["epoch"].is_number_unsigned() || !loader["index"].is_number_unsigned()
        || metadata.size() != 9 || !isValidRunId(*run))
        return integrity("The checkpoint's metadata lacks or mangles the step, loader position, "
                         "run, job, dataset or tokenizer; restore it from a trusted copy.");
    state.step = *step;
    state.optimizerStep = *optimizerStep;
    state.loader = {loader["epoch"].get<std::uint64_t>(), loader["index"].get<std::uint64_t>()};
    state.runId = *run;
    state.jobId = *job;
    state.datasetId = *dataset;
    state.tokenizer = *tokenizer;

    const GptConfig& model = state.config.model;
    const ParameterLayout layout(model);
    if (file->tensors.size() != 3 * layout.tensors().size())
        return integrity("The checkpoint holds other tensors than the model's and its "
                         "optimizer's; restore it from a trusted copy.");
    std::vector<float>* targets[] = {&decoded.parameters, &decoded.firstMoment,
                                     &decoded.secondMoment};
    const std::string_view prefixes[] = {"", kMomentPrefixes[0], kMomentPrefixes[1]};
    const auto shapeOf = [&](const ParameterTensor& tensor) {
        auto shape = tensor.shape;
        if (tensor.name == "wte.weight")  // stored without the padding rows
            shape[0] = model.vocabSize;
        return shape;
    };
    // Every tensor first, so that what is allocated is what the file holds, not what its
    // recorded configuration claims.
    for (const std::string_view prefix : prefixes)
        for (const auto& tensor : layout.tensors())
            SEALTRAIN_TRY(
                checkF32Tensor(*file, std::string(prefix) + tensor.name, shapeOf(tensor)));
    for (std::size_t which = 0; which < 3; ++which) {
        std::vector<float>& flat = *targets[which];
        flat.assign(layout.totalSize(), 0.0F);
        for (const auto& tensor : layout.tensors()) {
            const std::size_t size =
                tensor.name == "wte.weight" ? model.vocabSize * model.width : tensor.size;
            SEALTRAIN_TRY(readF32Tensor(*file, std::string(prefixes[which]) + tensor.name,
                                        shapeOf(tensor),
                                        std::span(flat).subspan(tensor.offset, size)));
        }
    }
    return decoded;
}

std::string lineageStatement(const CheckpointLineage& lineage)
{
    json statement{
        {"_type", kInTotoStatementType},
        {"predicate",
         {{"config_sha256", lineage.configSha256},
          {"dataset", lineage.dataset},
          {"job", lineage.job},
          {"parent", referenceObject(lineage.parent)},
          {"run", lineage.run},
          {"step", lineage.step}}},
        {"predicateType", kLineagePredicateType},
        {"subject", json::array({referenceObject(lineage.subject)})},
    };
    // Only a fine-tuning run's statements carry "base", so a run from scratch signs the bytes
    // it always signed.
    if (lineage.base)
        statement["predicate"]["base"] = referenceObject(lineage.base);
    return statement.dump();
}

Result<CheckpointLineage> parseLineageStatement(std::string_view text)
{
    const Error bad = integrity("The checkpoint's signed statement is not an in-toto statement "
                                "with Sealtrain's lineage predicate; do not use the checkpoint.");
    const auto parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_object())
        return bad;
    CheckpointLineage lineage;
    try {
        if (parsed.at("_type").get<std::string>() != kInTotoStatementType
            || parsed.at("predicateType").get<std::string>() != kLineagePredicateType
            || parsed.at("subject").size() != 1)
            return bad;
        const auto reference = [](const json& object) {
            return CheckpointReference{object.at("name").get<std::string>(),
                                       object.at("digest").at("sha256").get<std::string>()};
        };
        lineage.subject = reference(parsed.at("subject").at(0));
        const auto& predicate = parsed.at("predicate");
        lineage.configSha256 = predicate.at("config_sha256").get<std::string>();
        lineage.dataset = predicate.at("dataset").get<std::string>();
        lineage.job = predicate.at("job").get<std::string>();
        lineage.run = predicate.at("run").get<std::string>();
        lineage.step = wholeNumber<std::uint64_t>(predicate.at("step"));
        if (!predicate.at("parent").is_null())
            lineage.parent = reference(predicate.at("parent"));
        if (predicate.contains("base"))
            lineage.base = reference(predicate.at("base"));
    } catch (const json::exception&) {
        return bad;
    } catch (const NotAWholeNumber&) {
        return bad;
    }
    if (!isHexDigest(lineage.subject.sha256) || !isHexDigest(lineage.configSha256)
        || (lineage.parent && !isHexDigest(lineage.parent->sha256))
        || (lineage.base && !isHexDigest(lineage.base->sha256))
        || lineageStatement(lineage) != text)
        return bad;
    return lineage;
}

std::string CheckpointFiles::plaintextName() const
{
    return fmt::format("{}{:08}.safetensors", kFilePrefix, step);
}

CheckpointFiles checkpointFiles(const std::filesystem::path& folder, std::uint64_t step)
{
    const std::string base = fmt::format("{}{:08}", kFilePrefix, step);
    return {step, folder / (base + std::string(kSealedSuffix)),
            folder / (base + std::string(kEnvelopeSuffix))};
}

Result<CheckpointFiles> checkpointFilesFor(const std::filesystem::path& path)
{
    const std::string name = path.filename().string();
    std::string_view digits = name;
    const Error bad(ErrorCode::InvalidArgument,
                    fmt::format("'{}' is not a checkpoint file (checkpoint-NNNNNNNN.sealed or "
                                "its .dsse.json); pass one of those.",
                                name));
    if (!digits.starts_with(kFilePrefix))
        return bad;
    digits.remove_prefix(kFilePrefix.size());
    if (digits.ends_with(kSealedSuffix))
        digits.remove_suffix(kSealedSuffix.size());
    else if (digits.ends_with(kEnvelopeSuffix))
        digits.remove_suffix(kEnvelopeSuffix.size());
    else
        return bad;
    std::uint64_t step = 0;
    const auto [at, error] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
    if (error != std::errc() || at != digits.data() + digits.size()
        || fmt::format("{:08}", step) != digits)
        return bad;
    return checkpointFiles(path.parent_path(), step);
}

Result<std::vector<CheckpointFiles>> listCheckpoints(const std::filesystem::path& folder)
{
    std::vector<CheckpointFiles> found;
    std::error_code error;
    if (!std::filesystem::exists(folder, error))
        return found;
    std::filesystem::directory_iterator entries(folder, error);
    if (error)
        return Error(ErrorCode::Io, fmt::format("Cannot list the checkpoint folder '{}': {}; "
                                                "check its permissions.",
                                                folder.string(), error.message()));
    for (const auto& entry : entries) {
        auto files = checkpointFilesFor(entry.path());
        if (files && entry.path() == files->sealed
            && std::filesystem::exists(files->envelope, error))
            found.push_back(std::move(files).value());
    }
    std::sort(found.begin(), found.end(),
              [](const CheckpointFiles& a, const CheckpointFiles& b) { return a.step < b.step; });
    return found;
}

Result<WrittenCheckpoint>
writeCheckpoint(const std::filesystem::path& folder, const CheckpointState& state,
                const CheckpointTensors& tensors, const std::optional<CheckpointReference>& parent,
                const crypto::Kek& kek, const crypto::SigningKey& signingKey, std::size_t keep,
                const std::optional<CheckpointReference>& base)
{
    auto plaintext = encodeCheckpoint(state, tensors);
    if (!plaintext)
        return plaintext.error();
    std::error_code error;
    if (!std::filesystem::exists(folder, error)) {
        std::filesystem::create_directories(folder, error);
        if (!error)
            std::filesystem::permissions(folder, std::filesystem::perms::owner_all, error);
        if (error)
            return Error(ErrorCode::Io, fmt::format("Cannot create the checkpoint folder '{}': "
                                                    "{}; check the path and its permissions.",
                                                    folder.string(), error.message()));
    }
    const CheckpointFiles files = checkpointFiles(folder, state.step);
    if (std::filesystem::exists(files.envelope, error))
        return Error(ErrorCode::AlreadyExists,
                     fmt::format("The checkpoint of step {} already exists in '{}'; resume from "
                                 "it or write into another folder.",
                                 state.step, folder.string()));
    // A sealed file without its envelope is what a run killed between the two writes leaves.
    removeQuietly(files.sealed);

    // The plaintext's SHA-256 (the statement's subject) is computed beside the sealing and the
    // durable write, which it would otherwise follow: about 0.8 s for GPT-2 124M with its moments
    // at 1.8 GB/s (bench_checkpoint). The plaintext is only read by both.
    auto digest =
        std::async(std::launch::async, [bytes = std::span<const std::uint8_t>(*plaintext)] {
            return hexDigest(bytes);
        });
    const json sealedMetadata{
        {"format", kCheckpointFormat}, {"run", state.runId}, {"step", state.step}};
    auto sealed = [&]() -> Result<void> {
        auto writer = crypto::SealedWriter::create(files.sealed, kek,
                                                   {kCheckpointContentType, sealedMetadata.dump()});
        if (!writer)
            return writer.error();
        SEALTRAIN_TRY(writer->write(*plaintext));
        return writer->finish();
    }();
    const std::string plaintextSha256 = digest.get();  // joined before any return
    if (!sealed)
        return sealed.error();

    CheckpointLineage lineage;
    lineage.subject = {files.plaintextName(), plaintextSha256};
    lineage.job = state.jobId;
    lineage.run = state.runId;
    lineage.step = state.step;
    lineage.configSha256 = hexDigest(asBytes(state.config.toJson()));
    lineage.dataset = state.datasetId;
    lineage.parent = parent;
    lineage.base = base;
    const std::string statement = lineageStatement(lineage);
    const auto envelope = crypto::signDsse(kInTotoPayloadType, asBytes(statement), signingKey);
    const std::string envelopeJson = envelope.toJson();
    auto committed = writeFileAtomically(files.envelope, asBytes(envelopeJson),
                                         AtomicFileSink::Overwrite::Refuse);
    if (!committed) {
        removeQuietly(files.sealed);
        return committed.error();
    }
    prune(folder, keep, state.step);
    return WrittenCheckpoint{files, lineage.subject};
}

Result<CheckpointLineage> verifyCheckpointSignature(const CheckpointFiles& files,
                                                    std::span<const crypto::PublicKey> trusted)
{
    if (trusted.empty())
        return Error(ErrorCode::InvalidArgument,
                     "No trusted public key was given to verify the checkpoint; pass the key "
                     "that signs checkpoints.");
    auto text = readEnvelopeText(files);
    if (!text)
        return text.error();
    auto envelope = crypto::DsseEnvelope::fromJson(*text);
    if (!envelope)
        return integrity(fmt::format("The signature envelope '{}' is not a DSSE envelope; restore "
                                     "it from a trusted copy.",
                                     files.envelope.filename().string()));
    const bool signedByTrusted =
        std::any_of(trusted.begin(), trusted.end(), [&](const crypto::PublicKey& key) {
            return crypto::verifyDsse(*envelope, key).ok();
        });
    if (!signedByTrusted)
        return Error(ErrorCode::Unauthenticated,
                     fmt::format("The checkpoint '{}' is not signed by a trusted key (its "
                                 "signature was altered or made by another key); do not use it.",
                                 fileLabel(files)));
    if (envelope->payloadType != kInTotoPayloadType)
        return integrity(fmt::format("The checkpoint '{}' is signed as '{}', not as an in-toto "
                                     "statement; do not use it.",
                                     fileLabel(files), envelope->payloadType));
    const std::string_view payload(reinterpret_cast<const char*>(envelope->payload.data()),
                                   envelope->payload.size());
    auto lineage = parseLineageStatement(payload);
    if (!lineage)
        return lineage.error();
    if (lineage->subject.name != files.plaintextName() || lineage->step != files.step)
        return integrity(fmt::format("The signed statement beside '{}' is about '{}' (step {}), "
                                     "so the files were renamed or swapped; do not use them.",
                                     fileLabel(files), lineage->subject.name, lineage->step));
    return lineage;
}

Result<LoadedCheckpoint> loadCheckpoint(const CheckpointFiles& files,
                                        std::span<const crypto::PublicKey> trusted,
                                        const crypto::KekResolver& resolver)
{
    auto lineage = verifyCheckpointSignature(files, trusted);
    if (!lineage)
        return lineage.error();
    return decryptAndCheck(files, std::move(lineage).value(), resolver);
}

Result<void> checkAuthorised(const LoadedCheckpoint& loaded, const AuthorisedCheckpoint& authorised)
{
    const std::string& sha256 = loaded.lineage.subject.sha256;
    if (!authorised.sha256.empty() && sha256 != authorised.sha256)
        return Error(ErrorCode::Unauthenticated,
                     fmt::format("The checkpoint read has SHA-256 {}, not {} as authorised, so "
                                 "the file was replaced after the check; find out who replaced "
                                 "it before running the command again.",
                                 sha256, authorised.sha256));
    const std::string& dataset = loaded.checkpoint.state.datasetId;
    if (!authorised.datasetId.empty() && dataset != authorised.datasetId)
        return Error(ErrorCode::Unauthenticated,
                     fmt::format("The checkpoint read was trained on dataset '{}', not on '{}' "
                                 "whose release was authorised, so the file was replaced after "
                                 "the check; find out who replaced it before running the "
                                 "command again.",
                                 dataset, authorised.datasetId));
    return success();
}

Result<LoadedCheckpoint> loadCheckpointForResume(const CheckpointFiles& files,
                                                 std::span<const crypto::PublicKey> trusted,
                                                 const crypto::KekResolver& resolver,
                                                 const ResumeExpectations& expectations)
{
    auto lineage = verifyCheckpointSignature(files, trusted);
    if (!lineage)
        return lineage.error();
    if (!expectations.runId.empty() && lineage->run != expectations.runId)
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The checkpoint '{}' belongs to run '{}', not '{}'; resume that "
                                 "run or start a new one.",
                                 fileLabel(files), lineage->run, expectations.runId));

    // The chain: the older checkpoints in the folder, oldest first, each the parent of the next.
    auto listed = listCheckpoints(files.sealed.parent_path());
    if (!listed)
        return listed.error();
    std::optional<CheckpointReference> previous;
    std::string previousLabel;
    for (const auto& older : *listed) {
        if (older.step >= files.step)
            break;
        auto olderLineage = verifyCheckpointSignature(older, trusted);
        if (!olderLineage)
            return olderLineage.error().withContext(
                fmt::format("The chain before '{}' is broken", fileLabel(files)));
        if (olderLineage->run != lineage->run || (previous && olderLineage->parent != previous))
            return integrity(fmt::format("The chain before '{}' is broken: '{}' is not the "
                                         "next checkpoint of run '{}' after '{}'; remove the "
                                         "checkpoints that do not belong to the run.",
                                         fileLabel(files), fileLabel(older), lineage->run,
                                         previousLabel.empty() ? "its start" : previousLabel));
        previous = olderLineage->subject;
        previousLabel = fileLabel(older);
    }
    if (previous && lineage->parent != previous)
        return integrity(fmt::format("The chain is broken: '{}' does not name '{}', the previous "
                                     "checkpoint of its folder, as its parent; it belongs to "
                                     "another run or history, so do not resume from it.",
                                     fileLabel(files), previousLabel));

    auto loaded = decryptAndCheck(files, std::move(lineage).value(), resolver);
    if (!loaded)
        return loaded.error();
    const CheckpointState& state = loaded->checkpoint.state;
    if (const auto field = expectations.config.firstDifference(state.config); !field.empty())
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The checkpoint '{}' was trained with another '{}' than this "
                                 "run; resume with the options it was trained with or start a "
                                 "new run.",
                                 fileLabel(files), field));
    if (state.datasetId != expectations.datasetId)
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The checkpoint '{}' was trained on dataset '{}', not '{}'; "
                                 "resume on the same dataset or start a new run.",
                                 fileLabel(files), state.datasetId, expectations.datasetId));
    return loaded;
}

}  // namespace sealtrain::trainer
