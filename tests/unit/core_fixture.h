// Shared set-up for core/'s tests: a database key, a temporary database, a settable clock and a
// control plane over them, with Argon2id at its floor so the tests stay fast.
#pragma once

#include "sealtrain/audit/entry.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/identity/totp.h"
#include "sealtrain/core/store/database.h"
#include "sealtrain/core/store/sql_audit_store.h"
#include "sealtrain/dataset/tokenizer.h"

#include <QTemporaryDir>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

namespace sealtrain::testing {

class TestClock final : public audit::Clock {
public:
    [[nodiscard]] std::chrono::system_clock::time_point now() const override { return time; }
    void advance(std::chrono::seconds by) { time += by; }
    std::chrono::system_clock::time_point time{std::chrono::seconds{1'700'000'000}};
};

inline crypto::SecretBytes secret(std::string_view text)
{
    return crypto::SecretBytes::fromBytes(asBytes(text)).value();
}

inline crypto::SecretBytes databaseKey(std::uint8_t fill)
{
    auto key = crypto::SecretBytes::allocate(core::kDatabaseKeySize).value();
    for (auto& byte : key.mutableBytes())
        byte = fill;
    return key;
}

// A user made the way the platform makes them (issue #27): the admin creates the account and
// gets a one-time enrolment code; the user redeems it with a password of their own and receives
// their TOTP secret, which is returned.
inline Result<core::Enrollment> enrolUser(core::Identity& identity, const std::string& adminSession,
                                          const std::string& name,
                                          const crypto::SecretBytes& password)
{
    auto created = identity.createUser(adminSession, name);
    if (!created)
        return created.error();
    return identity.completeReset(name, created->enrolmentCode, password);
}

// The TOTP secret from an otpauth URI, to compute codes the way an authenticator app would.
inline crypto::SecretBytes totpSecretFromUri(const std::string& uri)
{
    const auto begin = uri.find("secret=") + 7;
    const auto end = uri.find('&', begin);
    const std::string encoded = uri.substr(begin, end - begin);
    std::vector<std::uint8_t> bytes;
    std::uint32_t buffer = 0;
    unsigned bits = 0;
    for (const char c : encoded) {
        const auto value =
            static_cast<std::uint32_t>(c >= 'A' && c <= 'Z' ? c - 'A' : c - '2' + 26);
        buffer = (buffer << 5U) | value;
        bits += 5;
        if (bits >= 8) {
            bytes.push_back(static_cast<std::uint8_t>(buffer >> (bits - 8)));
            bits -= 8;
        }
    }
    return crypto::SecretBytes::fromBytes(bytes).value();
}

struct ControlPlaneFixture {
    QTemporaryDir dir;
    TestClock clock;
    crypto::SigningKey signingKey = crypto::SigningKey::generate().value();
    std::unique_ptr<core::Database> database;
    std::unique_ptr<core::SqlAuditStore> store;
    std::unique_ptr<core::ControlPlane> plane;

    explicit ControlPlaneFixture(core::ControlPlaneOptions options = {})
    {
        database = core::Database::open(path(), databaseKey(7)).value();
        store = std::make_unique<core::SqlAuditStore>(*database);
        plane = core::ControlPlane::open(*database, *store, signingKey, nullptr, clock,
                                         std::move(options))
                    .value();
    }

    [[nodiscard]] std::string path() const { return (dir.path() + "/control.db").toStdString(); }

    // Signs in with the current TOTP code, moving the clock one step on so codes are not reused.
    std::string signIn(const std::string& name, const std::string& password, const std::string& uri)
    {
        clock.advance(core::kTotpStep);
        const auto code = core::totpCode(totpSecretFromUri(uri), core::totpStep(clock.now()));
        auto token = plane->identity().signIn(name, secret(password), code);
        return token ? *token : std::string();
    }

    // The newest entry of the audit log.
    [[nodiscard]] audit::Entry lastEntry() const
    {
        const auto size = plane->auditLog().size();
        const auto stored = store->readEntries(size - 1, 1).value();
        return audit::decodeEntry(stored.front().bytes).value();
    }
};

// Imports `text` (records separated by blank lines) as the dataset `name` of `classification`
// into <dir>/datasets, as the steward signed in with `session`; stops the test when it can not.
inline void importTextDataset(ControlPlaneFixture& t, const std::string& session,
                              const std::string& name, const std::string& classification,
                              const std::string& text, const crypto::Kek& kek)
{
    const std::filesystem::path dir = t.dir.path().toStdString();
    std::filesystem::create_directories(dir / "sources");
    std::ofstream(dir / "sources" / (name + ".txt")) << text;
    core::DatasetImportRequest request;
    request.name = name;
    request.datasetsRoot = dir / "datasets";
    request.options.inputs = {dir / "sources" / (name + ".txt")};
    request.options.format = dataset::InputFormat::TextRecords;
    request.options.classification = classification;
    dataset::ByteTokenizer tokenizer;
    if (!t.plane->datasets().importDataset(session, request, tokenizer, kek, t.signingKey).ok())
        qFatal("cannot import %s", name.c_str());
}

// The value of `entry`'s detail `name` (its text), or empty.
inline std::string detailOf(const audit::Entry& entry, const std::string& name)
{
    for (const auto& d : entry.details) {
        if (d.name == name)
            return std::string(d.value.begin(), d.value.end());
    }
    return {};
}

}  // namespace sealtrain::testing
