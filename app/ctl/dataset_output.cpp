// How sealtrainctl shows one dataset (dataset_output.h).
#include "dataset_output.h"

#include "sealtrain/base/encoding.h"

#include <fmt/format.h>

#include <ostream>

namespace sealtrain::ctl {
namespace {

nlohmann::json splitJson(const api::SplitCounts& split)
{
    return {{"records", split.records}, {"tokens", split.tokens}, {"shards", split.shards}};
}

}  // namespace

nlohmann::json describeDataset(const api::DatasetDetails& details)
{
    const api::DatasetSummary& info = details.dataset;
    nlohmann::json value{{"id", info.id},
                         {"name", info.name},
                         {"version", info.version},
                         {"parent", details.parent.empty() ? nlohmann::json(nullptr)
                                                           : nlohmann::json(details.parent)},
                         {"classification", info.classification},
                         {"creator", details.creator},
                         {"records", info.records},
                         {"tokens", info.tokens},
                         {"signer", details.signer},
                         {"created", toRfc3339(details.createdUnix)},
                         {"readers", details.readers}};
    if (const auto& manifest = details.manifest) {
        value["tokenizer"] = manifest->tokenizer;
        value["input_format"] = manifest->inputFormat;
        value["train"] = splitJson(manifest->train);
        value["validation"] = splitJson(manifest->validation);
        value["counts"] = manifest->counts;
        value["sources"] = manifest->sources;
    }
    return value;
}

void printDescription(std::ostream& out, const nlohmann::json& description, bool json)
{
    if (json) {
        out << description.dump(2) << '\n';
        return;
    }
    for (const auto& [key, item] : description.items())
        out << fmt::format("{:<15} {}\n", key + ":",
                           item.is_string() ? item.get<std::string>() : item.dump());
}

}  // namespace sealtrain::ctl
