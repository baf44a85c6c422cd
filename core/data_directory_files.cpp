// The data directory's small files (data_directory_files.h).
#include "data_directory_files.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/sealed.h"

#include <fmt/format.h>

namespace sealtrain::core::internal {

Result<void> sealSecret(const std::filesystem::path& path, const crypto::Kek& kek,
                        std::string_view contentType, std::span<const std::uint8_t> secret,
                        AtomicFileSink::Overwrite overwrite)
{
    auto writer =
        crypto::SealedWriter::create(path, kek, {std::string(contentType), "{}"}, overwrite);
    if (!writer)
        return writer.error();
    SEALTRAIN_TRY(writer->write(secret));
    return writer->finish();
}

Result<crypto::SecretBytes> unsealSecret(const std::filesystem::path& path,
                                         const crypto::KekResolver& resolver, const char* what)
{
    auto reader = crypto::SealedReader::open(path, resolver);
    if (!reader)
        return reader.error().withContext(fmt::format("Cannot open the {}", what));
    if (reader->chunkCount() != 1)
        return Error(ErrorCode::Integrity,
                     fmt::format("The {} file '{}' is not a single-chunk sealed secret; restore "
                                 "the data directory from a backup.",
                                 what, path.string()));
    auto secret = crypto::SecretBytes::allocate(reader->chunkPlaintextSize(0));
    if (!secret)
        return secret.error();
    auto read = reader->readChunk(0, secret->mutableBytes());
    if (!read)
        return read.error();
    return secret;
}

Result<void> writePublicFile(const std::filesystem::path& path, const std::string& text)
{
    constexpr unsigned kPublicMode = 0644;
    return writeFileAtomically(path, asBytes(text), AtomicFileSink::Overwrite::Allow, kPublicMode);
}

Result<std::string> readPublicFile(const std::filesystem::path& path)
{
    auto text = readWholeFile(path);
    if (!text)
        return Error(ErrorCode::NotFound,
                     fmt::format("Cannot read '{}'; restore the data directory from a backup.",
                                 path.string()));
    return text;
}

}  // namespace sealtrain::core::internal
