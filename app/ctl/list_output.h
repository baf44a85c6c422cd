// sealtrainctl's `list` commands and how they print what they list: one JSON array for --json
// (for scripts), else a table of a header line and one line an item.
#pragma once

#include "commands.h"
#include "local_platform.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace sealtrain::ctl {

// Prints `items` as a JSON array of toJson(item) when `json`, else `header` and then row(item)
// for each item (both already formatted, newline included).
template <typename Item, typename ToJson, typename ToRow>
void printList(std::ostream& out, bool json, const std::vector<Item>& items,
               const std::string& header, ToJson toJson, ToRow row)
{
    if (json) {
        nlohmann::json array = nlohmann::json::array();
        for (const Item& item : items)
            array.push_back(toJson(item));
        out << array.dump(2) << '\n';
        return;
    }
    out << header;
    for (const Item& item : items)
        out << row(item);
}

// Adds `list` to `group`: as the signed-in user, fetch(controlPlane, session) printed with
// printList (--json for JSON).
template <typename Fetch, typename ToJson, typename ToRow>
CLI::App* addListCommand(CLI::App* group, CommandRegistry& registry, const std::string& description,
                         Fetch fetch, std::string header, ToJson toJson, ToRow row)
{
    struct Options {
        SignedInOptions signedIn;
        bool json = false;
    };
    auto options = std::make_shared<Options>();
    auto* command = group->add_subcommand("list", description);
    options->signedIn.addTo(command);
    command->add_flag("--json", options->json, "Print JSON for scripts");
    registry.onRun(command, [options, fetch, header, toJson, row, &registry] {
        return runSignedInQuery(registry, options->signedIn, fetch, [&](const auto& items) {
            printList(registry.out(), options->json, items, header, toJson, row);
            return success();
        });
    });
    return command;
}

}  // namespace sealtrain::ctl
