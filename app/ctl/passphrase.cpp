// Passphrase input: a 0600 file, or /dev/tty with echo off.
#include "passphrase.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <vector>

namespace sealtrain::ctl {
namespace {

constexpr std::size_t kMaxPassphrase = 1024;

class Descriptor {
public:
    explicit Descriptor(int fd)
        : fd_(fd)
    {
    }
    Descriptor(const Descriptor&) = delete;
    Descriptor& operator=(const Descriptor&) = delete;
    ~Descriptor()
    {
        if (fd_ >= 0)
            ::close(fd_);
    }
    [[nodiscard]] int get() const { return fd_; }

private:
    int fd_;
};

// Reads bytes up to the first newline (or end of input) straight into protected memory.
Result<crypto::SecretBytes> readLine(int fd, const std::string& source)
{
    auto buffer = crypto::SecretBytes::allocate(kMaxPassphrase);
    if (!buffer)
        return buffer.error();
    auto bytes = buffer->mutableBytes();
    std::size_t length = 0;
    while (length < bytes.size()) {
        const ssize_t got = ::read(fd, bytes.data() + length, 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return Error(ErrorCode::Io, fmt::format("Cannot read the passphrase from {}.", source));
        if (got == 0 || bytes[length] == '\n')
            break;
        ++length;
    }
    if (length == bytes.size()) {
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The passphrase from {} is longer than {} bytes; use a shorter "
                                 "one.",
                                 source, kMaxPassphrase));
    }
    if (length > 0 && bytes[length - 1] == '\r')
        --length;
    if (length == 0)
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The passphrase from {} is empty; provide one.", source));
    return crypto::SecretBytes::fromBytes(bytes.first(length));
}

// "Password for bob" as it reads inside a sentence; an acronym ("TOTP code") stays as it is.
std::string lowercaseFirst(const std::string& prompt)
{
    std::string text = prompt;
    const bool acronym = text.size() > 1 && std::isupper(static_cast<unsigned char>(text[1])) != 0;
    if (!text.empty() && !acronym)
        text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
    return text;
}

}  // namespace

Result<crypto::SecretBytes> readPassphraseFile(const std::filesystem::path& path)
{
    Descriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (file.get() < 0) {
        return Error(errno == ENOENT ? ErrorCode::NotFound : ErrorCode::Io,
                     fmt::format("Cannot open the passphrase file '{}': {}.", path.string(),
                                 std::strerror(errno)));
    }
    struct stat info {};
    if (::fstat(file.get(), &info) == 0 && S_ISREG(info.st_mode)
        && (info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
        return Error(ErrorCode::PermissionDenied,
                     fmt::format("The passphrase file '{}' is readable by other users; run 'chmod "
                                 "600 {}' and change the passphrase if others may have read it.",
                                 path.string(), path.string()));
    }
    return readLine(file.get(), fmt::format("'{}'", path.string()));
}

Result<crypto::SecretBytes> promptPassphrase(const std::string& prompt, bool confirm,
                                             std::string_view answeredBy)
{
    Descriptor tty(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY));
    if (tty.get() < 0) {
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("There is no terminal to ask for the {}; pass {}.",
                                 lowercaseFirst(prompt), answeredBy));
    }
    termios saved{};
    if (::tcgetattr(tty.get(), &saved) != 0)
        return Error(ErrorCode::Io,
                     fmt::format("Cannot switch off echo on the terminal; pass {}.", answeredBy));
    termios quiet = saved;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    // The prompt is a courtesy: if the terminal does not take it, reading still works.
    const auto say = [&](std::string_view text) {
        if (::write(tty.get(), text.data(), text.size()) < 0)
            return;
    };
    const auto ask = [&](const std::string& text) -> Result<crypto::SecretBytes> {
        say(text);
        ::tcsetattr(tty.get(), TCSAFLUSH, &quiet);
        auto answer = readLine(tty.get(), "the terminal");
        ::tcsetattr(tty.get(), TCSAFLUSH, &saved);
        say("\n");
        return answer;
    };
    auto first = ask(prompt + ": ");
    if (!first || !confirm)
        return first;
    auto second = ask("Repeat it: ");
    if (!second)
        return second;
    if (!first->equals(*second))
        return Error(ErrorCode::InvalidArgument,
                     "The two passphrases differ; run the command again.");
    return first;
}

Result<crypto::SecretBytes> obtainPassphrase(const std::string& passphraseFile,
                                             const std::string& prompt, bool confirm,
                                             std::string_view answeredBy)
{
    if (!passphraseFile.empty())
        return readPassphraseFile(passphraseFile);
    return promptPassphrase(prompt, confirm, answeredBy);
}

}  // namespace sealtrain::ctl
