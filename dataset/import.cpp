// Dataset import (import.h): one streaming pass from source files to sealed token shards.
#include "sealtrain/dataset/import.h"

#include "record_source.h"
#include "unicode_classes.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/base/folder_cleanup.h"
#include "sealtrain/base/logging.h"
#include "sealtrain/base/utf8.h"
#include "sealtrain/crypto/random.h"
#include "sealtrain/crypto/sealed.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

namespace sealtrain::dataset {

const char* inputFormatName(InputFormat format) noexcept
{
    switch (format) {
    case InputFormat::TextFiles: return "text-files";
    case InputFormat::TextRecords: return "text-records";
    case InputFormat::Jsonl: return "jsonl";
    case InputFormat::Csv: return "csv";
    case InputFormat::Fortune: return "fortune";
    }
    return "unknown";
}

Result<InputFormat> parseInputFormat(const std::string& name)
{
    for (const auto format : {InputFormat::TextFiles, InputFormat::TextRecords, InputFormat::Jsonl,
                              InputFormat::Csv, InputFormat::Fortune}) {
        if (name == inputFormatName(format))
            return format;
    }
    return Error(ErrorCode::InvalidArgument,
                 "The format '" + name
                     + "' is unknown; use text-files, text-records, jsonl, csv or fortune.");
}

namespace {

using internal::Record;
using internal::RecordSource;

// Exact de-duplication: an open-addressing set of the first 128 bits of each record's SHA-256
// (16 bytes a record, so 10 million records cost about 320 MiB at worst load; a 2 GB corpus of
// 4 KB records about 16 MiB).
class SeenRecords final {
public:
    // True when the digest was new.
    bool insert(const crypto::Sha256Digest& digest)
    {
        Key key{};
        std::memcpy(key.data(), digest.data(), key.size() * sizeof(std::uint64_t));
        if (key[0] == 0 && key[1] == 0)
            key[1] = 1;  // keep {0, 0} as the empty slot
        if ((count_ + 1) * 2 > slots_.size())
            grow();
        if (!place(slots_, key))
            return false;
        ++count_;
        return true;
    }

private:
    using Key = std::array<std::uint64_t, 2>;
    static bool place(std::vector<Key>& slots, const Key& key)
    {
        const std::size_t mask = slots.size() - 1;
        for (std::size_t i = key[0] & mask;; i = (i + 1) & mask) {
            if (slots[i] == key)
                return false;
            if (slots[i][0] == 0 && slots[i][1] == 0) {
                slots[i] = key;
                return true;
            }
        }
    }
    void grow()
    {
        std::vector<Key> bigger(std::max<std::size_t>(1024, slots_.size() * 2), Key{});
        for (const Key& key : slots_) {
            if (key[0] != 0 || key[1] != 0)
                place(bigger, key);
        }
        slots_.swap(bigger);
    }
    std::vector<Key> slots_;
    std::size_t count_ = 0;
};

// Removes the temporary folder unless the import succeeded.
Result<std::string> shardDigest(const std::filesystem::path& path)
{
    auto source = FileSource::open(path);
    if (!source)
        return source.error();
    auto info = crypto::inspectSealedObject(**source);
    if (!info)
        return info.error();
    crypto::Sha256 hash;
    std::vector<std::uint8_t> block(std::size_t{1} << 20U);
    const auto hashRange = [&](std::uint64_t offset, std::uint64_t length) -> Result<void> {
        while (length > 0) {
            const auto take =
                static_cast<std::size_t>(std::min<std::uint64_t>(length, block.size()));
            SEALTRAIN_TRY((*source)->readAt(offset, {block.data(), take}));
            hash.update({block.data(), take});
            offset += take;
            length -= take;
        }
        return success();
    };
    SEALTRAIN_TRY(hashRange(0, info->headerSize));
    SEALTRAIN_TRY(hashRange(info->payloadOffset, info->payloadSize));
    return toHex(hash.finish());
}

// Writes one split's tokens into sealed shards of a fixed number of tokens.
class ShardStream final {
public:
    ShardStream(Split split, const std::filesystem::path& folder, const crypto::Kek& kek,
                std::uint32_t tokenBytes, std::uint64_t tokensPerShard)
        : split_(split)
        , folder_(folder)
        , kek_(kek)
        , tokenBytes_(tokenBytes)
        , tokensPerShard_(tokensPerShard)
    {
    }

