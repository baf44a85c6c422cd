// Uploads into importer options and manifests into summaries (datasets/uploads.h).
#include "sealtrain/core/datasets/uploads.h"

#include "sealtrain/dataset/import.h"
#include "sealtrain/dataset/manifest.h"
#include "sealtrain/dataset/tokenizer.h"

#include <utility>

namespace sealtrain::core {
namespace {

constexpr std::uint64_t kBasisPoints = 10000;

Result<std::unique_ptr<dataset::Tokenizer>> makeTokenizer(const DatasetUpload& upload)
{
    if (upload.gpt2Vocab.has_value() != upload.gpt2Merges.has_value())
        return Error(ErrorCode::InvalidArgument,
                     "A GPT-2 tokenizer needs both vocab.json and merges.txt; send both or "
                     "neither.");
    if (!upload.gpt2Vocab)
        return std::unique_ptr<dataset::Tokenizer>(std::make_unique<dataset::ByteTokenizer>());
    auto bpe = dataset::Gpt2BpeTokenizer::load(*upload.gpt2Vocab, *upload.gpt2Merges);
    if (!bpe)
        return bpe.error();
    return std::unique_ptr<dataset::Tokenizer>(std::move(bpe).value());
}

Result<dataset::ImportOptions> importOptions(const DatasetUpload& upload)
{
    auto format = dataset::parseInputFormat(upload.format);
    if (!format)
        return format.error();
    dataset::ImportOptions options;
    options.inputs = upload.inputs;
    options.inputNames = upload.inputNames;
    options.format = *format;
    options.field = upload.field;
    if (!upload.classification.empty())
        options.classification = upload.classification;
    if (upload.policy == "reject")
        options.policy = dataset::InvalidRecordPolicy::Reject;
    else if (upload.policy.empty() || upload.policy == "skip")
        options.policy = dataset::InvalidRecordPolicy::Skip;
    else
        return Error(ErrorCode::InvalidArgument,
                     "The record policy '" + upload.policy + "' is unknown; use skip or reject.");
    options.redactPii = upload.redactPii;
    if (upload.maxRecordBytes != 0)
        options.maxRecordBytes = upload.maxRecordBytes;
    if (upload.validationBasisPoints > kBasisPoints)
        return Error(ErrorCode::InvalidArgument,
                     "The validation share is out of 10000 basis points; give 0 to 10000.");
    options.validationBasisPoints = static_cast<std::uint32_t>(upload.validationBasisPoints);
    if (upload.tokensPerShard != 0)
        options.tokensPerShard = upload.tokensPerShard;
    return options;
}

SplitSummary splitSummary(const dataset::SplitEntry& split)
{
    return {split.records, split.tokens, split.shards.size()};
}

}  // namespace

Result<PreparedImport> prepareImport(const DatasetUpload& upload,
                                     const std::filesystem::path& datasetsRoot)
{
    auto tokenizer = makeTokenizer(upload);
    if (!tokenizer)
        return tokenizer.error();
    auto options = importOptions(upload);
    if (!options)
        return options.error();
    PreparedImport prepared;
    prepared.request.name = upload.name;
    prepared.request.datasetsRoot = datasetsRoot;
    prepared.request.options = std::move(options).value();
    prepared.tokenizer = std::move(tokenizer).value();
    return prepared;
}

bool isPlainUploadName(std::string_view name)
{
    return dataset::isPlainInputName(name);
}

Result<ManifestSummary> manifestSummary(const std::filesystem::path& datasetsRoot,
                                        const std::string& id)
{
    auto manifest = dataset::loadManifest(datasetFolder(datasetsRoot, id), id);
    if (!manifest)
        return manifest.error();
    ManifestSummary summary;
    summary.tokenizer = manifest->tokenizer.id;
    summary.inputFormat = manifest->inputFormat;
    summary.train = splitSummary(manifest->train);
    summary.validation = splitSummary(manifest->validation);
    summary.counts = manifest->counts;
    summary.sources = manifest->sources.size();
    return summary;
}

}  // namespace sealtrain::core
