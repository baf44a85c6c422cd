// Staged exports (registry/exports/staging.h): one folder per download under downloads/, each file
// sealed with C2SP chunked encryption under a random key held in memory only.
#include "sealtrain/core/registry/exports/staging.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/chunked.h"
#include "sealtrain/crypto/random.h"

#include <fmt/format.h>

#include <system_error>
#include <utility>

namespace sealtrain::core {
namespace {

constexpr std::size_t kKeySize = 32;

// Binds each sealed file to its name: one staged file cannot be served as another.
std::vector<std::uint8_t> contextFor(const std::string& name)
{
    const std::string context = "sealtrain staged export v1: " + name;
    return {context.begin(), context.end()};
}

std::filesystem::path stagedFile(const std::filesystem::path& folder, std::size_t index)
{
    return folder / fmt::format("{}.sealed", index);
}

Result<void> sealFile(const crypto::SecretBytes& key, const ExportFile& file,
                      const std::filesystem::path& path)
{
    auto sink = AtomicFileSink::create(path);
    if (!sink)
        return sink.error();
    const auto context = contextFor(file.name);
    auto writer = crypto::ChunkedWriter::create(key, context, **sink);
    if (!writer)
        return writer.error();
    SEALTRAIN_TRY(writer->write(file.bytes));
    SEALTRAIN_TRY(writer->finish());
    return (*sink)->commit();
}

}  // namespace

Result<StagedExport> StagedExport::stage(ExportFolder folder, const std::filesystem::path& root)
{
    std::error_code ec;
    std::filesystem::create_directories(root, ec);
    if (!ec)
        std::filesystem::permissions(root, std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::replace, ec);
    if (ec)
        return Error(ErrorCode::Io, fmt::format("Cannot make the download folder {}: {}.",
                                                root.string(), ec.message()));
    StagedExport staged;
    auto key = crypto::SecretBytes::random(kKeySize);
    if (!key)
        return key.error();
    staged.key_ = std::move(key).value();
    staged.digest_ = std::move(folder.digest);
    const std::filesystem::path folderPath = root / toHex(crypto::randomBytes(8));
    if (!std::filesystem::create_directory(folderPath, ec) || ec)
        return Error(ErrorCode::Io, fmt::format("Cannot make the download folder {}: {}.",
                                                folderPath.string(), ec.message()));
    staged.folder_ = folderPath;  // from here on, a failure removes it
    for (std::size_t i = 0; i < folder.files.size(); ++i) {
        ExportFile& file = folder.files[i];
        SEALTRAIN_TRY(sealFile(staged.key_, file, stagedFile(folderPath, i)));
        staged.files_.push_back({file.name, file.bytes.size()});
        std::vector<std::uint8_t>().swap(file.bytes);  // one file's bytes at a time in memory
    }
    return staged;
}

StagedExport::StagedExport(StagedExport&& other) noexcept
    : folder_(std::exchange(other.folder_, {}))
    , key_(std::move(other.key_))
    , digest_(std::move(other.digest_))
    , files_(std::move(other.files_))
{
}

StagedExport& StagedExport::operator=(StagedExport&& other) noexcept
{
    if (this != &other) {
        remove();
        folder_ = std::exchange(other.folder_, {});
        key_ = std::move(other.key_);
        digest_ = std::move(other.digest_);
        files_ = std::move(other.files_);
    }
    return *this;
}

StagedExport::~StagedExport()
{
    remove();
}

void StagedExport::remove() noexcept
{
    if (folder_.empty())
        return;
    std::error_code ec;
    std::filesystem::remove_all(folder_, ec);
    folder_.clear();
}

Result<void>
StagedExport::read(std::size_t index, std::size_t piece,
                   const std::function<bool(std::span<const std::uint8_t>)>& consume) const
{
    if (index >= files_.size() || piece == 0)
        return Error(ErrorCode::Internal, "A staged export was read out of its bounds.");
    auto source = FileSource::open(stagedFile(folder_, index));
    if (!source)
        return source.error();
    const auto context = contextFor(files_[index].name);
    auto reader = crypto::ChunkedReader::open(key_, context, **source);
    if (!reader)
        return Error(ErrorCode::Integrity,
                     fmt::format("The staged copy of {} was changed on disk; ask for the "
                                 "download again.",
                                 files_[index].name));
    if (reader->plaintextSize() != files_[index].size)
        return Error(ErrorCode::Integrity,
                     fmt::format("The staged copy of {} has another length than was written; ask "
                                 "for the download again.",
                                 files_[index].name));
    crypto::ChunkedStream stream(*reader);
    std::vector<std::uint8_t> buffer(piece);
    std::uint64_t passed = 0;
    for (;;) {
        std::size_t filled = 0;
        while (filled < buffer.size()) {
            auto got = stream.read(std::span(buffer).subspan(filled));
            if (!got)
                return Error(ErrorCode::Integrity,
                             fmt::format("The staged copy of {} was changed on disk; ask for the "
                                         "download again.",
                                         files_[index].name));
            if (*got == 0)
                break;
            filled += *got;
        }
        if (filled == 0 && passed > 0)
            return success();
        if (!consume(std::span<const std::uint8_t>(buffer.data(), filled)))
            return Error(ErrorCode::Io, "The download's receiver went away.");
        passed += filled;
        if (filled < buffer.size())
            return success();
    }
}

}  // namespace sealtrain::core