    Result<void> write(std::span<const std::uint32_t> tokens)
    {
        while (!tokens.empty()) {
            if (!writer_) {
                const auto file = shardFileName(split_, entry_.shards.size());
                auto writer = crypto::SealedWriter::create(
                    folder_ / file, kek_,
                    {kShardContentType, shardMetadata(split_, entry_.shards.size(), tokenBytes_)});
                if (!writer)
                    return writer.error();
                writer_.emplace(std::move(writer).value());
                entry_.shards.push_back({file, toHex(writer_->objectId()), "", 0});
            }
            ShardEntry& shard = entry_.shards.back();
            const auto take = static_cast<std::size_t>(
                std::min<std::uint64_t>(tokens.size(), tokensPerShard_ - shard.tokens));
            bytes_.resize(take * tokenBytes_);
            std::uint8_t* out = bytes_.data();
            for (std::size_t i = 0; i < take; ++i) {
                const std::uint32_t token = tokens[i];
                for (std::uint32_t b = 0; b < tokenBytes_; ++b)
                    *out++ = static_cast<std::uint8_t>(token >> (8U * b));
            }
            SEALTRAIN_TRY(writer_->write(bytes_));
            shard.tokens += take;
            entry_.tokens += take;
            tokens = tokens.subspan(take);
            if (shard.tokens == tokensPerShard_)
                SEALTRAIN_TRY(closeShard());
        }
        return success();
    }

    Result<void> finish()
    {
        if (writer_)
            SEALTRAIN_TRY(closeShard());
        return success();
    }

    void countRecord() { ++entry_.records; }
    [[nodiscard]] const SplitEntry& entry() const noexcept { return entry_; }

private:
    Result<void> closeShard()
    {
        SEALTRAIN_TRY(writer_->finish());
        writer_.reset();
        auto digest = shardDigest(folder_ / entry_.shards.back().file);
        if (!digest)
            return digest.error();
        entry_.shards.back().sha256 = std::move(digest).value();
        return success();
    }

