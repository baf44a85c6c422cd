// A small audit log for tests: an in-memory store, a fixed signing key and audit key, and a
// clock the test moves by hand.
#pragma once

#include "sealtrain/audit/audit_log.h"
#include "sealtrain/audit/memory_store.h"
#include "sealtrain/crypto/signing.h"

#include <QtTest/QtTest>

#include <memory>
#include <string>

namespace sealtrain::testing {

class ManualClock final : public audit::Clock {
public:
    [[nodiscard]] std::chrono::system_clock::time_point now() const override { return now_; }
    void advance(std::chrono::seconds by) { now_ += by; }

private:
    // 2026-11-30T09:00:00Z
    std::chrono::system_clock::time_point now_{std::chrono::seconds{1796029200}};
};

inline crypto::SigningKey signingKeyFromByte(std::uint8_t byte)
{
    std::vector<std::uint8_t> seed(32, byte);
    auto secret = crypto::SecretBytes::fromBytes(seed);
    return std::move(crypto::SigningKey::fromSeed(*secret).value());
}

inline audit::AuditKey testAuditKey()
{
    std::vector<std::uint8_t> bytes(32, 0x5a);
    return std::move(
        audit::AuditKey::create(crypto::SecretBytes::fromBytes(bytes).value(), "audit-hmac-test")
            .value());
}

inline audit::EntryDraft draftNumber(int i)
{
    audit::EntryDraft draft;
    const char* users[] = {"alice", "bob", "carol"};
    const char* actions[] = {"dataset.import", "job.submit", "job.approve", "user.login"};
    draft.actor = {audit::ActorKind::User, users[i % 3], "session-" + std::to_string(i % 5),
                   "password+totp"};
    draft.action = actions[i % 4];
    draft.target = {i % 4 == 0 ? "dataset" : "job", "id-" + std::to_string(i)};
    if (i % 7 == 3) {
        draft.outcome = audit::Outcome::Denied;
        draft.reason = "separation of duties: the submitter can not approve";
    }
    draft.requestId = "req-" + std::to_string(1000 + i);
    if (draft.action == "job.approve")
        draft.approvalIds = {"approval-" + std::to_string(i)};
    draft.details = {audit::textDetail("note", "entry number " + std::to_string(i))};
    draft.sensitive = {{"file", "/data/patients-" + std::to_string(i % 3) + ".csv"}};
    return draft;
}

struct TestLog {
    explicit TestLog(std::uint8_t keyByte = 1, audit::HeadPolicy policy = {0, {}, {}},
                     std::optional<std::filesystem::path> witness = std::nullopt,
                     audit::EntryForwarder* forwarder = nullptr)
        : signingKey(signingKeyFromByte(keyByte))
        , auditKey(testAuditKey())
    {
        audit::LogOptions options{"sealtrain.test/audit", policy, std::move(witness), forwarder};
        auto opened = audit::AuditLog::open(store, signingKey, &auditKey, clock, options);
        if (!opened)
            qFatal("%s", opened.error().message().c_str());
        log = std::move(*opened);
    }

    // Appends `count` entries, one transaction each, with a head every `headEvery` entries.
    void append(int count, int headEvery = 0)
    {
        for (int i = 0; i < count; ++i) {
            auto transaction = store.begin();
            auto sequence = log->append(*transaction, draftNumber(next));
            if (!sequence)
                qFatal("%s", sequence.error().message().c_str());
            transaction->commit();
            ++next;
            clock.advance(std::chrono::seconds{1});
            if (headEvery != 0 && next % headEvery == 0 && !log->signHead())
                qFatal("signing a head failed");
        }
    }

    ManualClock clock;
    audit::MemoryStore store;
    crypto::SigningKey signingKey;
    audit::AuditKey auditKey;
    std::unique_ptr<audit::AuditLog> log;
    int next = 0;
};

}  // namespace sealtrain::testing
