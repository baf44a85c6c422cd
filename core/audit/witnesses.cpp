// The data directory's witnesses outside itself (audit/witnesses.h).
#include "audit/witnesses.h"

#include "sealtrain/audit/entry.h"
#include "sealtrain/audit/tpm_counter_witness.h"
#include "sealtrain/core/store/database.h"
#include "sealtrain/core/store/platform_changes.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <system_error>

namespace sealtrain::core::internal {
namespace {

constexpr std::string_view kFile = "file:";
constexpr std::string_view kTpm = "tpm:";

Result<std::unique_ptr<audit::HeadWitness>>
makeWitness(std::string_view location, std::int64_t base,
            const std::shared_ptr<const crypto::SecretBytes>& tpmOwnerAuth)
{
    if (location.starts_with(kFile))
        return std::unique_ptr<audit::HeadWitness>(
            std::make_unique<audit::FileWitness>(std::string(location.substr(kFile.size()))));
    auto where = audit::parseTpmCounterLocation(location.substr(kTpm.size()));
    if (!where)
        return where.error();
    where->ownerAuth = tpmOwnerAuth;
    return std::unique_ptr<audit::HeadWitness>(
        std::make_unique<audit::TpmCounterWitness>(std::move(*where), base));
}

// Moves a witness file that holds heads this directory cannot stand behind out of the way,
// keeping it (it is the evidence of what was lost); returns where it went, or "none".
Result<std::string> keepAside(const std::filesystem::path& file, std::int64_t nowUnix)
{
    std::error_code ec;
    if (!std::filesystem::exists(file, ec))
        return std::string("none");
    auto aside = file;
    aside += fmt::format(".lost-{}", nowUnix);
    std::filesystem::rename(file, aside, ec);
    if (ec)
        return Error(ErrorCode::Io, fmt::format("Cannot move the witness file '{}' aside to "
                                                "'{}' ({}); check that its folder is writable.",
                                                file.string(), aside.string(), ec.message()));
    return aside.string();
}

// What a failed check found, for the reset's entry (witness.h's codes).
std::string found(const Error& why)
{
    return why.reasonCode().empty() ? std::string("witness_unreadable")
                                    : std::string(why.reasonCode());
}

}  // namespace

Result<std::string> normaliseWitnessLocation(std::string_view location,
                                             const std::filesystem::path& dataDir)
{
    if (location.starts_with(kTpm)) {
        auto where = audit::parseTpmCounterLocation(location.substr(kTpm.size()));
        if (!where)
            return where.error();
        return std::string(kTpm) + audit::formatTpmCounterLocation(*where);
    }
    if (!location.starts_with(kFile))
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The audit witness '{}' is neither file:/ABSOLUTE/PATH nor "
                                 "tpm:0xINDEX; name one of the two.",
                                 location));
    const std::filesystem::path file(location.substr(kFile.size()));
    if (!file.is_absolute() || file.filename().empty())
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The audit witness file '{}' is not an absolute path to a file; "
                                 "name one on another file system or host.",
                                 file.string()));
    const auto normal = file.lexically_normal();
    std::error_code ec;
    const auto directory = std::filesystem::weakly_canonical(dataDir, ec).lexically_normal();
    const auto parent = std::filesystem::weakly_canonical(normal.parent_path(), ec);
    const auto relative = parent.lexically_relative(directory);
    if (!ec && !relative.empty() && *relative.begin() != "..")
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The audit witness file '{}' lies inside the data directory, "
                                 "which would roll it back with the directory; name one on "
                                 "another file system or host.",
                                 normal.string()));
    return std::string(kFile) + normal.string();
}

Result<std::shared_ptr<const crypto::SecretBytes>>
readTpmOwnerAuth(const std::filesystem::path& file)
{
    const auto cannot = [&](const std::string& why) {
        return Error(ErrorCode::Io,
                     fmt::format("Cannot read the TPM owner password file '{}' ({}); check that it "
                                 "exists and that the control plane's account may read it.",
                                 file.string(), why));
    };
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return cannot(std::strerror(errno));
    struct stat status {};
    if (::fstat(fd, &status) != 0) {
        const int saved = errno;
        ::close(fd);
        return cannot(std::strerror(saved));
    }
    if ((status.st_mode & (S_IRWXG | S_IRWXO)) != 0 || !S_ISREG(status.st_mode)) {
        ::close(fd);
        return Error(ErrorCode::PermissionDenied,
                     fmt::format("The TPM owner password file '{}' is not a file readable by its "
                                 "owner alone; make it so (chmod 600).",
                                 file.string()));
    }
    // 64 bytes at most, and a newline.
    constexpr std::size_t kMost = 65;
    auto secret = crypto::SecretBytes::allocate(kMost + 1);
    if (!secret) {
        ::close(fd);
        return secret.error();
    }
    std::size_t length = 0;
    for (;;) {
        const ssize_t got =
            ::read(fd, secret->mutableBytes().data() + length, secret->size() - length);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            const int saved = errno;
            ::close(fd);
            return cannot(std::strerror(saved));
        }
        if (got == 0 || (length += static_cast<std::size_t>(got)) == secret->size())
            break;
    }
    ::close(fd);
    if (length > 0 && secret->bytes()[length - 1] == '\n')
        --length;
    if (length > 64)
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The TPM owner password in '{}' is longer than the 64 bytes a "
                                 "TPM takes; give the one its administrator set.",
                                 file.string()));
    auto exact = crypto::SecretBytes::fromBytes(secret->bytes().first(length));
    if (!exact)
        return exact.error();
    return std::make_shared<const crypto::SecretBytes>(std::move(*exact));
}

