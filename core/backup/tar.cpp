// The backup's tar archives through libarchive (backup/tar.h).
#include "backup/tar.h"

#include <archive.h>
#include <archive_entry.h>

#include <fmt/format.h>

#include <array>
#include <ctime>
#include <utility>
#include <vector>

namespace sealtrain::core::internal {
namespace {

constexpr std::size_t kPiece = std::size_t{1} << 16U;
constexpr std::size_t kMaxNameBytes = 255;
constexpr int kMaxDepth = 4;

Error damaged(const std::string& what)
{
    return Error(ErrorCode::Integrity,
                 fmt::format("The backup archive is damaged or is not one ({}); use an intact "
                             "copy of it.",
                             what));
}

std::string lastError(archive* handle)
{
    const char* message = archive_error_string(handle);
    return asClause(message != nullptr ? message : "unknown error");
}

}  // namespace

bool isSafeMemberName(std::string_view name)
{
    if (name.empty() || name.size() > kMaxNameBytes || name.front() == '/' || name.back() == '/')
        return false;
    int depth = 0;
    std::size_t start = 0;
    while (start <= name.size()) {
        const auto end = std::min(name.find('/', start), name.size());
        const auto part = name.substr(start, end - start);
        if (part.empty() || part == "." || part == ".." || ++depth > kMaxDepth)
            return false;
        for (const char c : part)
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\')
                return false;
        start = end + 1;
    }
    return true;
}

// --- TarWriter ---------------------------------------------------------------------------------

struct TarWriter::State {
    ByteSink* sink = nullptr;
    archive* handle = nullptr;
    std::optional<Error> sinkError;
    std::int64_t now = std::time(nullptr);

    ~State()
    {
        if (handle != nullptr)
            archive_write_free(handle);
    }

    static la_ssize_t write(archive* /*handle*/, void* context, const void* bytes, std::size_t size)
    {
        auto* state = static_cast<State*>(context);
        auto written = state->sink->write({static_cast<const std::uint8_t*>(bytes), size});
        if (!written) {
            state->sinkError = written.error();
            return -1;
        }
        return static_cast<la_ssize_t>(size);
    }

    [[nodiscard]] Error failure(const char* what) const
    {
        if (sinkError)
            return *sinkError;
        return Error(ErrorCode::Io, fmt::format("Cannot write the archive ({}: {}); check the "
                                                "free space.",
                                                what, lastError(handle)));
    }

    [[nodiscard]] Result<void> header(const std::string& name, std::uint64_t size) const
    {
        if (!isSafeMemberName(name))
            return Error(
                ErrorCode::InvalidArgument,
                fmt::format("'{}' can not be a member of a backup archive; rename it.", name));
        archive_entry* entry = archive_entry_new();
        archive_entry_set_pathname(entry, name.c_str());
        archive_entry_set_size(entry, static_cast<la_int64_t>(size));
        archive_entry_set_filetype(entry, AE_IFREG);
        archive_entry_set_perm(entry, 0600);
        archive_entry_set_mtime(entry, now, 0);
        const int rc = archive_write_header(handle, entry);
        archive_entry_free(entry);
        if (rc != ARCHIVE_OK)
            return failure("a member's header");
        return success();
    }

    [[nodiscard]] Result<void> data(std::span<const std::uint8_t> bytes) const
    {
        if (bytes.empty())
            return success();
        if (archive_write_data(handle, bytes.data(), bytes.size())
            != static_cast<la_ssize_t>(bytes.size()))
            return failure("a member's bytes");
        return success();
    }
};

TarWriter::TarWriter(std::unique_ptr<State> state)
    : state_(std::move(state))
{
}
TarWriter::TarWriter(TarWriter&&) noexcept = default;
TarWriter& TarWriter::operator=(TarWriter&&) noexcept = default;
TarWriter::~TarWriter() = default;

Result<TarWriter> TarWriter::create(ByteSink& sink, Format format)
{
    auto state = std::make_unique<State>();
    state->sink = &sink;
    state->handle = archive_write_new();
    if (state->handle == nullptr)
        return Error(ErrorCode::Internal,
                     "The libarchive library could not start an archive; check the "
                     "libarchive library.");
    const int formatted = format == Format::Gnu
                              ? archive_write_set_format_gnutar(state->handle)
                              : archive_write_set_format_pax_restricted(state->handle);
    if (formatted != ARCHIVE_OK
        || archive_write_set_bytes_in_last_block(state->handle, 1) != ARCHIVE_OK
        || archive_write_open(state->handle, state.get(), nullptr, &State::write, nullptr)
               != ARCHIVE_OK)
        return state->failure("its start");
    return TarWriter(std::move(state));
}

Result<void> TarWriter::addBytes(const std::string& name, std::span<const std::uint8_t> bytes)
{
    SEALTRAIN_TRY(state_->header(name, bytes.size()));
    return state_->data(bytes);
}

Result<crypto::Sha256Digest> TarWriter::addFile(const std::string& name,
                                                const std::filesystem::path& file)
{
    auto source = FileSource::open(file);
    if (!source)
        return source.error();
    SEALTRAIN_TRY(state_->header(name, (*source)->size()));
    crypto::Sha256 hash;
    std::vector<std::uint8_t> piece(kPiece);
    for (std::uint64_t at = 0; at < (*source)->size();) {
        const auto n =
            static_cast<std::size_t>(std::min<std::uint64_t>(piece.size(), (*source)->size() - at));
        const std::span<std::uint8_t> view(piece.data(), n);
        SEALTRAIN_TRY((*source)->readAt(at, view));
        hash.update(view);
        SEALTRAIN_TRY(state_->data(view));
        at += n;
    }
    return hash.finish();
}

Result<void> TarWriter::finish()
{
    if (archive_write_close(state_->handle) != ARCHIVE_OK)
        return state_->failure("its end");
    return success();
}

// --- TarReader ---------------------------------------------------------------------------------

struct TarReader::State {
    archive* handle = nullptr;
    bool inMember = false;

