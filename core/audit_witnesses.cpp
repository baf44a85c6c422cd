// The data directory's witnesses outside itself (audit_witnesses.h).
#include "audit_witnesses.h"

#include "sealtrain/audit/entry.h"
#include "sealtrain/audit/tpm_counter_witness.h"
#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/database.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <system_error>

namespace sealtrain::core::internal {
namespace {

constexpr std::string_view kFile = "file:";
constexpr std::string_view kTpm = "tpm:";

Result<std::unique_ptr<audit::HeadWitness>> makeWitness(std::string_view location,
                                                        std::int64_t base)
{
    if (location.starts_with(kFile))
        return std::unique_ptr<audit::HeadWitness>(
            std::make_unique<audit::FileWitness>(std::string(location.substr(kFile.size()))));
    auto where = audit::parseTpmCounterLocation(location.substr(kTpm.size()));
    if (!where)
        return where.error();
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

Result<Witnesses> Witnesses::recorded(const Database& database)
{
    Witnesses witnesses;
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
                           auto witness = makeWitness(row.text(0), row.integer(1));
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

Result<void> Witnesses::settle(Database& database, ControlPlane& plane,
                               const std::vector<std::string>& configured, bool acceptLoss,
                               std::int64_t nowUnix)
{
    for (const auto& lost : plane.auditLog().lostWitnesses())
        SEALTRAIN_TRY(reset(database, plane, lost, nowUnix));
    for (const auto& location : configured) {
        const bool known = std::any_of(kept_.begin(), kept_.end(),
                                       [&](const Kept& kept) { return kept.location == location; });
        if (!known)
            SEALTRAIN_TRY(attach(database, plane, location, acceptLoss, nowUnix));
    }
    return success();
}

// The loss was accepted: the witness starts again from the newest head the database holds. A
// file that held other heads is kept aside; a TPM counter is counted from its value now.
Result<void> Witnesses::reset(Database& database, ControlPlane& plane,
                              const audit::LostWitness& lost, std::int64_t nowUnix)
{
    auto& log = plane.auditLog();
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
    return plane.recordPlatformChange("audit.witness_reset", std::move(details), alongside);
}

// A witness the operator configured that the database does not record yet: it is given the
// newest head now, recorded, and from then on given every head and checked at every open.
Result<void> Witnesses::attach(Database& database, ControlPlane& plane, const std::string& location,
                               bool acceptLoss, std::int64_t nowUnix)
{
    auto& log = plane.auditLog();
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
    auto witness = makeWitness(location, base);
    if (!witness)
        return witness.error();
    // It joins the log first, so that a head signed as the entry commits reaches it too.
    log.addWitness(**witness);
    kept_.push_back(Kept{location, std::move(*witness)});
    return plane.recordPlatformChange("audit.witness_attach", std::move(details), [&] {
        return database.run(
            "INSERT INTO audit_witnesses (location, base, attached) VALUES (?, ?, ?)",
            {location, base, nowUnix});
    });
}

Result<std::vector<std::string>> detachRecordedWitnesses(Database& database, ControlPlane& plane)
{
    auto recorded = Witnesses::recorded(database);
    if (!recorded)
        return recorded.error();
    const auto locations = recorded->locations();
    for (const auto& location : locations)
        SEALTRAIN_TRY(plane.recordPlatformChange(
            "audit.witness_detach",
            {audit::textDetail("witness", location), audit::textDetail("reason", "restore")}, [&] {
                return database.run("DELETE FROM audit_witnesses WHERE location = ?", {location});
            }));
    return locations;
}

}  // namespace sealtrain::core::internal
