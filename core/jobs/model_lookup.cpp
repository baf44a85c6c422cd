// A model reference as a caller or a spec writes it (jobs/model_lookup.h).
#include "sealtrain/core/jobs/model_lookup.h"

#include "sealtrain/core/access/permissions.h"

#include <charconv>
#include <system_error>

namespace sealtrain::core {

Result<ModelReference> parseModelReference(std::string_view text)
{
    ModelReference reference;
    const auto at = text.find('@');
    reference.name = std::string(text.substr(0, at));
    SEALTRAIN_TRY(requireValidName("model", reference.name));
    if (at == std::string_view::npos)
        return reference;
    const std::string_view after = text.substr(at + 1);
    std::int64_t version = 0;
    const auto [end, failed] = std::from_chars(after.data(), after.data() + after.size(), version);
    if (failed == std::errc() && end == after.data() + after.size()) {
        if (version < 1)
            return Error(ErrorCode::InvalidArgument,
                         "A model version is a number from 1; name one 'sealtrainctl model show' "
                         "lists.");
        reference.version = version;
        return reference;
    }
    reference.alias = std::string(after);
    SEALTRAIN_TRY(requireValidName("alias", reference.alias));
    return reference;
}

}  // namespace sealtrain::core
