// Audit forwarding: entries as JSON lines, their targets (a file, the systemd journal) and the
// check of a forwarded copy against a bundle (docs/formats/audit-forward.md).
#include "sealtrain/audit/forward.h"

#include "sealtrain/audit/merkle_hash.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/base/logging.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

namespace sealtrain::audit {
namespace {

std::string dumpLine(const nlohmann::json& json)
{
    return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Appends whole lines to one file; a write that fails part-way is cut back off.
class FileTarget final {
public:
    explicit FileTarget(int fd)
        : fd_(fd)
    {
    }
    FileTarget(const FileTarget&) = delete;
    FileTarget& operator=(const FileTarget&) = delete;
    ~FileTarget() { ::close(fd_); }

    bool write(std::string_view line) const
    {
        struct stat before {};
        if (::fstat(fd_, &before) != 0)
            return false;
        std::string text(line);
        text += '\n';
        std::size_t done = 0;
        while (done < text.size()) {
            const auto wrote = ::write(fd_, text.data() + done, text.size() - done);
            if (wrote < 0 && errno == EINTR)
                continue;
            if (wrote <= 0) {
                // Best effort: should the cut fail too, the checker names the partial line.
                [[maybe_unused]] const int cut = ::ftruncate(fd_, before.st_size);
                return false;
            }
            done += static_cast<std::size_t>(wrote);
        }
        return true;
    }

private:
    int fd_;
};

// The journal's native protocol (systemd.journal-fields(7), "native protocol"): one datagram of
// FIELD=value lines; a message too large for a datagram goes in a sealed memfd passed instead.
class JournalTarget final {
public:
    JournalTarget(int fd, sockaddr_un address)
        : fd_(fd)
        , address_(address)
    {
    }
    JournalTarget(const JournalTarget&) = delete;
    JournalTarget& operator=(const JournalTarget&) = delete;
    ~JournalTarget() { ::close(fd_); }

    bool write(std::string_view line, const StoredEntry* entry)
    {
        std::string datagram = "SYSLOG_IDENTIFIER=sealtrain-control\nPRIORITY=6\n";
        datagram += "SEALTRAIN_AUDIT_FORMAT=" + std::string(kForwardFormat) + "\n";
        if (entry != nullptr) {
            datagram += fmt::format("SEALTRAIN_AUDIT_SEQUENCE={}\n", entry->sequence);
            datagram += "SEALTRAIN_AUDIT_LEAF_HASH=" + toHex(entry->leafHash) + "\n";
        }
        datagram += "MESSAGE=";
        datagram += line;
        datagram += '\n';
        const auto sent = ::sendto(fd_, datagram.data(), datagram.size(), MSG_NOSIGNAL,
                                   reinterpret_cast<const sockaddr*>(&address_), sizeof address_);
        if (sent == static_cast<ssize_t>(datagram.size()))
            return true;
        if (sent < 0 && (errno == EMSGSIZE || errno == ENOBUFS))
            return sendInMemfd(datagram);
        return false;
    }

private:
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

Result<std::unique_ptr<EntryForwarder>> fileForwarder(const std::filesystem::path& path,
                                                      std::string origin)
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
    auto target = std::make_shared<FileTarget>(fd);
    return std::unique_ptr<EntryForwarder>(std::make_unique<LineForwarder>(
        std::move(origin),
        [target](std::string_view line, const StoredEntry*) { return target->write(line); }));
}

Result<std::unique_ptr<EntryForwarder>> journalForwarder(const std::filesystem::path& socketPath,
                                                         std::string origin)
{
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::string path = socketPath.string();
    if (path.size() >= sizeof address.sun_path)
        return Error(ErrorCode::InvalidArgument,
                     "The journal's socket path is too long for a Unix socket.");
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return Error(ErrorCode::Io, fmt::format("Cannot make a socket for the journal ({}).",
                                                std::strerror(errno)));
    struct stat info {};
    if (::stat(socketPath.c_str(), &info) != 0 || !S_ISSOCK(info.st_mode)) {
        ::close(fd);
        return Error(ErrorCode::NotFound,
                     fmt::format("The systemd journal's socket '{}' is not there; forward to a "
                                 "file instead (--audit-forward file:/PATH).",
                                 path));
    }
    auto target = std::make_shared<JournalTarget>(fd, address);
    return std::unique_ptr<EntryForwarder>(std::make_unique<LineForwarder>(
        std::move(origin), [target](std::string_view line, const StoredEntry* entry) {
            return target->write(line, entry);
        }));
}

// One line's fields, read strictly: nullopt with `why` when a field is missing or mistyped.
struct ForwardedLine {
    std::string type;
    std::uint64_t sequence = 0;
    std::uint64_t first = 0;
    std::uint64_t last = 0;
    std::string leafHashHex;
    std::vector<std::uint8_t> bytes;
    nlohmann::json summary;
};

std::optional<ForwardedLine> readLine(std::string_view text, std::string& why)
{
    const auto json = nlohmann::json::parse(text, nullptr, false);
    if (json.is_discarded() || !json.is_object()) {
        why = "it is not a JSON object";
        return std::nullopt;
    }
    const auto text_of = [&](const char* name) -> std::optional<std::string> {
        if (!json.contains(name) || !json[name].is_string())
            return std::nullopt;
        return json[name].get<std::string>();
    };
    const auto number_of = [&](const char* name) -> std::optional<std::uint64_t> {
        if (!json.contains(name) || !json[name].is_number_unsigned())
            return std::nullopt;
        return json[name].get<std::uint64_t>();
    };
    if (text_of("format") != std::string(kForwardFormat)) {
        why = fmt::format("its format is not {}", kForwardFormat);
        return std::nullopt;
    }
    ForwardedLine line;
    line.type = text_of("type").value_or("");
    if (line.type == "gap") {
        auto first = number_of("first");
        auto last = number_of("last");
        if (!first || !last || *first > *last) {
            why = "its gap has no valid first and last sequence numbers";
            return std::nullopt;
        }
        line.first = *first;
        line.last = *last;
        line.summary = {{"origin", text_of("origin").value_or("")}};
        return line;
    }
    if (line.type != "entry") {
        why = "its type is neither entry nor gap";
        return std::nullopt;
    }
    auto sequence = number_of("sequence");
    auto leaf = text_of("leaf_hash");
    auto bytes = text_of("entry");
    if (!sequence || !leaf || !bytes) {
        why = "it lacks its sequence, leaf_hash or entry";
        return std::nullopt;
    }
    auto decoded = fromBase64(*bytes);
    if (!decoded) {
        why = "its entry is not base64";
        return std::nullopt;
    }
    line.sequence = *sequence;
    line.leafHashHex = *leaf;
    line.bytes = std::move(*decoded);
    line.summary = json;
    return line;
}

nlohmann::json summaryOf(const Entry& entry)
{
    return {{"time", toRfc3339(static_cast<std::int64_t>(entry.timeNs / 1000000000U))},
            {"time_ns", entry.timeNs},
            {"actor",
             {{"kind", actorKindName(entry.actor.kind)},
              {"id", entry.actor.id},
              {"session", entry.actor.session},
              {"auth", entry.actor.authMethod}}},
            {"action", entry.action},
            {"target", {{"kind", entry.target.kind}, {"id", entry.target.id}}},
            {"outcome", outcomeName(entry.outcome)},
            {"reason", entry.reason}};
}

}  // namespace

Result<std::string> forwardedEntryLine(std::string_view origin, const StoredEntry& entry)
{
    auto decoded = decodeEntry(entry.bytes);
    if (!decoded)
        return decoded.error();
    nlohmann::json json{{"format", kForwardFormat},
                        {"type", "entry"},
                        {"origin", origin},
                        {"sequence", entry.sequence},
                        {"leaf_hash", toHex(entry.leafHash)}};
    json.update(summaryOf(*decoded));
    json["entry"] = toBase64(entry.bytes);
    return dumpLine(json);
}

std::string forwardedGapLine(std::string_view origin, std::uint64_t first, std::uint64_t last)
{
    return dumpLine({{"format", kForwardFormat},
                     {"type", "gap"},
                     {"origin", origin},
                     {"first", first},
                     {"last", last},
                     {"reason", "the forward target refused writes for longer than the backlog "
                                "holds; these entries are in the signed log only"}});
}

LineForwarder::LineForwarder(std::string origin, LineWriter writer, ForwarderLimits limits)
    : origin_(std::move(origin))
    , writer_(std::move(writer))
    , limits_(limits)
{
}

void LineForwarder::forward(std::span<const StoredEntry> entries) noexcept
{
    try {
        for (const auto& entry : entries) {
            auto line = forwardedEntryLine(origin_, entry);
            if (!line) {  // the log wrote it, so it decodes; if not, the gap says so
                dropped_ = {dropped_ ? dropped_->first : entry.sequence, entry.sequence};
                continue;
            }
            backlogBytes_ += line->size();
            backlog_.push_back({entry, std::move(*line)});
        }
        flush();
        // Whatever the target still refuses is kept within the bound, the oldest dropped first.
        while (backlog_.size() > limits_.maxBacklogLines
               || backlogBytes_ > limits_.maxBacklogBytes) {
            const auto sequence = backlog_.front().entry.sequence;
            dropped_ = {dropped_ ? dropped_->first : sequence, sequence};
            backlogBytes_ -= backlog_.front().line.size();
            backlog_.pop_front();
        }
    } catch (const std::exception&) {
        // Out of memory while copying: the entries stay in the signed log; the next gap line
        // can not name them, so the copy's checker reports the missing sequences.
        backlog_.clear();
        backlogBytes_ = 0;
    }
}

void LineForwarder::flush() noexcept
{
    const auto refused = [this] {
        if (!warned_)
            log::warn("audit",
                      "the audit forward target refused a write; entries wait in "
                      "memory and are retried at the next commit",
                      {{"waiting", std::to_string(backlog_.size())}});
        warned_ = true;
    };
    if (dropped_) {
        if (!writer_(forwardedGapLine(origin_, dropped_->first, dropped_->second), nullptr))
            return refused();
        dropped_.reset();
    }
    while (!backlog_.empty()) {
        if (!writer_(backlog_.front().line, &backlog_.front().entry))
            return refused();
        backlogBytes_ -= backlog_.front().line.size();
        backlog_.pop_front();
    }
    if (warned_)
        log::info("audit", "the audit forward target takes writes again");
    warned_ = false;
}

Result<std::unique_ptr<EntryForwarder>> openForwarder(std::string_view target, std::string origin,
                                                      const std::filesystem::path& journalSocket)
{
    if (target == "journal")
        return journalForwarder(journalSocket, std::move(origin));
    if (target.starts_with("file:"))
        return fileForwarder(std::filesystem::path(target.substr(5)), std::move(origin));
    return Error(ErrorCode::InvalidArgument,
                 fmt::format("'{}' is not an audit forward target; give journal or "
                             "file:/ABSOLUTE/PATH.",
                             target));
}

ForwardCheck checkForwarded(std::string_view forwarded, std::string_view bundleText,
                            const VerifyOptions& options)
{
    ForwardCheck check;
    VerifyOptions verifyOptions = options;
    verifyOptions.keepEntries = false;
    const auto report = verifyBundle(bundleText, verifyOptions);
    if (!report.ok()) {
        check.errors.push_back("The bundle does not verify: " + report.errors.front());
        return check;
    }
    auto bundle = parseBundle(bundleText);
    if (!bundle) {
        check.errors.push_back("The bundle does not parse: " + bundle.error().message());
        return check;
    }
    std::map<std::uint64_t, Hash> signedLeaves;
    for (const auto& entry : bundle->entries)
        if (entry.headSize)
            signedLeaves.emplace(entry.sequence, leafHash(entry.bytes));

    std::map<std::uint64_t, Hash> seen;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> declared;
    const auto fail = [&](std::size_t number, const std::string& what) {
        check.errors.push_back(fmt::format("Line {} of the forwarded copy {}.", number, what));
    };
    std::size_t number = 0;
    std::size_t start = 0;
    while (start < forwarded.size()) {
        auto end = forwarded.find('\n', start);
        if (end == std::string_view::npos)
            end = forwarded.size();
        const auto text = forwarded.substr(start, end - start);
        start = end + 1;
        ++number;
        if (text.empty())
            continue;
        if (text.size() > kMaxForwardedLine) {
            fail(number, "is longer than any entry's line");
            continue;
        }
        std::string why;
        auto line = readLine(text, why);
        if (!line) {
            fail(number, "is not a forwarded entry: " + why);
            continue;
        }
        ++check.lines;
        // A line of another log, a gap line too, stands for nothing of this one.
        if (line->summary.value("origin", std::string()) != bundle->origin) {
            fail(number, "comes from another log than the bundle's");
            continue;
        }
        if (line->type == "gap") {
            declared.emplace_back(line->first, line->last);
            continue;
        }
        const Hash leaf = leafHash(line->bytes);
        if (toHex(leaf) != line->leafHashHex) {
            fail(number, "has a leaf hash that is not its entry's");
            continue;
        }
        auto entry = decodeEntry(line->bytes);
        if (!entry) {
            fail(number, "holds an entry that does not decode: " + entry.error().message());
            continue;
        }
        if (entry->sequence != line->sequence) {
            fail(number, "names another sequence number than its entry's");
            continue;
        }
        const auto summary = summaryOf(*entry);
        for (const auto& [name, value] : summary.items())
            if (!line->summary.contains(name) || line->summary[name] != value) {
                fail(number, fmt::format("says {} differently from its entry's bytes", name));
                break;
            }
        if (auto earlier = seen.find(entry->sequence); earlier != seen.end()) {
            if (earlier->second != leaf)
                fail(number,
                     fmt::format("holds another entry {} than an earlier line", entry->sequence));
            continue;
        }
        if (entry->sequence > 0)
            if (auto before = seen.find(entry->sequence - 1);
                before != seen.end() && before->second != entry->previousLeafHash)
                fail(number, "does not chain to the entry before it");
        seen.emplace(entry->sequence, leaf);
        if (auto inBundle = signedLeaves.find(entry->sequence); inBundle != signedLeaves.end()) {
            if (inBundle->second != leaf)
                fail(number, fmt::format("holds entry {} with other bytes than the signed log's",
                                         entry->sequence));
            else
                ++check.entriesMatched;
        } else {
            ++check.entriesBeyondBundle;
        }
    }
    if (seen.empty())
        return check;
    check.firstSequence = seen.begin()->first;
    check.lastSequence = seen.rbegin()->first;
    const auto isDeclared = [&](std::uint64_t first, std::uint64_t last) {
        return std::any_of(declared.begin(), declared.end(), [&](const auto& gap) {
            return gap.first <= first && last <= gap.second;
        });
    };
    // What the signed log holds after the copy's last line was not forwarded (yet): the copy
    // is incomplete, which is not tampering (forwarding may have been turned off).
    if (auto after = signedLeaves.upper_bound(*check.lastSequence); after != signedLeaves.end())
        check.gaps.emplace_back(after->first, signedLeaves.rbegin()->first);
    std::uint64_t expected = *check.firstSequence;
    for (const auto& [sequence, leaf] : seen) {
        if (sequence > expected) {
            check.gaps.emplace_back(expected, sequence - 1);
            if (!isDeclared(expected, sequence - 1))
                check.errors.push_back(fmt::format(
                    "Entries {} to {} are missing from the forwarded copy and no gap line "
                    "stands for them: lines were removed.",
                    expected, sequence - 1));
        }
        expected = sequence + 1;
    }
    std::sort(check.gaps.begin(), check.gaps.end());
    return check;
}

}  // namespace sealtrain::audit
