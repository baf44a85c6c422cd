// What the key release needs of the data directory (keys/key_vault.h).
#include "sealtrain/core/keys/key_vault.h"

#include "sealtrain/core/store/data_layout.h"
#include "sealtrain/crypto/keyring.h"

#include <string>

namespace sealtrain::core {

std::filesystem::path KeyVault::datasetsRoot() const
{
    return root / std::string(datadir::kDatasets);
}

crypto::KekResolver datasetsResolver(const crypto::Keyring& keyring)
{
    return [&keyring](const std::string& id, std::uint32_t version) -> Result<const crypto::Kek*> {
        if (id != datadir::kDatasetsKekId)
            return Error(ErrorCode::Integrity,
                         "A shard is sealed under the '" + id
                             + "' key rather than the datasets key; restore the dataset from a "
                               "trusted copy.");
        return keyring.findKek(id, version);
    };
}

std::vector<const crypto::Kek*> usableKeks(const crypto::Keyring& keyring, std::string_view id)
{
    std::vector<const crypto::Kek*> keks;
    for (const auto& info : keyring.list()) {
        if (info.id != id || info.state == crypto::KekState::Retired)
            continue;
        if (auto kek = keyring.findKek(info.id, info.version); kek)
            keks.push_back(*kek);
    }
    return keks;
}

}  // namespace sealtrain::core
