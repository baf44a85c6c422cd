// Key files: "sealtrain-kek-v1 <id> <version> <base64 key>\n", mode 0600.
#include "sealtrain/crypto/key_file.h"

#include "sealtrain/base/encoding.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <vector>

namespace sealtrain::crypto {
namespace {

constexpr std::string_view kMagic = "sealtrain-kek-v1";
constexpr std::size_t kKekSize = 32;
constexpr std::size_t kMaxFileSize = 512;

// A buffer that wipes itself: key files pass through it.
struct WipedBuffer {
    std::vector<std::uint8_t> bytes;
    WipedBuffer() = default;
    WipedBuffer(const WipedBuffer&) = delete;
    WipedBuffer& operator=(const WipedBuffer&) = delete;
    ~WipedBuffer() { wipeMemory(bytes); }
};

struct FileDescriptor {
    int fd = -1;
    explicit FileDescriptor(int value)
        : fd(value)
    {
    }
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    ~FileDescriptor()
    {
        if (fd >= 0)
            ::close(fd);
    }
};

Error malformed(const std::filesystem::path& path)
{
    return Error(
        ErrorCode::InvalidArgument,
        fmt::format("'{}' is not a Sealtrain key file (expected 'sealtrain-kek-v1 ID "
                    "VERSION BASE64KEY'); create one with 'sealtrainctl keyfile generate'.",
                    path.string()));
}

}  // namespace

bool isValidKekId(const std::string& id)
{
    return !id.empty() && id.size() <= 64 && std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    });
}

Result<Kek> generateKek(const std::string& id, std::uint32_t version)
{
    if (!isValidKekId(id)) {
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("'{}' is not a valid key id; use 1 to 64 characters of a-z, 0-9, "
                                 "'.', '_' and '-'.",
                                 id));
    }
    if (version == 0)
        return Error(ErrorCode::InvalidArgument, "Key versions start at 1; pass 1 or more.");
    auto key = SecretBytes::random(kKekSize);
    if (!key)
        return key.error();
    return Kek{id, version, std::move(key).value()};
}

Result<Kek> readKekFile(const std::filesystem::path& path)
{
    FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (file.fd < 0) {
        return Error(errno == ENOENT ? ErrorCode::NotFound : ErrorCode::Io,
                     fmt::format("Cannot open the key file '{}': {}; check the path and its "
                                 "permissions.",
                                 path.string(), std::strerror(errno)));
    }
    struct stat info {};
    if (::fstat(file.fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The key file '{}' is not a regular file; pass the file itself.",
                                 path.string()));
    }
    if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
        return Error(ErrorCode::PermissionDenied,
                     fmt::format("The key file '{}' is accessible to other users; run 'chmod 600 "
                                 "{}' and rotate the key if others may have read it.",
                                 path.string(), path.string()));
    }
    if (info.st_size <= 0 || static_cast<std::size_t>(info.st_size) > kMaxFileSize)
        return malformed(path);

    WipedBuffer content;
    content.bytes.resize(static_cast<std::size_t>(info.st_size));
    std::size_t done = 0;
    while (done < content.bytes.size()) {
        const ssize_t got =
            ::read(file.fd, content.bytes.data() + done, content.bytes.size() - done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            return Error(
                ErrorCode::Io,
                fmt::format("Cannot read the key file '{}'; check the disk.", path.string()));
        }
        done += static_cast<std::size_t>(got);
    }

    // Split "magic id version key" on single spaces, with one optional trailing newline.
    std::string_view text(reinterpret_cast<const char*>(content.bytes.data()),
                          content.bytes.size());
    if (text.ends_with('\n'))
        text.remove_suffix(1);
    std::array<std::string_view, 4> fields{};
    for (std::size_t i = 0; i < fields.size(); ++i) {
        const auto space = text.find(' ');
        const bool last = i + 1 == fields.size();
        if (last != (space == std::string_view::npos))
            return malformed(path);
        fields[i] = last ? text : text.substr(0, space);
        text.remove_prefix(last ? text.size() : space + 1);
    }
    if (fields[0] != kMagic || !isValidKekId(std::string(fields[1])))
        return malformed(path);
    std::uint32_t version = 0;
    for (char c : fields[2]) {
        if (c < '0' || c > '9' || version > 100'000'000)
            return malformed(path);
        version = version * 10 + static_cast<std::uint32_t>(c - '0');
    }
    if (fields[2].empty() || version == 0)
        return malformed(path);

    auto decoded = fromBase64(fields[3]);
    if (!decoded || decoded->size() != kKekSize) {
        if (decoded)
            wipeMemory(*decoded);
        return malformed(path);
    }
    auto key = SecretBytes::fromBytes(*decoded);
    wipeMemory(*decoded);
    if (!key)
        return key.error();
    return Kek{std::string(fields[1]), version, std::move(key).value()};
}

Result<void> writeKekFile(const std::filesystem::path& path, const Kek& kek)
{
    if (!isValidKekId(kek.id) || kek.version == 0 || kek.key.size() != kKekSize)
        return Error(ErrorCode::InvalidArgument,
                     "Cannot write an incomplete key; generate it first.");
    FileDescriptor file(
        ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (file.fd < 0) {
        if (errno == EEXIST) {
            return Error(ErrorCode::AlreadyExists,
                         fmt::format("The key file '{}' already exists; choose another path (key "
                                     "files are never overwritten).",
                                     path.string()));
        }
        return Error(ErrorCode::Io, fmt::format("Cannot create the key file '{}': {}.",
                                                path.string(), std::strerror(errno)));
    }
    std::string encoded = toBase64(kek.key.bytes());
    WipedBuffer line;
    const std::string head = fmt::format("{} {} {} ", kMagic, kek.id, kek.version);
    line.bytes.assign(head.begin(), head.end());
    line.bytes.insert(line.bytes.end(), encoded.begin(), encoded.end());
    line.bytes.push_back('\n');
    // The base64 text was a std::string; wipe it before it is freed.
    wipeMemory({reinterpret_cast<std::uint8_t*>(encoded.data()), encoded.size()});

    std::size_t done = 0;
    while (done < line.bytes.size()) {
        const ssize_t wrote = ::write(file.fd, line.bytes.data() + done, line.bytes.size() - done);
        if (wrote < 0 && errno == EINTR)
            continue;
        if (wrote <= 0) {
            ::unlink(path.c_str());
            return Error(ErrorCode::Io, fmt::format("Cannot write the key file '{}'; check free "
                                                    "disk space.",
                                                    path.string()));
        }
        done += static_cast<std::size_t>(wrote);
    }
    if (::fsync(file.fd) != 0) {
        ::unlink(path.c_str());
        return Error(ErrorCode::Io,
                     fmt::format("Cannot flush the key file '{}' to disk.", path.string()));
    }
    return success();
}

KekResolver keyFileResolver(const Kek& kek)
{
    return [&kek](const std::string& id, std::uint32_t version) -> Result<const Kek*> {
        if (id != kek.id || version != kek.version) {
            return Error(ErrorCode::NotFound,
                         fmt::format("The object is sealed under KEK '{}' version {} but the key "
                                     "file holds '{}' version {}; pass the matching key file.",
                                     id, version, kek.id, kek.version));
        }
        return &kek;
    };
}

}  // namespace sealtrain::crypto