Result<Witnesses> Witnesses::recorded(const Database& database,
                                      std::shared_ptr<const crypto::SecretBytes> tpmOwnerAuth)
{
    Witnesses witnesses;
    witnesses.tpmOwnerAuth_ = std::move(tpmOwnerAuth);
    // A database from before schema 18 (migrated as the control plane opens) records none.
    auto table = database.exists(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit_witnesses'", {});
    if (!table)
        return table.error();
    if (!*table)
        return witnesses;
    std::optional<Error> failed;
    auto read =
        database.query("SELECT location, base FROM audit_witnesses ORDER BY attached, location", {},
                       [&](const Statement& row) {
                           auto witness =
                               makeWitness(row.text(0), row.integer(1), witnesses.tpmOwnerAuth_);
                           if (!witness) {
                               if (!failed)
                                   failed = witness.error().withContext(
                                       fmt::format("The recorded audit witness '{}'", row.text(0)));
                               return;
                           }
                           witnesses.kept_.push_back(Kept{row.text(0), std::move(*witness)});
                       });
    if (!read)
        return read.error();
    if (failed)
        return *failed;
    return witnesses;
}

std::vector<audit::HeadWitness*> Witnesses::forLog() const
{
    std::vector<audit::HeadWitness*> all;
    for (const auto& kept : kept_)
        all.push_back(kept.witness.get());
    return all;
}

std::vector<std::string> Witnesses::locations() const
{
    std::vector<std::string> all;
    for (const auto& kept : kept_)
        all.push_back(kept.location);
    return all;
}

Result<void> Witnesses::settle(Database& database, const PlatformChanges& changes,
                               const std::vector<std::string>& configured, bool acceptLoss,
                               std::int64_t nowUnix, const std::vector<std::string>& detached)
{
    for (const auto& location : detached)
        if (std::find(configured.begin(), configured.end(), location) != configured.end())
            return Error(ErrorCode::InvalidArgument,
                         fmt::format("The audit witness '{}' is both named to keep and to "
                                     "detach; name it in one of --audit-witness or "
                                     "--detach-audit-witness.",
                                     location));
    for (const auto& lost : changes.auditLog().lostWitnesses())
        SEALTRAIN_TRY(reset(database, changes, lost, nowUnix));
    for (const auto& location : configured) {
        const bool known = std::any_of(kept_.begin(), kept_.end(),
                                       [&](const Kept& kept) { return kept.location == location; });
        if (!known)
            SEALTRAIN_TRY(attach(database, changes, location, acceptLoss, nowUnix));
    }
    for (const auto& location : detached)
        SEALTRAIN_TRY(detach(database, changes, location));
    return success();
}

// The operator detaches a recorded witness that agreed with the log at this open: it is forgotten,
// audited, and no longer given heads or checked.
Result<void> Witnesses::detach(Database& database, const PlatformChanges& changes,
                               const std::string& location)
{
    const auto kept = std::find_if(kept_.begin(), kept_.end(),
                                   [&](const Kept& k) { return k.location == location; });
    if (kept == kept_.end())
        return Error(ErrorCode::NotFound,
                     fmt::format("The audit witness '{}' is not one this data directory records, "
                                 "so there is nothing to detach; 'sealtrainctl doctor' lists "
                                 "the witnesses it checks.",
                                 location));
    auto& log = changes.auditLog();
    SEALTRAIN_TRY(changes.record(
        "audit.witness_detach",
        {audit::textDetail("witness", location), audit::textDetail("reason", "operator"),
         audit::textDetail("heads", std::to_string(log.storedHeads()))},
        [&] {
            return database.run("DELETE FROM audit_witnesses WHERE location = ?", {location});
        }));
    log.removeWitness(*kept->witness);
    kept_.erase(kept);
    return success();
}

// The loss was accepted: the witness starts again from the newest head the database holds. A
// file that held other heads is kept aside; a TPM counter is counted from its value now.
Result<void> Witnesses::reset(Database& database, const PlatformChanges& changes,
                              const audit::LostWitness& lost, std::int64_t nowUnix)
{
    auto& log = changes.auditLog();
    auto newest = log.store().readNewestHead();
    if (!newest)
        return newest.error();
    std::vector<audit::Detail> details{
        audit::textDetail("witness", lost.witness->location()),
        audit::textDetail("found", found(lost.why)),
        audit::textDetail("heads", std::to_string(log.storedHeads())),
        audit::textDetail("entries", std::to_string(log.size()))};
    std::function<Result<void>()> alongside;
    if (auto* file = dynamic_cast<audit::FileWitness*>(lost.witness)) {
        auto aside = keepAside(file->file(), nowUnix);
        if (!aside)
            return aside.error();
        details.push_back(audit::textDetail("kept_aside", *aside));
        if (!newest->empty())
            SEALTRAIN_TRY(audit::appendWitness(file->file(), *newest));
    } else if (auto* counter = dynamic_cast<audit::TpmCounterWitness*>(lost.witness)) {
        auto value = audit::readTpmCounter(counter->where());
        if (!value && value.error().code() == ErrorCode::NotFound)
            value = audit::defineTpmCounter(counter->where());
        if (!value)
            return value.error();
        const std::int64_t base =
            static_cast<std::int64_t>(*value) - static_cast<std::int64_t>(log.storedHeads());
        details.push_back(audit::textDetail("previous_base", std::to_string(counter->base())));
        details.push_back(audit::textDetail("base", std::to_string(base)));
        counter->rebase(base);
        alongside = [&database, counter, base] {
            return database.run("UPDATE audit_witnesses SET base = ? WHERE location = ?",
                                {base, counter->location()});
        };
    }
    return changes.record("audit.witness_reset", std::move(details), alongside);
}

// A witness the operator configured that the database does not record yet: it is given the
// newest head now, recorded, and from then on given every head and checked at every open.
Result<void> Witnesses::attach(Database& database, const PlatformChanges& changes,
                               const std::string& location, bool acceptLoss, std::int64_t nowUnix)
{
    auto& log = changes.auditLog();
    auto newest = log.store().readNewestHead();
    if (!newest)
        return newest.error();
    std::int64_t base = 0;
    std::vector<audit::Detail> details{audit::textDetail("witness", location)};
    if (location.starts_with(kFile)) {
        const std::filesystem::path file(location.substr(kFile.size()));
        auto held = audit::readWitness(file);
        // A file that already holds heads is adopted when they all agree with this log (a
        // restore without loss, the same file named again); otherwise the directory is a copy
        // from before the witness was attached, or the file is another's.
        bool agrees = !held || held->empty();
        if (!agrees) {
            audit::FileWitness existing(file);
            agrees = existing.check({log.tree(), log.storedHeads(), log.verifier()}).ok();
            details.push_back(audit::textDetail("adopted", agrees ? "yes" : "no"));
        }
        if (!agrees) {
            if (!acceptLoss)
                return Error(ErrorCode::FailedPrecondition,
                             fmt::format("The witness file '{}' holds {} signed heads that this "
                                         "data directory does not record and its log does not "
                                         "agree with, so the directory is a copy from before "
                                         "the witness was attached or the file is another's; "
                                         "find out which, then start with "
                                         "--accept-witness-loss (audited).",
                                         file.string(), held->size()));
            auto aside = keepAside(file, nowUnix);
            if (!aside)
                return aside.error();
            details.push_back(audit::textDetail("kept_aside", *aside));
        }
        if (!newest->empty())
            SEALTRAIN_TRY(audit::appendWitness(file, *newest));
    } else {
        auto where = audit::parseTpmCounterLocation(location.substr(kTpm.size()));
        if (!where)
            return where.error();
        where->ownerAuth = tpmOwnerAuth_;
        auto value = audit::defineTpmCounter(*where);
        if (!value && value.error().code() == ErrorCode::AlreadyExists) {
            if (!acceptLoss)
                return value.error().withContext(
                    "The configured audit witness is not recorded by this data directory");
            value = audit::readTpmCounter(*where);
            details.push_back(audit::textDetail("adopted", "yes"));
        }
        if (!value)
            return value.error();
        base = static_cast<std::int64_t>(*value) - static_cast<std::int64_t>(log.storedHeads());
        details.push_back(audit::textDetail("base", std::to_string(base)));
    }
    details.push_back(audit::textDetail("heads", std::to_string(log.storedHeads())));
    auto witness = makeWitness(location, base, tpmOwnerAuth_);
    if (!witness)
        return witness.error();
    // It joins the log first, so that a head signed as the entry commits reaches it too.
    log.addWitness(**witness);
    kept_.push_back(Kept{location, std::move(*witness)});
    return changes.record("audit.witness_attach", std::move(details), [&] {
        return database.run(
            "INSERT INTO audit_witnesses (location, base, attached) VALUES (?, ?, ?)",
            {location, base, nowUnix});
    });
}

Result<std::vector<std::string>> detachRecordedWitnesses(Database& database,
                                                         const PlatformChanges& changes)
{
    auto recorded = Witnesses::recorded(database);
    if (!recorded)
        return recorded.error();
    const auto locations = recorded->locations();
    for (const auto& location : locations)
        SEALTRAIN_TRY(changes.record(
            "audit.witness_detach",
            {audit::textDetail("witness", location), audit::textDetail("reason", "restore")}, [&] {
                return database.run("DELETE FROM audit_witnesses WHERE location = ?", {location});
            }));
    return locations;
}

}  // namespace sealtrain::core::internal
