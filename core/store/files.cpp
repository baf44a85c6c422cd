// The data directory's small files (files.h).
#include "files.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/random.h"
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

Result<std::filesystem::path> makeTemporarySibling(const std::filesystem::path& target,
                                                   std::string_view purpose)
{
    const auto parent = target.parent_path();
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec)
        return Error(ErrorCode::Io, fmt::format("Cannot create the folder '{}' ({}); check its "
                                                "permissions.",
                                                parent.string(), ec.message()));
    const auto temporary = parent
                           / fmt::format(".{}.{}-{}", target.filename().string(), purpose,
                                         toHex(crypto::randomBytes(6)));
    if (!std::filesystem::create_directory(temporary, ec) || ec)
        return Error(ErrorCode::Io, fmt::format("Cannot create a folder in '{}' ({}); check its "
                                                "permissions.",
                                                parent.string(), ec.message()));
    std::filesystem::permissions(temporary, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace, ec);
    return temporary;
}

Result<crypto::Keyring> unlockKeyringFile(const std::filesystem::path& keyringFile,
                                          const KeyringUnlock& unlock)
{
    if (unlock.masterKeyFile) {
        auto master = crypto::readKekFile(*unlock.masterKeyFile);
        if (!master)
            return master.error();
        return crypto::Keyring::unlockWithMasterKey(keyringFile, *master);
    }
    if (!unlock.passphrase)
        return Error(ErrorCode::InvalidArgument,
                     "Give a passphrase or a master key file to unlock the keyring.");
    auto passphrase = unlock.passphrase();
    if (!passphrase)
        return passphrase.error();
    return crypto::Keyring::unlockWithPassphrase(keyringFile, *passphrase);
}

}  // namespace sealtrain::core::internal
