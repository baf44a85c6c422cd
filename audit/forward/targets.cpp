// The file and journal targets of audit forwarding, and the parsing of a target's name
// (docs/formats/audit-forward.md, "Targets"). The syslog receiver is syslog_tls.cpp's.
#include "forward_targets.h"

#include "sealtrain/audit/forward_spool.h"
#include "sealtrain/base/encoding.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace sealtrain::audit {
namespace {

// Appends whole lines to one file and fsyncs them; a write that fails part-way is cut back off.
class FileTarget final : public ForwardTarget {
public:
    FileTarget(int fd, std::string name)
        : fd_(fd)
        , name_(std::move(name))
    {
    }
    FileTarget(const FileTarget&) = delete;
    FileTarget& operator=(const FileTarget&) = delete;
    ~FileTarget() override { ::close(fd_); }

    [[nodiscard]] std::string describe() const override { return "file:" + name_; }

    Result<void> deliver(std::span<const ForwardLine> lines) override
    {
        struct stat before {};
        if (::fstat(fd_, &before) != 0)
            return failed("read its size");
        std::string text;
        for (const auto& line : lines) {
            text += line.text;
            text += '\n';
        }
        std::size_t done = 0;
        while (done < text.size()) {
            const auto wrote = ::write(fd_, text.data() + done, text.size() - done);
            if (wrote < 0 && errno == EINTR)
                continue;
            if (wrote <= 0) {
                const int why = errno;
                // Best effort: should the cut fail too, the checker names the partial line.
                [[maybe_unused]] const int cut = ::ftruncate(fd_, before.st_size);
                errno = why;
                return failed("append to it");
            }
            done += static_cast<std::size_t>(wrote);
        }
        if (::fdatasync(fd_) != 0)
            return failed("flush it to disk");
        return success();
    }

private:
    Error failed(const char* what) const
    {
        return Error(ErrorCode::Io,
                     fmt::format("Cannot {} the audit forward file '{}' ({}); free space there or "
                                 "check its permissions, and the lines follow.",
                                 what, name_, std::strerror(errno)));
    }

    int fd_;
    std::string name_;
};

// The journal's native protocol (systemd.journal-fields(7), "native protocol"): one datagram of
// FIELD=value lines; a message too large for a datagram goes in a sealed memfd passed instead.
class JournalTarget final : public ForwardTarget {
public:
    JournalTarget(int fd, sockaddr_un address)
        : fd_(fd)
        , address_(address)
    {
    }
    JournalTarget(const JournalTarget&) = delete;
    JournalTarget& operator=(const JournalTarget&) = delete;
    ~JournalTarget() override { ::close(fd_); }

    [[nodiscard]] std::string describe() const override { return "journal"; }

    Result<void> deliver(std::span<const ForwardLine> lines) override
    {
        for (const auto& line : lines)
            if (!write(line))
                return Error(ErrorCode::Io,
                             fmt::format("The systemd journal refused an audit line ({}); the "
                                         "lines follow when it takes them again.",
                                         std::strerror(errno)));
        return success();
    }

private:
    bool write(const ForwardLine& line)
    {
        std::string datagram = "SYSLOG_IDENTIFIER=sealtrain-control\nPRIORITY=6\n";
        datagram += "SEALTRAIN_AUDIT_FORMAT=" + std::string(kForwardFormat) + "\n";
        if (line.kind == "entry") {
            datagram += fmt::format("SEALTRAIN_AUDIT_SEQUENCE={}\n", line.sequence);
            datagram += "SEALTRAIN_AUDIT_LEAF_HASH=" + line.leafHashHex + "\n";
        } else {
            datagram += fmt::format("SEALTRAIN_AUDIT_TREE_SIZE={}\n", line.sequence);
        }
        datagram += "MESSAGE=";
        datagram += line.text;
        datagram += '\n';
        const auto sent = ::sendto(fd_, datagram.data(), datagram.size(), MSG_NOSIGNAL,
                                   reinterpret_cast<const sockaddr*>(&address_), sizeof address_);
        if (sent == static_cast<ssize_t>(datagram.size()))
            return true;
        if (sent < 0 && (errno == EMSGSIZE || errno == ENOBUFS))
            return sendInMemfd(datagram);
        return false;
    }

    bool sendInMemfd(const std::string& datagram)
    {
        const int memfd = ::memfd_create("sealtrain-audit", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (memfd < 0)
            return false;
        bool ok =
            ::write(memfd, datagram.data(), datagram.size())
                == static_cast<ssize_t>(datagram.size())
            && ::fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)
                   == 0;
        if (ok) {
            msghdr message{};
            message.msg_name = &address_;
            message.msg_namelen = sizeof address_;
            alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
            message.msg_control = control;
            message.msg_controllen = sizeof control;
            cmsghdr* header = CMSG_FIRSTHDR(&message);
            header->cmsg_level = SOL_SOCKET;
            header->cmsg_type = SCM_RIGHTS;
            header->cmsg_len = CMSG_LEN(sizeof(int));
            std::memcpy(CMSG_DATA(header), &memfd, sizeof(int));
            ok = ::sendmsg(fd_, &message, MSG_NOSIGNAL) >= 0;
        }
        ::close(memfd);
        return ok;
    }

    int fd_;
    sockaddr_un address_;
};

Result<std::unique_ptr<ForwardTarget>> fileTarget(const std::filesystem::path& path)
{
    if (!path.is_absolute())
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The audit forward file '{}' is not an absolute path; give one "
                                 "such as file:/var/log/sealtrain/audit.jsonl.",
                                 path.string()));
    const int fd =
        ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return Error(ErrorCode::Io,
                     fmt::format("Cannot open the audit forward file '{}' ({}); check that its "
                                 "folder exists and that this daemon's user may write there.",
                                 path.string(), std::strerror(errno)));
    return std::unique_ptr<ForwardTarget>(std::make_unique<FileTarget>(fd, path.string()));
}

Result<std::unique_ptr<ForwardTarget>> journalTarget(const std::filesystem::path& socketPath)
{
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::string path = socketPath.string();
    if (path.size() >= sizeof address.sun_path)
        return Error(ErrorCode::InvalidArgument,
                     "The journal's socket path is too long for a Unix socket.");
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    struct stat info {};
    if (::stat(socketPath.c_str(), &info) != 0 || !S_ISSOCK(info.st_mode))
        return Error(ErrorCode::NotFound,
                     fmt::format("The systemd journal's socket '{}' is not there; forward to a "
                                 "file instead (--audit-forward file:/PATH).",
                                 path));
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return Error(ErrorCode::Io, fmt::format("Cannot make a socket for the journal ({}).",
                                                std::strerror(errno)));
    return std::unique_ptr<ForwardTarget>(std::make_unique<JournalTarget>(fd, address));
}

}  // namespace

Result<std::unique_ptr<ForwardTarget>> openForwardTarget(std::string_view target,
                                                         const TargetOptions& options)
{
    if (target == "journal")
        return journalTarget(options.journalSocket);
    if (target.starts_with("file:"))
        return fileTarget(std::filesystem::path(target.substr(5)));
    if (target.starts_with(internal::kSyslogTlsScheme))
        return internal::syslogTlsTarget(target, options);
    return Error(ErrorCode::InvalidArgument,
                 fmt::format("'{}' is not an audit forward target; give journal, "
                             "file:/ABSOLUTE/PATH or syslog-tls://HOST:PORT.",
                             target));
}

}  // namespace sealtrain::audit
