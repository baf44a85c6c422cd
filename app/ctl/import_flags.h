// The options of `sealtrainctl dataset import` (an upload to sealtrain-control): the files, their
// format and screening, the classification, and the report file.
#pragma once

#include "commands.h"

#include "sealtrain/base/progress.h"
#include "sealtrain/base/result.h"

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::ctl {

struct ImportFlags {
    std::string name;
    std::string format = "text-files";
    std::string field;
    std::string classification = "internal";
    std::string policy = "skip";
    bool redactPii = false;
    std::size_t maxRecordBytes = std::size_t{1} << 20U;
    std::uint32_t validationBasisPoints = 100;
    std::uint64_t tokensPerShard = std::uint64_t{1} << 22U;
    std::string vocab;
    std::string merges;
    std::string reportFile;
    std::string progress = "auto";
    std::vector<std::string> inputs;
};

// Declares the flags and the INPUT arguments on `command`.
void addImportFlags(CLI::App* command, ImportFlags& flags);

// Progress of an upload on standard error ("upload … files"), drawn in place when `bar`; and
// the callback the client library calls with the bytes sent, which feeds it when there is one.
[[nodiscard]] ProgressReporter uploadReporter(const CommandRegistry& registry, bool bar);
[[nodiscard]] std::function<void(std::uint64_t sent, std::uint64_t total)>
progressFeed(std::optional<ProgressReporter>& progress, std::uint64_t items);

// Whether progress is drawn as a bar (--progress bar, or auto on a terminal) rather than lines.
[[nodiscard]] bool progressAsBar(const CommandRegistry& registry, const ImportFlags& flags);

// Writes the import report (JSON) to `path` (0600); the dataset exists already, which a failure
// says.
[[nodiscard]] Result<void> writeImportReport(const std::string& path, const std::string& json);

}  // namespace sealtrain::ctl