    Split split_;
    std::filesystem::path folder_;
    const crypto::Kek& kek_;
    std::uint32_t tokenBytes_;
    std::uint64_t tokensPerShard_;
    std::optional<crypto::SealedWriter> writer_;
    SplitEntry entry_;
    std::vector<std::uint8_t> bytes_;
};

using SourceFile = InputFile;

}  // namespace

bool isPlainInputName(std::string_view name)
{
    constexpr std::size_t kMaxName = 4096;
    constexpr std::size_t kMaxPart = 255;
    if (name.empty() || name.size() > kMaxName || !isValidUtf8(name)
        || hasInvisibleFormatCharacter(name))
        return false;
    if (std::any_of(name.begin(), name.end(), [](char c) {
            return static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\';
        }))
        return false;
    std::size_t start = 0;
    while (start <= name.size()) {
        const std::size_t end = std::min(name.find('/', start), name.size());
        const std::string_view part = name.substr(start, end - start);
        if (part.empty() || part.size() > kMaxPart || part == "." || part == "..")
            return false;
        start = end + 1;
    }
    return true;
}

Result<std::vector<InputFile>> listInputFiles(const std::vector<std::filesystem::path>& inputs,
                                              InputFormat format)
{
    std::vector<SourceFile> files;
    for (const auto& input : inputs) {
        std::error_code ec;
        const auto name = input.lexically_normal().filename().empty()
                              ? input.lexically_normal().parent_path().filename()
                              : input.lexically_normal().filename();
        if (std::filesystem::is_directory(input, ec)) {
            std::vector<SourceFile> inside;
            for (std::filesystem::recursive_directory_iterator it(input, ec), end; !ec && it != end;
                 it.increment(ec)) {
                if (it->is_symlink(ec) || !it->is_regular_file(ec))
                    continue;
                if (format == InputFormat::Fortune && it->path().extension() == ".dat")
                    continue;
                inside.push_back({it->path(),
                                  (name / it->path().lexically_relative(input)).generic_string(),
                                  it->file_size(ec)});
            }
            if (ec)
                return Error(ErrorCode::Io, "Cannot list the folder '" + input.string()
                                                + "'; check its permissions.");
            std::sort(inside.begin(), inside.end(), [](const SourceFile& a, const SourceFile& b) {
                return a.displayName < b.displayName;
            });
            files.insert(files.end(), inside.begin(), inside.end());
        } else if (std::filesystem::exists(input, ec)) {
            files.push_back({input, name.generic_string(), std::filesystem::file_size(input, ec)});
        } else {
            return Error(ErrorCode::NotFound,
                         "The input '" + input.string() + "' does not exist; check the path.");
        }
    }
    if (files.empty())
        return Error(ErrorCode::InvalidArgument,
                     "The inputs hold no files; name a file or a folder with text in it.");
    return files;
}

namespace {

// The files of the import: listInputFiles, or the inputs as given under their given names.
Result<std::vector<SourceFile>> listSources(const ImportOptions& options)
{
    if (options.inputNames.empty())
        return listInputFiles(options.inputs, options.format);
    if (options.inputNames.size() != options.inputs.size())
        return Error(ErrorCode::InvalidArgument,
                     "Give one input name per input, or none; the import was not started.");
    std::vector<SourceFile> files;
    for (std::size_t i = 0; i < options.inputs.size(); ++i) {
        if (!isPlainInputName(options.inputNames[i]))
            return Error(ErrorCode::InvalidArgument,
                         "An input's name must be a relative path of plain parts (no '..', no "
                         "leading '/', no control or invisible format characters such as a "
                         "right-to-left override); rename it and import again.");
        std::error_code ec;
        const auto size = std::filesystem::file_size(options.inputs[i], ec);
        if (ec)
            return Error(ErrorCode::NotFound, "The input '" + options.inputNames[i]
                                                  + "' can not be read; send it again.");
        files.push_back({options.inputs[i], options.inputNames[i], size});
    }
    if (files.empty())
        return Error(ErrorCode::InvalidArgument,
                     "The inputs hold no files; name a file or a folder with text in it.");
    return files;
}

bool validLabel(const std::string& label)
{
    return !label.empty() && label.size() <= 32
           && std::all_of(label.begin(), label.end(), [](char c) {
                  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
              });
}

Result<void> checkOptions(const ImportOptions& options)
{
    if (!validLabel(options.classification))
        return Error(ErrorCode::InvalidArgument,
                     "The classification label must be 1-32 characters of a-z, 0-9, '_' or '-', "
                     "such as 'public', 'internal' or 'phi'.");
    if ((options.format == InputFormat::Jsonl || options.format == InputFormat::Csv)
        && options.field.empty())
        return Error(ErrorCode::InvalidArgument,
                     "JSONL and CSV imports need the name of the field or column that holds the "
                     "text.");
    if (options.validationBasisPoints > 10000)
        return Error(ErrorCode::InvalidArgument,
                     "The validation share is in basis points and can not exceed 10000.");
    if (options.tokensPerShard == 0 || options.maxRecordBytes == 0)
        return Error(ErrorCode::InvalidArgument,
                     "The shard size and the record size limit must be positive.");
    if (!options.parent.empty()
        && (options.parent.size() != 71 || options.parent.rfind("sha256:", 0) != 0))
        return Error(ErrorCode::InvalidArgument,
                     "The parent dataset id must be 'sha256:' and 64 hex digits.");
    std::error_code ec;
    if (!std::filesystem::is_directory(options.outputRoot, ec))
        return Error(ErrorCode::NotFound, "The output folder '" + options.outputRoot.string()
                                              + "' does not exist; create it first.");
    return success();
}

std::uint64_t newlinesBefore(std::string_view text, std::size_t offset)
{
    return static_cast<std::uint64_t>(
        std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

class ProgressMeter final {
public:
    ProgressMeter(const ImportOptions& options, std::uint64_t total)
        : options_(options)
        , start_(std::chrono::steady_clock::now())
        , last_(start_)
    {
        progress_.bytesTotal = total;
    }
    void update(std::uint64_t bytes, std::uint64_t records, bool finished)
    {
        if (!options_.progress)
            return;
        const auto now = std::chrono::steady_clock::now();
        if (!finished
            && std::chrono::duration<double>(now - last_).count()
                   < options_.progressIntervalSeconds)
            return;
        last_ = now;
        const double elapsed = std::chrono::duration<double>(now - start_).count();
        progress_.bytesRead = bytes;
        progress_.records = records;
        progress_.finished = finished;
        progress_.recordsPerSecond = elapsed > 0 ? static_cast<double>(records) / elapsed : 0.0;
        progress_.etaSeconds =
            finished ? 0.0
            : bytes > 0 && elapsed > 0
                ? static_cast<double>(progress_.bytesTotal - std::min(bytes, progress_.bytesTotal))
                      / (static_cast<double>(bytes) / elapsed)
                : -1.0;
        options_.progress(progress_);
    }

private:
    const ImportOptions& options_;
    ImportProgress progress_;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_;
};

}  // namespace

// Over 100 lines: the import's stages (sources, tokenizing, shards, manifest) share one
// temporary folder, renamed into place only at the end, so a failure leaves nothing.
Result<ImportResult> importDataset(const ImportOptions& options, Tokenizer& tokenizer,
                                   const crypto::Kek& kek)
{
    SEALTRAIN_TRY(checkOptions(options));
    auto sources = listSources(options);
    if (!sources)
        return sources.error();
    std::uint64_t totalBytes = 0;
    for (const SourceFile& source : *sources)
        totalBytes += source.size;

    const auto suffix = toHex(crypto::randomBytes(8));
    FolderCleanup temporary(options.outputRoot / (".import-" + suffix));
    std::error_code ec;
    if (!std::filesystem::create_directory(temporary.path(), ec))
        return Error(ErrorCode::Io, "Cannot create a folder in '" + options.outputRoot.string()
                                        + "'; check its permissions and free space.");

    const TokenizerInfo& tokenizerInfo = tokenizer.info();
    const std::uint32_t tokenBytes = tokenizerInfo.vocabSize <= 65536 ? 2 : 4;
    ShardStream train(Split::Train, temporary.path(), kek, tokenBytes, options.tokensPerShard);
    ShardStream validation(Split::Validation, temporary.path(), kek, tokenBytes,
                           options.tokensPerShard);

    ImportResult result;
    ImportReport& report = result.report;
    report.piiRedacted = options.redactPii;
    Manifest& manifest = result.manifest;
    SeenRecords seen;
    ProgressMeter meter(options, totalBytes);
    std::vector<std::uint32_t> tokens;
    std::uint64_t bytesBefore = 0;

    const auto handleIssue = [&](Issue issue) -> Result<void> {
        if (options.policy == InvalidRecordPolicy::Reject) {
            return Error(ErrorCode::InvalidArgument,
                         "The import stopped at " + issue.where.file + ":"
                             + std::to_string(issue.where.line) + " (" + issueKindName(issue.kind)
                             + ": " + issue.detail
                             + "); fix the source or import with the skip policy.");
        }
        ++report.skipped;
        report.addIssue(std::move(issue));
        return success();
    };

    for (const SourceFile& file : *sources) {
        auto opened = RecordSource::open(file.path, file.displayName, options.format, options.field,
                                         options.maxRecordBytes);
        if (!opened) {
            SEALTRAIN_TRY(handleIssue(
                {IssueKind::Unreadable, {file.displayName, 0}, "the file can not be opened"}));
            continue;
        }
        RecordSource& source = **opened;
        Record record;
        for (;;) {
            auto more = source.next(record);
            if (!more) {
                SEALTRAIN_TRY(handleIssue({IssueKind::Unreadable,
                                           {file.displayName, record.line},
                                           "a read failed part-way"}));
                break;
            }
            if (!*more)
                break;
            ++report.recordsRead;
            meter.update(bytesBefore + source.bytesRead(), report.recordsRead, false);
            if (record.issue) {
                SEALTRAIN_TRY(handleIssue(std::move(*record.issue)));
                continue;
            }
            if (const std::size_t bad = internal::firstInvalidUtf8(record.text);
                bad != record.text.size()) {
                const std::uint64_t line =
                    record.line + (record.spansLines ? newlinesBefore(record.text, bad) : 0);
                SEALTRAIN_TRY(handleIssue({IssueKind::InvalidUtf8,
                                           {file.displayName, line},
                                           "the record is not valid UTF-8"}));
                continue;
            }
            if (record.text.find_first_not_of(" \t\r\n") == std::string::npos) {
                SEALTRAIN_TRY(handleIssue(
                    {IssueKind::Empty, {file.displayName, record.line}, "the record is empty"}));
                continue;
            }
            const crypto::Sha256Digest digest = crypto::sha256(asBytes(record.text));
            if (!seen.insert(digest)) {
                ++report.duplicates;
                continue;
            }
            const auto matches = findPii(record.text);
            for (const PiiMatch& match : matches) {
                const std::uint64_t line =
                    record.line
                    + (record.spansLines ? newlinesBefore(record.text, match.offset) : 0);
                report.addPii(match.kind, {file.displayName, line});
            }
            if (options.redactPii && !matches.empty())
                record.text = redactPii(record.text, matches);

            tokens.clear();
            tokenizer.encode(record.text, tokens);
            if (tokenizerInfo.endOfText)
                tokens.push_back(*tokenizerInfo.endOfText);
            // The split rule: the first 8 bytes of the record's SHA-256, big-endian, modulo
            // 10000, below the validation share.
            std::uint64_t prefix = 0;
            for (std::size_t i = 0; i < 8; ++i)
                prefix = (prefix << 8U) | digest[i];
            ShardStream& stream =
                prefix % 10000 < options.validationBasisPoints ? validation : train;
            SEALTRAIN_TRY(stream.write(tokens));
            stream.countRecord();
            ++report.recordsKept;
        }
        auto hashed = source.finish();
        if (!hashed)
            return hashed.error().withContext("Cannot import '" + file.displayName + "'");
        bytesBefore += hashed->second;
        ++report.filesRead;
        manifest.sources.push_back({file.displayName, toHex(hashed->first), hashed->second});
    }
    report.bytesRead = bytesBefore;
    if (report.recordsKept == 0)
        return Error(ErrorCode::InvalidArgument,
                     "No usable record was found in the inputs; check the format and field "
                     "options against the files.");
    SEALTRAIN_TRY(train.finish());
    SEALTRAIN_TRY(validation.finish());

    manifest.name = options.name;
    manifest.classification = options.classification;
    manifest.creator = options.creator;
    manifest.createdAt = options.createdAt;
    manifest.parent = options.parent;
    manifest.inputFormat = inputFormatName(options.format);
    if (options.format == InputFormat::Jsonl || options.format == InputFormat::Csv)
        manifest.inputField = options.field;
    manifest.tokenizer = tokenizerInfo;
    manifest.tokenBytes = tokenBytes;
    manifest.tokensPerShard = options.tokensPerShard;
    manifest.validationBasisPoints = options.validationBasisPoints;
    manifest.piiRedacted = options.redactPii;
    manifest.train = train.entry();
    manifest.validation = validation.entry();
    manifest.counts = {{"records_read", report.recordsRead},
                       {"records_kept", report.recordsKept},
                       {"duplicates", report.duplicates},
                       {"skipped", report.skipped}};
    for (const PiiKind kind : kAllPiiKinds)
        manifest.counts[std::string("pii_") + piiKindName(kind)] =
            report.piiCounts[static_cast<std::size_t>(kind)];

    const std::string canonical = manifest.canonicalJson();
    result.datasetId = manifest.id();
    SEALTRAIN_TRY(writeFileAtomically(temporary.path() / kManifestFileName, asBytes(canonical),
                                      AtomicFileSink::Overwrite::Refuse));
    SEALTRAIN_TRY(syncFolder(temporary.path()));
    result.folder = options.outputRoot / result.datasetId.substr(7);
    std::filesystem::rename(temporary.path(), result.folder, ec);
    if (ec)
        return Error(ErrorCode::Io, "Cannot move the finished dataset into '"
                                        + result.folder.string() + "'; check the output folder.");
    temporary.keep();
    SEALTRAIN_TRY(syncFolder(options.outputRoot));
    meter.update(report.bytesRead, report.recordsRead, true);
    log::info("dataset", "Imported a dataset.",
              {{"dataset", result.datasetId},
               {"records", report.recordsKept},
               {"duplicates", report.duplicates},
               {"skipped", report.skipped},
               {"pii_matches", report.piiTotal()},
               {"train_records", manifest.train.records},
               {"validation_records", manifest.validation.records}});
    return result;
}

}  // namespace sealtrain::dataset