    ~State()
    {
        if (handle != nullptr)
            archive_read_free(handle);
    }
};

TarReader::TarReader(std::unique_ptr<State> state)
    : state_(std::move(state))
{
}
TarReader::TarReader(TarReader&&) noexcept = default;
TarReader& TarReader::operator=(TarReader&&) noexcept = default;
TarReader::~TarReader() = default;

Result<TarReader> TarReader::open(const std::filesystem::path& file)
{
    auto state = std::make_unique<State>();
    state->handle = archive_read_new();
    if (state->handle == nullptr)
        return Error(ErrorCode::Internal,
                     "The libarchive library could not start reading; check the "
                     "libarchive library.");
    archive_read_support_format_tar(state->handle);
    if (archive_read_open_filename(state->handle, file.c_str(), kPiece) != ARCHIVE_OK)
        return Error(ErrorCode::NotFound,
                     fmt::format("Cannot read the archive '{}' ({}); check the path.",
                                 file.string(), lastError(state->handle)));
    return TarReader(std::move(state));
}

Result<std::optional<TarMember>> TarReader::next()
{
    archive_entry* entry = nullptr;
    const int rc = archive_read_next_header(state_->handle, &entry);
    if (rc == ARCHIVE_EOF)
        return std::optional<TarMember>();
    if (rc != ARCHIVE_OK)
        return damaged(lastError(state_->handle));
    const char* name = archive_entry_pathname(entry);
    const std::string member = name != nullptr ? name : "";
    if (archive_entry_filetype(entry) != AE_IFREG || !isSafeMemberName(member))
        return damaged(
            fmt::format("the member '{}' is not a plain file with a relative name", member));
    if (!archive_entry_size_is_set(entry) || archive_entry_size(entry) < 0)
        return damaged(fmt::format("the member '{}' has no size", member));
    state_->inMember = true;
    return std::optional<TarMember>(
        TarMember{member, static_cast<std::uint64_t>(archive_entry_size(entry))});
}

Result<crypto::Sha256Digest> TarReader::read(ByteSink& sink, std::uint64_t limit)
{
    if (!state_->inMember)
        return Error(ErrorCode::Internal, "No archive member to read.");
    state_->inMember = false;
    crypto::Sha256 hash;
    std::vector<std::uint8_t> piece(kPiece);
    std::uint64_t total = 0;
    for (;;) {
        const la_ssize_t n = archive_read_data(state_->handle, piece.data(), piece.size());
        if (n < 0)
            return damaged(lastError(state_->handle));
        if (n == 0)
            break;
        total += static_cast<std::uint64_t>(n);
        if (total > limit)
            return damaged(fmt::format("a member is bigger than the {} bytes it may have", limit));
        const std::span<const std::uint8_t> view(piece.data(), static_cast<std::size_t>(n));
        hash.update(view);
        SEALTRAIN_TRY(sink.write(view));
    }
    return hash.finish();
}

Result<void> checkCanonicalTar(const std::filesystem::path& file,
                               const std::vector<std::uint64_t>& memberSizes)
{
    constexpr std::uint64_t kBlock = 512;
    auto source = FileSource::open(file);
    if (!source)
        return source.error();
    // The zero runs: each member's padding, then the two end blocks.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> zeros;
    std::uint64_t at = 0;
    for (const std::uint64_t size : memberSizes) {
        at += kBlock + size;
        const std::uint64_t padded = (size + kBlock - 1) / kBlock * kBlock;
        zeros.emplace_back(at, padded - size);
        at += padded - size;
    }
    zeros.emplace_back(at, 2 * kBlock);
    if ((*source)->size() != at + 2 * kBlock)
        return damaged(
            fmt::format("{} bytes where its members take {}", (*source)->size(), at + 2 * kBlock));
    std::array<std::uint8_t, 2 * kBlock> piece{};
    for (const auto& [offset, length] : zeros) {
        const std::span<std::uint8_t> view(piece.data(), static_cast<std::size_t>(length));
        SEALTRAIN_TRY((*source)->readAt(offset, view));
        for (const std::uint8_t byte : view)
            if (byte != 0)
                return damaged(fmt::format("a byte at {} that must be zero is not", offset));
    }
    return success();
}

}  // namespace sealtrain::core::internal
