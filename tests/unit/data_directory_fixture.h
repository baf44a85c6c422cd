// Helpers for tests over a whole data directory (core/data_directory/data_directory.h): unlocking
// it with a passphrase, and reading back the entries of one action from its audit log.
#pragma once

#include "sealtrain/audit/entry.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/core/audit/queries.h"
#include "sealtrain/core/data_directory/data_directory.h"

#include <string>
#include <vector>

namespace sealtrain::testing {

inline core::KeyringUnlock unlockWith(const char* passphrase)
{
    core::KeyringUnlock unlock;
    unlock.passphrase = [passphrase] {
        return crypto::SecretBytes::fromBytes(asBytes(passphrase));
    };
    return unlock;
}

// Every entry of `action` in the directory's log, oldest first.
inline std::vector<audit::Entry> entriesWithAction(core::DataDirectory& directory,
                                                   const std::string& action)
{
    const auto& store = directory.controlPlane().auditLog().store();
    const auto stored = store.readEntries(0, store.entryCount().value()).value();
    std::vector<audit::Entry> decoded = core::decodeStoredEntries(stored).value();
    std::vector<audit::Entry> found;
    for (audit::Entry& e : decoded)
        if (e.action == action)
            found.push_back(std::move(e));
    return found;
}

}  // namespace sealtrain::testing
